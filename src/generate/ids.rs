//! Generating ids from the server's clock: `hlculid_generate()` and `hlculid_generate_n()`.

use crate::base::backend_local::{random48, random48_ready, BackendLocal};
use crate::base::pg_c;
use crate::base::process;
use crate::base::settings;
use crate::clock::durable::{self, now_ms};
use crate::clock::shared;
use crate::generate::take;
use crate::horizon::slots;
use crate::types::datum::Hlculid;
use hlculid_core::clock::{ClockError, Tick, FULL_COUNTER};
use hlculid_core::Id;
use pgrx::prelude::*;

/// A clock result the fast path took but could not finish with, for the slow path to use.
static PENDING: BackendLocal<Option<(u64, Result<Tick, ClockError>)>> = BackendLocal::new(None);

/// SQL `hlculid_generate()`: the next id from this server's clock, greater than every id it
/// returned before.
///
/// A hand-written V1 entry point, because pgrx's per-call guard costs about as much as the
/// clock itself. The common case (preloaded, random stream seeded, a value within the
/// reservation and the run-ahead bound, no clock step, memory available) is one atomic step and
/// a 16-byte allocation, none of which can raise an error or panic. Everything else goes to the
/// guarded [`hlculid_generate_slow`], which waits, raises errors and warnings the pgrx way.
///
/// It is `extern "C"`, not `"C-unwind"`: should the no-panic promise above ever break, Rust
/// aborts the backend (PostgreSQL then recovers as after any backend crash, and the clock resumes
/// from its mark) instead of unwinding into PostgreSQL's C frames, which is undefined.
///
/// # Safety
/// Called by PostgreSQL's function manager with a valid `fcinfo`, as for any V1 function.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hlculid_generate_fast(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // Holding the horizon's slot is one branch once the transaction holds it.
    if process::preloaded() && slots::hold_fast() {
        let (now, first) = shared::clock_preloaded().tick_reading(now_ms);
        if let Ok(t) = first {
            if t.backward_step_ms.is_none() {
                if let (Some(random), Some(publisher)) =
                    (random48_ready(), settings::publisher_fast())
                {
                    // SAFETY: inside a function call; a NULL result is handled below.
                    let p = unsafe { pg_c::alloc_no_raise(16) };
                    if !p.is_null() {
                        let id = Id::from_logical(t.logical, publisher, random);
                        // SAFETY: p is a fresh allocation of 16 bytes.
                        unsafe { p.cast::<[u8; 16]>().write_unaligned(id.0) };
                        return pg_sys::Datum::from(p);
                    }
                }
            }
        }
        // SAFETY: the backend's thread; the closure only stores.
        unsafe { PENDING.with(|p| *p = Some((now, first))) };
    }
    // SAFETY: pgrx's guarded wrapper of the slow path, called with our own valid fcinfo; it
    // reports errors by longjmp, which passes this frame (it holds nothing to drop).
    unsafe { hlculid_generate_slow_wrapper(fcinfo) }
}

v1_function_info!(pg_finfo_hlculid_generate_fast);

/// The guarded path of `hlculid_generate()`: finishes what the fast path started.
#[pg_extern(volatile, parallel_restricted, sql = false)]
fn hlculid_generate_slow() -> Hlculid {
    // SAFETY: the backend's thread; the closure only takes.
    let t = match unsafe { PENDING.with(|p| p.take()) } {
        Some((now, first)) => durable::settle(first, now),
        None => take::take(1),
    };
    Hlculid(Id::from_logical(
        t.logical,
        settings::publisher().0,
        random48(),
    ))
}

extension_sql!(
    r#"
CREATE FUNCTION hlculid_generate() RETURNS hlculid
    STRICT VOLATILE PARALLEL RESTRICTED
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_generate_fast';
"#,
    name = "hlculid_generate",
    requires = ["hlculid_type"],
);

/// SQL `hlculid_generate_n(n)`: `n` ids from one atomic step of the clock, in increasing order,
/// every one greater than every id the server returned before; for `INSERT ... SELECT` (with
/// `unnest`) and for applications that pre-allocate ids.
///
/// Hand-written rather than `#[pg_extern]`, so that the array is built in one go from one
/// buffer (pgrx's `Vec` conversion looks the element type up again for every element).
///
/// # Safety
/// Called by PostgreSQL's function manager with a valid `fcinfo`, as for any V1 function.
#[pg_guard]
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn hlculid_generate_n(
    fcinfo: pg_sys::FunctionCallInfo,
) -> pg_sys::Datum {
    // SAFETY: the function is STRICT and declared with one int4 argument.
    let n = unsafe { pgrx::fcinfo::pg_getarg::<i32>(fcinfo, 0) }.unwrap_or(0);
    // the clock refuses a count outside its batch limit (1 to MAX_BATCH), taking nothing
    let t = take::take_batch_for("hlculid_generate_n", n, FULL_COUNTER);
    let n = n as usize;
    let publisher = settings::publisher().0;
    // The element type from the function's own declared result (hlculid[] in the extension's
    // schema), never by name through the caller's search_path.
    // SAFETY: fcinfo and its flinfo are valid for the call; both are syscache lookups of OIDs
    // that exist while the function runs.
    let element = unsafe {
        let flinfo = (*fcinfo).flinfo;
        let mut array = pg_sys::get_fn_expr_rettype(flinfo);
        if array == pg_sys::InvalidOid {
            array = pg_sys::get_func_rettype((*flinfo).fn_oid);
        }
        pg_sys::get_element_type(array)
    };
    // SAFETY: palloc returns n * 16 writable bytes (or raises); every datum points at 16 of them,
    // and construct_array copies them into the new array (element length 16, by reference,
    // char alignment: the type's own storage).
    unsafe {
        let values = pg_sys::palloc(n * 16).cast::<[u8; 16]>();
        let datums =
            pg_sys::palloc(n * std::mem::size_of::<pg_sys::Datum>()).cast::<pg_sys::Datum>();
        for i in 0..n {
            let id = Id::from_logical(t.logical + i as u64, publisher, random48());
            values.add(i).write(id.0);
            datums.add(i).write(pg_sys::Datum::from(values.add(i)));
        }
        let array = pg_sys::construct_array(
            datums,
            n as i32,
            element,
            16,
            false,
            pg_sys::TYPALIGN_CHAR as core::ffi::c_char,
        );
        pg_sys::Datum::from(array)
    }
}

v1_function_info!(pg_finfo_hlculid_generate_n);

extension_sql!(
    r#"
CREATE FUNCTION hlculid_generate_n(n int4) RETURNS hlculid[]
    STRICT VOLATILE PARALLEL RESTRICTED
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_generate_n';
"#,
    name = "hlculid_generate_n",
    requires = ["hlculid_type"],
);
