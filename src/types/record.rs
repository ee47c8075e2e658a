//! Records of pass-by-value fields returned by hand-written V1 functions (`hlculid_decode`,
//! `hlculid_bigint_decode`) at the cost of one allocation and a copy per call.
//!
//! The first call of a call site (a guarded path) asks PostgreSQL for the result's row type,
//! blesses it, forms a tuple of sentinel values with `heap_form_tuple` and keeps that tuple as
//! a template in the call site's `fn_extra`, with the byte offset of each field, once it has
//! checked that every sentinel sits where the fields' alignment puts it. Every later call
//! copies the template and writes its values in: no catalog lookup, no descriptor, nothing that
//! can raise (the copy is allocated with `alloc_no_raise`). A template that does not check out
//! is never used: each call then forms its tuple the ordinary way.

use crate::base::errors::{Condition, UserError};
use crate::base::pg_c::alloc_no_raise;
use pgrx::pg_sys;

/// The largest tuple (header and data) a template holds: 24 bytes of header and up to five
/// 8-byte fields.
const MAX_BYTES: usize = 64;
/// The most fields a template holds.
pub const MAX_FIELDS: usize = 4;

/// A call site's template, in its `fn_mcxt`.
#[repr(C)]
struct Template {
    /// Whether the sentinel check passed; when not, only the ordinary path is used.
    ok: bool,
    len: usize,
    offsets: [usize; MAX_FIELDS],
    bytes: [u8; MAX_BYTES],
}

/// The width in bytes (4 or 8) of each field of a record: what the SQL signature declares
/// (`int4`: 4; `int8`, `timestamptz`: 8, pass by value on 64-bit builds).
pub type Widths = [usize];

/// # Safety
/// `p` has room for `width` bytes.
unsafe fn write(p: *mut u8, width: usize, v: i64) {
    // SAFETY: as the caller promises; the writes are unaligned.
    unsafe {
        if width == 8 {
            p.cast::<i64>().write_unaligned(v);
        } else {
            p.cast::<i32>().write_unaligned(v as i32);
        }
    }
}

/// The record of `values`, from the call site's template, or `None` when the call site has no
/// usable template yet or memory is short (the caller then takes its guarded path, which ends
/// in [`form`]). Never raises.
///
/// # Safety
/// Inside a V1 call whose result type is a record of `widths.len()` fields of these widths
/// (the same at every call of the function), `values.len() == widths.len()`.
#[inline]
pub unsafe fn fast(
    fcinfo: pg_sys::FunctionCallInfo,
    values: &[i64],
    widths: &Widths,
) -> Option<pg_sys::Datum> {
    // SAFETY: fcinfo and its flinfo are valid during the call; fn_extra is NULL or a Template
    // this module put there (no other code uses this function's fn_extra).
    let t = unsafe { (*(*fcinfo).flinfo).fn_extra.cast::<Template>().as_ref()? };
    if !t.ok {
        return None;
    }
    // SAFETY: inside a function call.
    let p = unsafe { alloc_no_raise(t.len) };
    if p.is_null() {
        return None;
    }
    // SAFETY: p has t.len bytes.
    unsafe { fill(t, p, values, widths) };
    Some(pg_sys::Datum::from(p))
}

/// Copies the template into `p` and writes `values` at their offsets.
///
/// # Safety
/// `p` has `t.len` bytes; `t` checked out (`ok`: each offset + width is within `t.len`).
unsafe fn fill(t: &Template, p: *mut u8, values: &[i64], widths: &Widths) {
    // SAFETY: as the caller promises; the template holds t.len bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(t.bytes.as_ptr(), p, t.len);
        for (i, (&v, &w)) in values.iter().zip(widths).enumerate() {
            write(p.add(t.offsets[i]), w, v);
        }
    }
}

/// The record of `values` (the guarded path): makes the call site's template on its first call,
/// then forms the record from it, or the ordinary way when the template did not check out. Can
/// raise (out of memory, a caller that does not accept a record).
///
/// # Safety
/// As for [`fast`], and called in a guarded frame (`#[pg_guard]`).
pub unsafe fn form(
    fcinfo: pg_sys::FunctionCallInfo,
    values: &[i64],
    widths: &Widths,
) -> pg_sys::Datum {
    debug_assert!(values.len() == widths.len() && widths.len() <= MAX_FIELDS);
    // SAFETY: as the caller promises.
    unsafe {
        let flinfo = (*fcinfo).flinfo;
        if (*flinfo).fn_extra.is_null() {
            (*flinfo).fn_extra = make_template(fcinfo, widths).cast();
        }
        if let Some(d) = fast(fcinfo, values, widths) {
            return d;
        }
        let t = &*(*flinfo).fn_extra.cast::<Template>();
        if t.ok {
            // memory was short: the raising allocator reports it
            let p = pg_sys::palloc(t.len).cast::<u8>();
            fill(t, p, values, widths);
            return pg_sys::Datum::from(p);
        }
        let tuple = form_tuple(fcinfo, values, widths);
        pg_sys::Datum::from((*tuple).t_data)
    }
}

/// A tuple of `values` formed by PostgreSQL with the call's blessed result descriptor.
///
/// # Safety
/// As for [`form`].
unsafe fn form_tuple(
    fcinfo: pg_sys::FunctionCallInfo,
    values: &[i64],
    widths: &Widths,
) -> pg_sys::HeapTuple {
    let mut tupdesc: pg_sys::TupleDesc = std::ptr::null_mut();
    // SAFETY: a valid call; get_call_result_type raises on what it cannot resolve.
    let class = unsafe { pg_sys::get_call_result_type(fcinfo, std::ptr::null_mut(), &mut tupdesc) };
    if class != pg_sys::TypeFuncClass::TYPEFUNC_COMPOSITE || tupdesc.is_null() {
        UserError::new(
            Condition::Internal,
            "function returning record called in context that cannot accept type record",
        )
        .raise();
    }
    let mut datums = [pg_sys::Datum::from(0); MAX_FIELDS];
    let mut nulls = [false; MAX_FIELDS];
    for (i, (&v, &w)) in values.iter().zip(widths).enumerate() {
        datums[i] = if w == 8 {
            pg_sys::Datum::from(v)
        } else {
            pg_sys::Datum::from(v as i32)
        };
    }
    // SAFETY: tupdesc is the call's result descriptor with widths.len() pass-by-value fields;
    // the arrays have at least that many entries.
    unsafe {
        let tupdesc = pg_sys::BlessTupleDesc(tupdesc);
        pg_sys::heap_form_tuple(tupdesc, datums.as_mut_ptr(), nulls.as_mut_ptr())
    }
}

/// The call site's template, in its `fn_mcxt`.
///
/// # Safety
/// As for [`form`].
unsafe fn make_template(fcinfo: pg_sys::FunctionCallInfo, widths: &Widths) -> *mut Template {
    // Sentinels: a distinct, non-zero byte pattern per field and width.
    let sentinels: Vec<i64> = (0..widths.len())
        .map(|i| {
            let b = 0x11 * (i as i64 + 1);
            if widths[i] == 8 {
                b * 0x0101_0101_0101_0101 + 0x0102_0304_0506_0708
            } else {
                b * 0x0101_0101 + 0x0102_0304
            }
        })
        .collect();
    // SAFETY: as the caller promises.
    let tuple = unsafe { form_tuple(fcinfo, &sentinels, widths) };
    // SAFETY: fn_mcxt lives as long as the call site; MemoryContextAlloc raises or returns
    // size_of::<Template>() writable bytes.
    let t = unsafe {
        pg_sys::MemoryContextAlloc((*(*fcinfo).flinfo).fn_mcxt, size_of::<Template>())
            .cast::<Template>()
    };
    // SAFETY: tuple is a freshly formed tuple: t_len bytes at t_data.
    let (len, header) = unsafe { ((*tuple).t_len as usize, (*tuple).t_data) };
    let mut template = Template {
        ok: false,
        len,
        offsets: [0; MAX_FIELDS],
        bytes: [0; MAX_BYTES],
    };
    // SAFETY: header is the tuple's header.
    let (hoff, infomask) = unsafe { ((*header).t_hoff as usize, (*header).t_infomask) };
    let mut off = hoff;
    let mut ok = len <= MAX_BYTES && infomask & pg_sys::HEAP_HASNULL as u16 == 0;
    if ok {
        // SAFETY: len bytes at header, len <= MAX_BYTES.
        unsafe {
            std::ptr::copy_nonoverlapping(header.cast::<u8>(), template.bytes.as_mut_ptr(), len)
        };
        for (i, &w) in widths.iter().enumerate() {
            off = off.next_multiple_of(w); // int4 aligns to 4; int8 and timestamptz to 8
            template.offsets[i] = off;
            let mut expected = [0u8; 8];
            // SAFETY: expected has 8 bytes.
            unsafe { write(expected.as_mut_ptr(), w, sentinels[i]) };
            ok &= off + w <= len && template.bytes[off..off + w] == expected[..w];
            off += w;
        }
        ok &= off == len;
    }
    template.ok = ok;
    // SAFETY: t has room for one Template.
    unsafe { t.write(template) };
    t
}
