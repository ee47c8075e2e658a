//! The background worker that keeps the durable high-water mark ahead of the clock, so that
//! backends almost never wait for an fsync. It also logs, once per server start, which publisher
//! id the server uses and why.

use crate::base::errors::Condition;
use crate::base::settings::{self, PublisherSource};
use crate::clock::durable;
use crate::clock::shared;
use pgrx::bgworkers::{
    BackgroundWorker, BackgroundWorkerBuilder, BgWorkerStartTime, SignalWakeFlags,
};
use pgrx::prelude::*;
use std::time::Duration;

const TICK: Duration = Duration::from_millis(100);

pub fn register() {
    BackgroundWorkerBuilder::new("hlculid high-water mark writer")
        .set_type("hlculid")
        .set_library("hlculid")
        .set_function("hlculid_mark_writer_main")
        .enable_shmem_access(None)
        .set_start_time(BgWorkerStartTime::PostmasterStart)
        .set_restart_time(Some(Duration::from_secs(1)))
        .load();
}

fn log_publisher() {
    match settings::publisher_shown() {
        (_, PublisherSource::InvalidSetting) => {
            ereport!(
                PgLogLevel::WARNING,
                Condition::PublisherSettingInvalid.code(),
                format!("hlculid: hlculid.publisher_id is set to \"{}\", which is not a publisher id; no ids are issued until it is fixed", settings::publisher_invalid().unwrap_or_default()),
                "Set hlculid.publisher_id to a number from 0 to 65535 (or -1 to derive one) and restart the server."
            );
        }
        (id, PublisherSource::Setting) => {
            log!("hlculid: publisher id {id} (from hlculid.publisher_id)");
        }
        (id, PublisherSource::SystemIdentifier) => {
            ereport!(
                PgLogLevel::LOG,
                PgSqlErrorCode::ERRCODE_SUCCESSFUL_COMPLETION,
                format!("hlculid: hlculid.publisher_id is not set; using publisher id {id}, derived from the system identifier"),
                "Standbys and copies of a data directory share the system identifier and so this id, and derived ids of unrelated servers collide by chance (1% at 27 servers). Set hlculid.publisher_id to a value unique across your servers."
            );
        }
    }
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn hlculid_mark_writer_main(_arg: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGHUP | SignalWakeFlags::SIGTERM);
    log_publisher();
    let mut failing = false;
    loop {
        match durable::refresh() {
            Ok(()) if failing => {
                failing = false;
                log!("hlculid: the high-water mark file can be written again");
            }
            Ok(()) => {}
            // Once per outage: backends report each refused id themselves.
            Err(e) if !failing => {
                failing = true;
                ereport!(
                    PgLogLevel::WARNING,
                    Condition::MarkWriteFailed.code(),
                    format!("hlculid: could not write the high-water mark file: {e}"),
                    "No ids are issued once the current mark is used up; generation resumes by itself when the file can be written."
                );
            }
            Err(_) => {}
        }
        if !BackgroundWorker::wait_latch(Some(TICK)) {
            break; // SIGTERM or postmaster death
        }
        if BackgroundWorker::sighup_received() {
            // SAFETY: what a backend does on SIGHUP, in a process attached to shared memory.
            unsafe { pg_sys::ProcessConfigFile(pg_sys::GucContext::PGC_SIGHUP) };
            // The run-ahead bound is hlculid.max_clock_skew, one value for every backend.
            shared::clock().set_max_run_ahead(settings::max_clock_skew_ms());
        }
    }
}
