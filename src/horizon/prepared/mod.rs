//! Prepared transactions' holds on the horizon. A prepared transaction outlives its backend, its
//! slot (src/horizon/slots.rs), a restart, a crash and a failover; its hold must too, exactly:
//! the lowest clock value it may have taken, whatever the wall clock did and whoever asks first.
//!
//! At `PRE_PREPARE` the transaction's lowest value becomes
//! 1. a hold in shared memory, keyed by its FullTransactionId;
//! 2. a state file `pg_hlculid/prepared.<xid>` in the data directory, fsync'd before PREPARE
//!    completes, as PostgreSQL keeps `pg_twophase/`: a restart or a crash reloads it (in the
//!    postmaster, before anyone can ask), and base backups copy it;
//! 3. a WAL record of hlculid's resource manager ([`wal::RMGR_ID`]), flushed with the PREPARE record
//!    that follows it: crash recovery and every standby replay it into the same hold and file, so
//!    a standby promoted with the primary's transactions still prepared holds the horizon for them.
//!
//! Each hold also keeps when its transaction made its first id (the slot's time), for the holders'
//! `lag`; a hold reloaded from its file at a start has none (0), and the view falls back on the
//! time of the PREPARE.
//!
//! A hold ends when its transaction is no longer in progress (COMMIT or ROLLBACK PREPARED, on
//! whichever server): a reader that finds it so clears it and its file under the exclusive lock,
//! never during recovery. FullTransactionIds make a hold older than the xid horizon count as
//! ended, so no reused 32-bit xid can revive it.
//!
//! One job a file: the holds in shared memory (`table`), their state files (`files`), the WAL
//! resource manager (`wal`), whether a transaction has ended (`xids`), and 0.4.0's floor file
//! carried over once (`legacy`). This module puts them together for the slots (src/horizon/slots.rs)
//! and the horizon's readers (src/horizon/server.rs).

mod files;
mod legacy;
mod table;
mod wal;
mod xids;

use pgrx::prelude::*;

pub use table::HoldValue;

/// Registers the shared memory and the resource manager; `_PG_init` calls it while preloading.
pub fn init() {
    table::init();
    wal::register();
}

/// At `PRE_PREPARE` of a transaction that may have taken values from `lowest` on, since the
/// TimestampTz `since`: its hold, made durable and logged before the PREPARE completes. A
/// transaction without an xid wrote nothing, so nothing of it can become visible: no hold. With
/// `max_prepared_transactions = 0` nothing is done: PostgreSQL refuses the PREPARE itself right
/// after, with its own message.
pub fn take(lowest: u64, since: i64) {
    if table::max_holds() == 0 {
        return;
    }
    // SAFETY: inside the transaction being prepared, which is still running.
    let full_xid = unsafe { pg_sys::GetTopFullTransactionIdIfAny() }.value;
    if full_xid == 0 {
        return;
    }
    table::put(full_xid, lowest, since);
    files::write_file(full_xid, lowest);
    wal::log(full_xid, lowest, since);
}

/// The holds of prepared transactions still in progress: (full xid, lowest value, since). Holds of
/// ended transactions are cleared here, with their files (not during recovery: the standby's
/// holds stay until the transactions' ends are replayed and a reader of the promoted server, or
/// replay needing room, clears them).
pub fn live() -> Vec<HoldValue> {
    let Some(h) = table::header() else {
        return Vec::new();
    };
    legacy::carry_over(h);
    table::live(h)
}
