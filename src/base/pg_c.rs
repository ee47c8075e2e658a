//! The PostgreSQL C declarations pgrx 0.18 does not bind (or binds only behind a Rust wrapper
//! whose address or error handling differ), in one place. Each names the header it mirrors; the
//! signatures are the same on PostgreSQL 15-18. `SkipSupportData` exists from 18 on and its
//! layout is checked against the server's own header by `scripts/check-c-decls.sh`.

use core::ffi::{c_int, c_void};
use pgrx::pg_sys;

unsafe extern "C" {
    /// `access/twophase.h`: the `max_prepared_transactions` setting.
    pub static max_prepared_xacts: c_int;
}

unsafe extern "C-unwind" {
    /// `utils/elog.h`: sets the SQLSTATE of the error being built (bound by pgrx only privately;
    /// used for soft errors, PostgreSQL 16+).
    #[cfg(any(feature = "pg16", feature = "pg17", feature = "pg18"))]
    pub fn errcode(sqlerrcode: c_int) -> c_int;

    /// `utils/palloc.h`: the raw allocator. pgrx binds only a guarded wrapper; with
    /// `MCXT_ALLOC_NO_OOM` this returns NULL instead of raising, which the hand-written fast
    /// paths need (see [`alloc_no_raise`]).
    #[link_name = "MemoryContextAllocExtended"]
    fn memory_context_alloc_extended(
        context: pg_sys::MemoryContext,
        size: pg_sys::Size,
        flags: c_int,
    ) -> *mut c_void;

    /// `common/hashfn.h`.
    pub fn hash_bytes(k: *const u8, keylen: c_int) -> u32;
    /// `common/hashfn.h`.
    pub fn hash_bytes_extended(k: *const u8, keylen: c_int, seed: u64) -> u64;

    /// `utils/sortsupport.h`. pgrx binds it behind a wrapper, but tuplesort picks its fast path
    /// by comparing the comparator pointer with the real function's address.
    pub fn ssup_datum_unsigned_cmp(
        x: pg_sys::Datum,
        y: pg_sys::Datum,
        ssup: pg_sys::SortSupport,
    ) -> c_int;
}

/// `size` bytes in the call's memory context, or NULL when memory is short: what the
/// hand-written functions' fast paths allocate with, since they must not raise.
///
/// # Safety
/// Called inside a function call of a backend (CurrentMemoryContext is valid).
pub unsafe fn alloc_no_raise(size: usize) -> *mut u8 {
    // SAFETY: as the caller promises; with NO_OOM the allocator returns NULL instead of raising.
    unsafe {
        memory_context_alloc_extended(
            pg_sys::CurrentMemoryContext,
            size,
            pg_sys::MCXT_ALLOC_NO_OOM as c_int,
        )
        .cast::<u8>()
    }
}

/// `utils/skipsupport.h` (PostgreSQL 18+): `SkipSupportData`.
#[repr(C)]
pub struct SkipSupportData {
    pub low_elem: pg_sys::Datum,
    pub high_elem: pg_sys::Datum,
    pub decrement: Option<SkipSupportIncDec>,
    pub increment: Option<SkipSupportIncDec>,
}

/// `utils/skipsupport.h`: `SkipSupportIncDec`.
pub type SkipSupportIncDec = unsafe extern "C-unwind" fn(
    rel: pg_sys::Relation,
    existing: pg_sys::Datum,
    overflow: *mut bool,
) -> pg_sys::Datum;

// The mirror's layout is pinned at compile time to the numbers tests/c_decls/decls.c asserts
// for the C struct of each major's header (scripts/check-c-decls.sh): size, then the offsets of
// low_elem, high_elem, decrement, increment. Nothing of it is in the built library.
const _: () = {
    use core::mem::{offset_of, size_of};
    assert!(size_of::<SkipSupportData>() == 32);
    assert!(offset_of!(SkipSupportData, low_elem) == 0);
    assert!(offset_of!(SkipSupportData, high_elem) == 8);
    assert!(offset_of!(SkipSupportData, decrement) == 16);
    assert!(offset_of!(SkipSupportData, increment) == 24);
};
