//! The background workers that publish this server's horizon: every `hlculid.horizon_interval`
//! the publisher writes the server's row of `hlculid.hlculid_horizons` in `hlculid.horizon_database`, so
//! a subscriber's watermark keeps moving while this server is idle, with no scheduler. A
//! launcher (connected to no database) starts the publisher, and starts it again when it ends.

use crate::base::errors::{Condition, UserError};
use crate::base::settings;
use pgrx::bgworkers::{
    BackgroundWorker, BackgroundWorkerBuilder, BackgroundWorkerStatus, DynamicBackgroundWorker,
    SignalWakeFlags,
};
use pgrx::pg_sys::panic::CaughtError;
use pgrx::prelude::*;
use std::time::{Duration, Instant};

pub fn register() {
    BackgroundWorkerBuilder::new("hlculid horizon launcher")
        .set_type("hlculid")
        .set_library("hlculid")
        .set_function("hlculid_horizon_launcher_main")
        .enable_spi_access() // starts once recovery is over: a standby publishes nothing
        .set_restart_time(Some(Duration::from_secs(5)))
        .load();
}

/// SIGTERM (pg_terminate_backend, a forced DROP DATABASE) or postmaster death. Exit code 1: a
/// launcher that exits with 0 is never restarted. At shutdown nothing restarts anyway.
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

/// What the publisher connects to: the database and role the settings name, by OID (the names
/// were looked up by the launcher, and a rename in between cannot redirect the publisher).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Target {
    database: pg_sys::Oid,
    role: pg_sys::Oid, // InvalidOid: the bootstrap superuser
}

impl Target {
    fn extra(self) -> String {
        format!("{} {}", u32::from(self.database), u32::from(self.role))
    }

    fn from_extra(extra: &str) -> Option<Target> {
        let mut parts = extra.split(' ').map(|p| p.parse::<u32>().ok());
        match (parts.next().flatten(), parts.next().flatten(), parts.next()) {
            (Some(d), Some(r), None) => Some(Target {
                database: d.into(),
                role: r.into(),
            }),
            _ => None,
        }
    }
}

/// Scans a shared catalog for the row whose name is `name`: by heap, as the autovacuum launcher
/// lists pg_database, since connected to no database the catalogs' indexes cannot be opened on a
/// cluster whose shared relcache file is not written yet.
fn scan_shared<T, R>(
    catalog: pg_sys::Oid,
    name: &str,
    row: impl Fn(&T) -> (&pg_sys::NameData, R),
) -> Option<R> {
    let mut found = None;
    // SAFETY: a catalog scan inside the caller's transaction, as get_database_list() does; each
    // tuple's struct is read while the scan holds it, and only copies leave the loop.
    unsafe {
        let rel = pg_sys::table_open(catalog, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        let scan = pg_sys::table_beginscan_catalog(rel, 0, std::ptr::null_mut());
        loop {
            let tuple = pg_sys::heap_getnext(scan, pg_sys::ScanDirection::ForwardScanDirection);
            if tuple.is_null() {
                break;
            }
            let (row_name, value) = row(&*pg_sys::heap_tuple_get_struct::<T>(tuple));
            if std::ffi::CStr::from_ptr(row_name.data.as_ptr()).to_bytes() == name.as_bytes() {
                found = Some(value);
                break;
            }
        }
        pg_sys::table_endscan(scan);
        pg_sys::table_close(rel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
    }
    found
}

/// The settings' database and role by OID, or the sentence to log when one cannot be used. Runs
/// in the launcher, connected to no database: pg_database and pg_authid are shared catalogs.
fn resolve(database: &str, role: Option<&str>) -> Result<Target, String> {
    BackgroundWorker::transaction(|| {
        let database = scan_shared(pg_sys::DatabaseRelationId, database, |d: &pg_sys::FormData_pg_database| {
            (&d.datname, d.oid)
        })
        .ok_or_else(|| {
            format!("database \"{database}\" named by hlculid.horizon_database does not exist; the horizon is published once it does")
        })?;
        let role = match role {
            None => pg_sys::InvalidOid,
            Some(r) => match scan_shared(
                pg_sys::AuthIdRelationId,
                r,
                |a: &pg_sys::FormData_pg_authid| (&a.rolname, (a.oid, a.rolcanlogin)),
            ) {
                Some((oid, true)) => oid,
                Some((_, false)) => {
                    return Err(format!("role \"{r}\" named by hlculid.horizon_role cannot log in; the horizon is published once it can (ALTER ROLE ... LOGIN)"));
                }
                None => {
                    return Err(format!("role \"{r}\" named by hlculid.horizon_role does not exist; the horizon is published once it does"));
                }
            },
        };
        Ok(Target { database, role })
    })
}

const FIRST_RETRY: Duration = Duration::from_secs(1);
const LAST_RETRY: Duration = Duration::from_secs(60);

/// The launcher: a worker connected to no database that starts the publisher (a dynamic worker)
/// in the database the settings name, and starts it again when it ends (terminated, its
/// database dropped, an error), after a wait that doubles up to a minute while it keeps failing.
/// A missing database or role is logged once, not at every retry.
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn hlculid_horizon_launcher_main(_arg: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGHUP | SignalWakeFlags::SIGTERM);
    BackgroundWorker::connect_worker_to_spi(None, None);
    let mut running: Option<(DynamicBackgroundWorker, Target, Instant)> = None;
    let (mut retry, mut next_try) = (FIRST_RETRY, Instant::now());
    let mut logged: Option<String> = None;
    loop {
        if let Some((worker, _, started)) = &running {
            if matches!(worker.pid(), Err(BackgroundWorkerStatus::Stopped)) {
                // ended: quickly again if it had run a while, later each time it keeps failing
                retry = if started.elapsed() > LAST_RETRY {
                    FIRST_RETRY
                } else {
                    (retry * 2).min(LAST_RETRY)
                };
                next_try = Instant::now() + retry;
                running = None;
            }
        }
        if running.is_none() && Instant::now() >= next_try {
            if let Some(database) = settings::horizon_database() {
                let role = settings::horizon_role();
                match resolve(&database, role.as_deref()).and_then(|t| Ok((launch(t)?, t))) {
                    Ok((worker, target)) => {
                        running = Some((worker, target, Instant::now()));
                        logged = None;
                    }
                    Err(problem) => {
                        if logged.as_deref() != Some(problem.as_str()) {
                            log!("hlculid: {problem}");
                            logged = Some(problem);
                        }
                        retry = (retry * 2).min(LAST_RETRY);
                        next_try = Instant::now() + retry;
                    }
                }
            }
        }
        if !BackgroundWorker::wait_latch(Some(Duration::from_secs(1))) {
            if let Some((worker, _, _)) = running.take() {
                worker.terminate();
            }
            stop();
        }
        if BackgroundWorker::sighup_received() {
            reload_config();
            // a changed database or role: the publisher restarts on the new one, now
            let wanted = settings::horizon_database()
                .map(|d| resolve(&d, settings::horizon_role().as_deref()));
            let changed = match (&running, &wanted) {
                (Some((_, target, _)), Some(Ok(now))) => target != now,
                (Some(_), _) => true,
                (None, _) => false,
            };
            if changed {
                log!("hlculid: hlculid.horizon_database or hlculid.horizon_role changed; the horizon publisher restarts");
                if let Some((worker, _, _)) = running.take() {
                    let _ = worker.terminate().wait_for_shutdown();
                }
            }
            (retry, next_try) = (FIRST_RETRY, Instant::now());
        }
    }
}

/// Starts the publisher for `target`; the error is the sentence to log.
fn launch(target: Target) -> Result<DynamicBackgroundWorker, String> {
    BackgroundWorkerBuilder::new("hlculid horizon publisher")
        .set_type("hlculid")
        .set_library("hlculid")
        .set_function("hlculid_horizon_publisher_main")
        .enable_spi_access()
        .set_restart_time(None) // the launcher starts it again
        .set_extra(&target.extra())
        // SAFETY: this process's pid, so the postmaster tells the launcher when the worker ends.
        .set_notify_pid(unsafe { pg_sys::MyProcPid })
        .load_dynamic()
        .map_err(|_| "no background worker slot is free for the horizon publisher (max_worker_processes); it is started once one is".to_string())
}

/// The publisher: connected to the launcher's database as its role, it writes this server's row
/// every `hlculid.horizon_interval` until it is terminated or the settings change. An error while
/// publishing (a missing grant, a lock timeout, a cancel) is one LOG line with its SQLSTATE, once
/// for as long as it repeats; the worker aborts that transaction and stays, trying again after
/// 1, 2, 4, ... up to 60 s (at once after a reload), and says so when it publishes again.
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn hlculid_horizon_publisher_main(_arg: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGHUP | SignalWakeFlags::SIGTERM);
    let Some(target) = Target::from_extra(BackgroundWorker::get_extra()) else {
        stop();
    };
    // SAFETY: connects this worker once, by the OIDs the launcher resolved; a database dropped
    // in between is a FATAL here, after which the launcher finds it missing and logs that once.
    unsafe { pg_sys::BackgroundWorkerInitializeConnectionByOid(target.database, target.role, 0) };
    pin_session();
    let db = BackgroundWorker::transaction(|| {
        // SAFETY: a catalog lookup of the database this backend is connected to, in a
        // transaction; the name is copied before the transaction's memory goes.
        unsafe { std::ffi::CStr::from_ptr(pg_sys::get_database_name(pg_sys::MyDatabaseId)) }
            .to_string_lossy()
            .into_owned()
    });
    log!("hlculid: publishing this server's horizon in database \"{db}\"");
    let mut missing_logged = false;
    let mut failure_logged: Option<String> = None; // until the next publish succeeds
    let mut retry = FIRST_RETRY;
    loop {
        let interval = settings::horizon_interval_ms();
        let mut wait = Duration::from_millis(if interval == 0 { 1000 } else { interval });
        if interval > 0 {
            match attempt() {
                Ok(published) => {
                    if !published && !missing_logged {
                        log!("hlculid: extension hlculid 0.4.0 or later is not installed in database \"{db}\"; the horizon is published once it is");
                    }
                    missing_logged = !published;
                    if failure_logged.take().is_some() {
                        log!("hlculid: publishing the horizon in database \"{db}\" works again");
                    }
                    retry = FIRST_RETRY;
                }
                Err(error) => {
                    let line = format!(
                        "hlculid: publishing the horizon in database \"{db}\" failed: {error}"
                    );
                    if failure_logged.as_deref() != Some(line.as_str()) {
                        log!("{line}");
                        failure_logged = Some(line);
                    }
                    wait = wait.max(retry);
                    retry = (retry * 2).min(LAST_RETRY);
                }
            }
        }
        if !BackgroundWorker::wait_latch(Some(wait)) {
            stop();
        }
        if BackgroundWorker::sighup_received() {
            reload_config(); // a changed database or role: the launcher restarts this worker
            retry = FIRST_RETRY; // a fix may come with the reload: try again now
        }
    }
}

/// One publishing transaction: whether the extension is installed (and so the row written), or
/// the error that ended the transaction as `SQLSTATE: message`. An error is caught here and not
/// reported: the transaction is aborted as the autovacuum worker does after a table's error
/// (interrupts held, AbortCurrentTransaction, the error state flushed), which releases its locks,
/// snapshot, SPI and user, and the interrupt holdoff counts are put back to what they were, as
/// a backend's main loop does after an error.
fn attempt() -> Result<bool, String> {
    // SAFETY: plain reads of this backend's interrupt holdoff counts.
    let held = unsafe {
        (
            pg_sys::InterruptHoldoffCount,
            pg_sys::QueryCancelHoldoffCount,
        )
    };
    PgTryBuilder::new(|| Ok(BackgroundWorker::transaction(publish)))
        .catch_others(move |caught| {
            let report = match &caught {
                CaughtError::PostgresError(r)
                | CaughtError::ErrorReport(r)
                | CaughtError::RustPanic { ereport: r, .. } => r,
            };
            let error = format!(
                "{}: {}",
                sqlstate(report.sql_error_code()),
                report.message().replace('\n', " ")
            );
            // SAFETY: pgrx caught the ERROR where PostgreSQL raised it (its error state copied
            // and flushed, the exception and error context stacks restored) and unwound the Rust
            // frames above; what PostgreSQL must undo is the transaction, in a worker whose
            // transaction block state is the one BackgroundWorker::transaction started.
            unsafe {
                pg_sys::InterruptHoldoffCount += 1; // HOLD_INTERRUPTS()
                pg_sys::AbortCurrentTransaction();
                pg_sys::FlushErrorState();
                (
                    pg_sys::InterruptHoldoffCount,
                    pg_sys::QueryCancelHoldoffCount,
                ) = held;
            }
            Err(error)
        })
        .execute()
}

/// The five characters of an error code, as PostgreSQL's `unpack_sql_state` spells them.
fn sqlstate(code: PgSqlErrorCode) -> String {
    let mut packed = code as i32 as u32;
    (0..5)
        .map(|_| {
            let c = char::from(b'0' + (packed & 0x3F) as u8);
            packed >>= 6;
            c
        })
        .collect()
}

/// The worker's session, whatever postgresql.conf or the database's settings say. It runs as
/// the bootstrap superuser in a database whose owner may own `public`: no name of its SQL may
/// resolve through a schema another role can write, so only `pg_catalog` is searched (and
/// `pg_temp` last, where it cannot shadow a function or operator), and every name below is
/// qualified as well. READ COMMITTED: the horizon it publishes refuses a snapshot older than it.
/// The database's owner may `ALTER DATABASE ... SET role` (and read-only transactions): the worker
/// stays the role it connected as, and writes.
fn pin_session() {
    for (name, value) in [
        (c"search_path", c"pg_catalog, pg_temp"),
        (c"default_transaction_isolation", c"read committed"),
        (c"role", c"none"),
        (c"default_transaction_read_only", c"off"),
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
/// the extension (at 0.4.0 or later) is not installed in this database. Connected as the
/// bootstrap superuser (no `hlculid.horizon_role`), the function runs as the extension's owner,
/// in a security-restricted operation (as VACUUM runs index functions as the table's owner);
/// connected as `hlculid.horizon_role`, as that role, which holds no more than its grants. The
/// function is found in pg_proc by the extension's schema: a lookup by name (`to_regprocedure`)
/// may be planned for every schema, and a role that is not a superuser may not look in pg_toast.
fn publish() -> bool {
    let found = Spi::get_two::<String, pg_sys::Oid>(
        "SELECT pg_catalog.quote_ident(n.nspname::pg_catalog.text) OPERATOR(pg_catalog.||) '.hlculid_publish_horizon()', \
                e.extowner \
         FROM pg_catalog.pg_extension e \
         JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace \
         WHERE e.extname OPERATOR(pg_catalog.=) 'hlculid'::pg_catalog.name \
           AND EXISTS (SELECT FROM pg_catalog.pg_proc p \
                       WHERE p.pronamespace OPERATOR(pg_catalog.=) e.extnamespace \
                         AND p.proname OPERATOR(pg_catalog.=) 'hlculid_publish_horizon'::pg_catalog.name \
                         AND p.pronargs OPERATOR(pg_catalog.=) 0::pg_catalog.int2)",
    );
    let (function, owner) = match found {
        Ok((Some(f), Some(owner))) => (f, owner),
        Ok(_) | Err(pgrx::spi::SpiError::InvalidPosition) => return false,
        Err(e) => UserError::new(Condition::Internal, format!("hlculid: {e}")).raise(),
    };
    let (mut user, mut context) = (pg_sys::Oid::INVALID, 0);
    // SAFETY: reads and sets this backend's current user, as PostgreSQL's maintenance commands
    // do; an error in between aborts the transaction, which restores the saved user itself.
    unsafe {
        pg_sys::GetUserIdAndSecContext(&mut user, &mut context);
        pg_sys::SetUserIdAndSecContext(
            if pg_sys::superuser() { owner } else { user },
            context
                | pg_sys::SECURITY_LOCAL_USERID_CHANGE as i32
                | pg_sys::SECURITY_RESTRICTED_OPERATION as i32,
        );
    }
    Spi::run(&format!("SELECT {function}"))
        .unwrap_or_else(|e| UserError::new(Condition::Internal, format!("hlculid: {e}")).raise());
    // SAFETY: as above: back to the worker's own user.
    unsafe { pg_sys::SetUserIdAndSecContext(user, context) };
    true
}
