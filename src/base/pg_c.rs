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

    /// `catalog/partition.h`: a partition's ancestors, nearest first (a new list).
    pub fn get_partition_ancestors(relid: pg_sys::Oid) -> *mut pg_sys::List;

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

/// `libpq-fe.h`: the client library, for the cluster horizon worker's connections to the other
/// nodes of a Citus cluster (src/horizon/cluster_worker.rs). Not linked: the worker loads
/// PostgreSQL's own `libpqwalreceiver` (as a logical replication worker does), which brings the
/// server's own libpq into the process's global scope, and takes these functions from there by
/// name. So no backend has a libpq loaded by hlculid, and the worker's is the one the server was
/// built with (a `libpq.so.5` found first on the library path may be older: postgres_fdw, loaded
/// after it, then misses newer functions). libpq's ABI is stable; the enums are C ints.
pub mod libpq {
    use core::ffi::{c_char, c_int, c_void};
    use std::sync::OnceLock;

    #[repr(C)]
    pub struct PGconn {
        _opaque: [u8; 0],
    }
    #[repr(C)]
    pub struct PGresult {
        _opaque: [u8; 0],
    }

    /// `ConnStatusType`'s `CONNECTION_OK`.
    pub const CONNECTION_OK: c_int = 0;
    /// `ExecStatusType`'s `PGRES_TUPLES_OK`.
    pub const PGRES_TUPLES_OK: c_int = 2;

    unsafe extern "C" {
        /// `dlfcn.h`; `RTLD_DEFAULT` is the null handle on glibc and the BSDs' ELF loaders.
        fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    }

    macro_rules! api {
        ($($name:ident: fn($($arg:ty),*) -> $ret:ty;)*) => {
            /// The functions, by name.
            #[allow(non_snake_case)]
            pub struct Api {
                $(pub $name: unsafe extern "C" fn($($arg),*) -> $ret,)*
            }

            fn resolve() -> Result<Api, String> {
                Ok(Api {
                    $($name: {
                        let name = concat!(stringify!($name), "\0");
                        // SAFETY: a lookup in the process's global scope by a NUL-terminated name.
                        let f = unsafe { dlsym(core::ptr::null_mut(), name.as_ptr().cast()) };
                        if f.is_null() {
                            return Err(format!("libpq's {} is not loaded", stringify!($name)));
                        }
                        // SAFETY: the symbol libpq exports under that name has this signature
                        // (tests/c_decls/decls.c checks each against libpq-fe.h).
                        unsafe { core::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) -> $ret>(f) }
                    },)*
                })
            }
        };
    }

    api! {
        PQconnectdb: fn(*const c_char) -> *mut PGconn;
        PQstatus: fn(*const PGconn) -> c_int;
        PQerrorMessage: fn(*const PGconn) -> *mut c_char;
        PQfinish: fn(*mut PGconn) -> ();
        PQsocket: fn(*const PGconn) -> c_int;
        PQsendQuery: fn(*mut PGconn, *const c_char) -> c_int;
        PQconsumeInput: fn(*mut PGconn) -> c_int;
        PQisBusy: fn(*mut PGconn) -> c_int;
        PQgetResult: fn(*mut PGconn) -> *mut PGresult;
        PQresultStatus: fn(*const PGresult) -> c_int;
        PQresultErrorMessage: fn(*const PGresult) -> *mut c_char;
        PQntuples: fn(*const PGresult) -> c_int;
        PQnfields: fn(*const PGresult) -> c_int;
        PQgetvalue: fn(*const PGresult, c_int, c_int) -> *mut c_char;
        PQgetisnull: fn(*const PGresult, c_int, c_int) -> c_int;
        PQclear: fn(*mut PGresult) -> ();
    }

    static API: OnceLock<Result<Api, String>> = OnceLock::new();

    /// libpq's functions, loaded on first use; the error is the sentence to log.
    pub fn api() -> Result<&'static Api, &'static str> {
        API.get_or_init(|| {
            // SAFETY: loads a library of the server's own (raises if it cannot, as a logical
            // replication worker would); called in a background worker, not in a transaction.
            unsafe { pgrx::pg_sys::load_file(c"libpqwalreceiver".as_ptr(), false) };
            resolve()
        })
        .as_ref()
        .map_err(String::as_str)
    }
}

/// Whether this backend holds ROW EXCLUSIVE on relation `relid` of its database (the lock every
/// INSERT, COPY FROM, UPDATE, DELETE and MERGE takes on its target until its transaction's locks
/// are released): a lookup in the backend's own lock table, no catalog access, no error.
pub fn holds_row_exclusive(relid: pg_sys::Oid) -> bool {
    let tag = pg_sys::LOCKTAG {
        // SAFETY: a backend global, set once at connection.
        locktag_field1: unsafe { pg_sys::MyDatabaseId }.to_u32(),
        locktag_field2: relid.to_u32(),
        locktag_field3: 0,
        locktag_field4: 0,
        locktag_type: pg_sys::LockTagType::LOCKTAG_RELATION as u8,
        locktag_lockmethodid: pg_sys::DEFAULT_LOCKMETHOD as u8,
    };
    // SAFETY: the tag lives across the call; LockHeldByMe only searches the local lock table.
    unsafe {
        #[cfg(any(feature = "pg15", feature = "pg16"))]
        {
            pg_sys::LockHeldByMe(&tag, pg_sys::RowExclusiveLock as _)
        }
        #[cfg(any(feature = "pg17", feature = "pg18"))]
        {
            pg_sys::LockHeldByMe(&tag, pg_sys::RowExclusiveLock as _, false)
        }
    }
}
