//! The background worker that publishes this server's horizon: every `hlculid.horizon_interval`
//! it writes the server's row of `hlculid_horizons` in `hlculid.horizon_database`, so a
//! subscriber's watermark keeps moving while this server is idle, with no scheduler.

use crate::settings;
use pgrx::bgworkers::{BackgroundWorker, BackgroundWorkerBuilder, SignalWakeFlags};
use pgrx::prelude::*;
use std::time::Duration;

pub fn register() {
    BackgroundWorkerBuilder::new("hlculid horizon publisher")
        .set_type("hlculid")
        .set_library("hlculid")
        .set_function("hlculid_horizon_publisher_main")
        .enable_spi_access() // starts once recovery is over: a standby publishes nothing
        .set_restart_time(Some(Duration::from_secs(5)))
        .load();
}

fn reload_config() {
    // SAFETY: what a backend does on SIGHUP, in a process attached to shared memory.
    unsafe { pg_sys::ProcessConfigFile(pg_sys::GucContext::PGC_SIGHUP) };
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn hlculid_horizon_publisher_main(_arg: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGHUP | SignalWakeFlags::SIGTERM);
    // A worker connects to one database for its life: until one is named it only waits.
    let db = loop {
        if let Some(db) = settings::horizon_database() {
            break db;
        }
        if !BackgroundWorker::wait_latch(Some(Duration::from_secs(1))) {
            return;
        }
        if BackgroundWorker::sighup_received() {
            reload_config();
        }
    };
    BackgroundWorker::connect_worker_to_spi(Some(&db), None);
    log!("hlculid: publishing this server's horizon in database \"{db}\"");
    let mut missing_logged = false;
    loop {
        let interval = settings::horizon_interval_ms();
        if interval > 0 {
            let published = BackgroundWorker::transaction(publish);
            if !published && !missing_logged {
                log!("hlculid: extension hlculid 0.4.0 or later is not installed in database \"{db}\"; the horizon is published once it is");
            }
            missing_logged = !published;
        }
        let wait = if interval == 0 { 1000 } else { interval };
        if !BackgroundWorker::wait_latch(Some(Duration::from_millis(wait))) {
            break; // SIGTERM or postmaster death
        }
        if BackgroundWorker::sighup_received() {
            reload_config();
            if settings::horizon_database().as_deref() != Some(db.as_str()) {
                log!("hlculid: hlculid.horizon_database changed; the horizon publisher restarts");
                // SAFETY: ends this worker; the postmaster starts it again after its restart time.
                unsafe { pg_sys::proc_exit(1) };
            }
        }
    }
}

/// Writes the row through the extension's own function, in the extension's schema; false when
/// the extension (at 0.4.0 or later) is not installed in this database.
fn publish() -> bool {
    let function = Spi::get_one::<String>(
        "SELECT quote_ident(n.nspname) || '.hlculid_publish_horizon()' FROM pg_catalog.pg_extension e \
         JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace \
         WHERE e.extname = 'hlculid' \
           AND to_regprocedure(quote_ident(n.nspname) || '.hlculid_publish_horizon()') IS NOT NULL",
    )
    .ok()
    .flatten();
    match function {
        Some(f) => {
            Spi::run(&format!("SELECT {f}")).unwrap_or_else(|e| panic!("{e}"));
            true
        }
        None => false,
    }
}
