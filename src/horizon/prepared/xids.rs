//! Whether a prepared transaction has ended, by its FullTransactionId: the proc array while the
//! server runs, the commit log during recovery; an xid older than any still in progress has ended.

use pgrx::prelude::*;

/// Whether the transaction is older than any xid still in progress, from the next xid:
/// `Some(true)` it ended long ago, `None` it is recent enough to ask about. An xid not assigned
/// here yet (`>= next`) counts as not ended: nothing says it did.
fn by_age(full_xid: u64) -> Option<bool> {
    // SAFETY: reads the shared next-xid counter under its lock, as any backend does.
    let next = unsafe { pg_sys::ReadNextFullTransactionId() }.value;
    if full_xid >= next {
        Some(false)
    } else if next - full_xid >= 1 << 31 {
        Some(true)
    } else {
        None
    }
}

/// True while the transaction may still commit (a prepared transaction is, until COMMIT or
/// ROLLBACK PREPARED). Readers use it: the proc array, not the commit log, says when a commit
/// is visible.
pub(super) fn in_progress(full_xid: u64) -> bool {
    match by_age(full_xid) {
        Some(ended) => !ended,
        // SAFETY: a shared-memory lookup of the proc array, as any backend does.
        None => unsafe {
            pg_sys::TransactionIdIsInProgress(pg_sys::TransactionId::from_inner(full_xid as u32))
        },
    }
}

/// True when the transaction has ended for good. During recovery (replay makes holds; no reader
/// runs) the commit log says so, as replay writes it; otherwise [`in_progress`].
pub(super) fn ended(full_xid: u64) -> bool {
    // SAFETY: a plain read of the shared recovery state.
    if !unsafe { pg_sys::RecoveryInProgress() } {
        return !in_progress(full_xid);
    }
    by_age(full_xid).unwrap_or_else(|| {
        let xid = pg_sys::TransactionId::from_inner(full_xid as u32);
        // SAFETY: reads the commit log, as replay maintains it.
        unsafe { pg_sys::TransactionIdDidCommit(xid) || pg_sys::TransactionIdDidAbort(xid) }
    })
}

/// The FullTransactionId of a 32-bit xid not newer than `next` (what PostgreSQL's
/// FullTransactionIdFromAllowableAt does).
pub(super) fn widen(next: u64, xid: u32) -> u64 {
    let epoch = next >> 32;
    if xid > next as u32 && epoch > 0 {
        ((epoch - 1) << 32) | u64::from(xid)
    } else {
        (epoch << 32) | u64::from(xid)
    }
}

#[cfg(test)]
mod unit {
    use super::widen;

    #[test]
    fn an_xid_is_widened_into_the_epoch_it_was_assigned_in() {
        let next = (3u64 << 32) | 1000;
        assert_eq!(widen(next, 999), (3 << 32) | 999);
        assert_eq!(widen(next, 1000), (3 << 32) | 1000);
        assert_eq!(widen(next, 4_000_000_000), (2 << 32) | 4_000_000_000);
        assert_eq!(widen(500, 400), 400);
    }
}
