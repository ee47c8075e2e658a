//! hlculid's custom WAL resource manager: one record kind, a hold of a transaction being
//! prepared, written before its PREPARE record and flushed with it. Crash recovery and every
//! standby replay it into the same hold and file, so a standby promoted with the primary's
//! transactions still prepared holds the horizon for them.

use super::{files, table};
use pgrx::prelude::*;
use std::ffi::CString;

/// hlculid's custom WAL resource manager id. Every server that replays WAL written by a server
/// with hlculid preloaded needs it preloaded too (docs/uninstall.md says how to stop using it).
pub const RMGR_ID: u8 = 173;
/// The one record kind: (full xid, lowest value, since) of a transaction being prepared; 0.5.0
/// wrote the first two fields only, and reads the first two of this one.
const XLOG_HOLD: u8 = 0x10;

#[repr(C)]
#[derive(Clone, Copy)]
struct Record {
    full_xid: u64,
    lowest: u64,
    since: i64,
}

/// 0.5.0's record: the first two fields.
const RECORD_0_5_LEN: usize = 16;

/// Registers the resource manager (`mod.rs`'s `init`, while preloading).
pub(super) fn register() {
    // SAFETY: _PG_init of a preloaded library runs once in the postmaster; the resource
    // manager's table lives for the life of the process (leaked), as RegisterCustomRmgr requires.
    unsafe {
        let rmgr = Box::leak(Box::new(pg_sys::RmgrData {
            rm_name: c"hlculid".as_ptr(),
            rm_redo: Some(redo),
            rm_desc: Some(desc),
            rm_identify: Some(identify),
            rm_startup: None,
            rm_cleanup: None,
            rm_mask: None,
            rm_decode: None,
        }));
        pg_sys::RegisterCustomRmgr(RMGR_ID, rmgr);
    }
}

/// Logs the hold of the transaction being prepared.
pub(super) fn log(full_xid: u64, lowest: u64, since: i64) {
    let rec = Record {
        full_xid,
        lowest,
        since,
    };
    // SAFETY: a WAL record of our registered resource manager, from a normal backend inside its
    // transaction; XLogInsert copies the registered data before returning. The PREPARE record
    // that follows is flushed before PREPARE returns, and this one with it.
    unsafe {
        pg_sys::XLogBeginInsert();
        pg_sys::XLogRegisterData(
            (&raw const rec).cast_mut().cast(),
            std::mem::size_of::<Record>() as _,
        );
        pg_sys::XLogInsert(RMGR_ID, XLOG_HOLD);
    }
}

/// The record of `record`, when it is one of ours (0.5.0's shorter record: `since` 0).
///
/// # Safety
/// `record` is the decoded record the startup process passes to a resource manager.
unsafe fn decode(record: *mut pg_sys::XLogReaderState) -> Option<Record> {
    // SAFETY: as the caller promises; main_data holds main_data_len bytes.
    unsafe {
        let r = (*record).record;
        if r.is_null()
            || (*r).header.xl_info & pg_sys::XLR_RMGR_INFO_MASK as u8 != XLOG_HOLD
            || ((*r).main_data_len as usize) < RECORD_0_5_LEN
        {
            return None;
        }
        let p = (*r).main_data.cast::<u8>();
        let since = if (*r).main_data_len as usize >= std::mem::size_of::<Record>() {
            std::ptr::read_unaligned(p.add(RECORD_0_5_LEN).cast::<i64>())
        } else {
            0
        };
        Some(Record {
            full_xid: std::ptr::read_unaligned(p.cast::<u64>()),
            lowest: std::ptr::read_unaligned(p.add(8).cast::<u64>()),
            since,
        })
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn redo(record: *mut pg_sys::XLogReaderState) {
    // SAFETY: called by the startup process with a decoded record of this resource manager.
    if let Some(rec) = unsafe { decode(record) } {
        table::put(rec.full_xid, rec.lowest, rec.since);
        files::write_file(rec.full_xid, rec.lowest);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn desc(buf: pg_sys::StringInfo, record: *mut pg_sys::XLogReaderState) {
    // SAFETY: as for redo; appends to the caller's buffer.
    unsafe {
        if let Some(rec) = decode(record) {
            let text = CString::new(format!(
                "full xid {} lowest {:016X} since {}",
                rec.full_xid, rec.lowest, rec.since
            ))
            .unwrap_or_default();
            pg_sys::appendStringInfoString(buf, text.as_ptr());
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn identify(info: u8) -> *const core::ffi::c_char {
    if info & pg_sys::XLR_RMGR_INFO_MASK as u8 == XLOG_HOLD {
        c"HOLD".as_ptr()
    } else {
        std::ptr::null()
    }
}
