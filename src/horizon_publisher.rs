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

/// SIGTERM (pg_terminate_backend, a forced DROP DATABASE) or postmaster death. Exit code 1, so
/// the postmaster starts the worker again after its restart time: a worker that exits with 0 is
/// never restarted, and the row would stop moving for good. At shutdown nothing restarts anyway.
#[allow(unreachable_code)] // proc_exit is `-> !` in some majors' bindings, `-> ()` in others
fn stop() -> ! {
    // SAFETY: ends this worker, as a FATAL would.
    unsafe { pg_sys::proc_exit(1) };
    unreachable!("proc_exit returned")
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
            stop();
        }
        if BackgroundWorker::sighup_received() {
            reload_config();
        }
    };
    BackgroundWorker::connect_worker_to_spi(Some(&db), None);
    pin_session();
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
            stop();
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

/// The worker's session, whatever postgresql.conf or the database's settings say. It runs as
/// the bootstrap superuser in a database whose owner may own `public`: no name of its SQL may
/// resolve through a schema another role can write, so only `pg_catalog` is searched (and
/// `pg_temp` last, where it cannot shadow a function or operator), and every name below is
/// qualified as well. READ COMMITTED: the horizon it publishes refuses a snapshot older than it.
fn pin_session() {
    for (name, value) in [
        (c"search_path", c"pg_catalog, pg_temp"),
        (c"default_transaction_isolation", c"read committed"),
    ] {
        // SAFETY: sets a GUC by its C name and value (NUL-terminated statics) in a backend
        // connected to its database; a bad value would raise, and these are fixed.
        unsafe {
            pg_sys::SetConfigOption(
                name.as_ptr(),
                value.as_ptr(),
                pg_sys::GucContext::PGC_SUSET,
                pg_sys::GucSource::PGC_S_SESSION,
            );
        }
    }
}

/// Writes the row through the extension's own function, in the extension's schema; false when
/// the extension (at 0.4.0 or later) is not installed in this database. The function runs as the
/// extension's owner, in a security-restricted operation (as VACUUM runs index functions as the
/// table's owner), not as the bootstrap superuser the worker connects as.
fn publish() -> bool {
    let found = Spi::get_two::<String, pg_sys::Oid>(
        "SELECT pg_catalog.quote_ident(n.nspname::pg_catalog.text) OPERATOR(pg_catalog.||) '.hlculid_publish_horizon()', \
                e.extowner \
         FROM pg_catalog.pg_extension e \
         JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace \
         WHERE e.extname OPERATOR(pg_catalog.=) 'hlculid'::pg_catalog.name \
           AND pg_catalog.to_regprocedure(pg_catalog.quote_ident(n.nspname::pg_catalog.text) \
                   OPERATOR(pg_catalog.||) '.hlculid_publish_horizon()') IS NOT NULL",
    );
    let (function, owner) = match found {
        Ok((Some(f), Some(owner))) => (f, owner),
        Ok(_) | Err(pgrx::spi::SpiError::InvalidPosition) => return false,
        Err(e) => panic!("{e}"),
    };
    let (mut user, mut context) = (pg_sys::Oid::INVALID, 0);
    // SAFETY: reads and sets this backend's current user, as PostgreSQL's maintenance commands
    // do; an error in between aborts the transaction, which restores the saved user itself.
    unsafe {
        pg_sys::GetUserIdAndSecContext(&mut user, &mut context);
        pg_sys::SetUserIdAndSecContext(
            owner,
            context
                | pg_sys::SECURITY_LOCAL_USERID_CHANGE as i32
                | pg_sys::SECURITY_RESTRICTED_OPERATION as i32,
        );
    }
    Spi::run(&format!("SELECT {function}")).unwrap_or_else(|e| panic!("{e}"));
    // SAFETY: as above: back to the worker's own user.
    unsafe { pg_sys::SetUserIdAndSecContext(user, context) };
    true
}
