//! Comparison operators and index support: btree (compare, sortsupport with abbreviated keys,
//! equalimage, and skip support from PostgreSQL 18 on), hash (32- and 64-bit, identical to
//! `uuid_hash`), BRIN minmax, and the `min`/`max` aggregates. Laid out like core's `uuid.c`.

use crate::base::pg_c::{hash_bytes, hash_bytes_extended, ssup_datum_unsigned_cmp};
use crate::types::datum::Hlculid;
use core::cmp::Ordering;
use core::ffi::c_int;
use pgrx::prelude::*;
use pgrx::Internal;

/// The two hlculid arguments of a comparison, in order.
///
/// # Safety
/// `fcinfo` is a valid call whose arguments 0 and 1 are non-null hlculids.
#[inline(always)]
unsafe fn compare_args(fcinfo: pg_sys::FunctionCallInfo) -> Ordering {
    // SAFETY: as the caller promises; an hlculid datum points to its 16 bytes.
    unsafe {
        let a = Hlculid::read(pgrx::fcinfo::pg_getarg_datum_raw(fcinfo, 0));
        let b = Hlculid::read(pgrx::fcinfo::pg_getarg_datum_raw(fcinfo, 1));
        a.cmp(&b)
    }
}

/// The comparison functions (`hlculid_cmp`, btree support 1, which every index search, merge
/// join and sort without sortsupport calls, and the six operators' functions), hand-written V1
/// like `uuid.c`'s: pgrx's per-call wrapper cost more than the comparison. Each reads two
/// 16-byte values and returns a by-value result; nothing can raise or panic (which is also why
/// they are LEAKPROOF). Exported under the symbols pgrx gave them in 0.1.x, which the catalog
/// names. `extern "C"`: as in [`crate::types::io::hlculid_out_wrapper`].
macro_rules! compare_fn {
    ($wrapper:ident, $finfo:ident, |$o:ident| $result:expr) => {
        /// # Safety
        /// Called by PostgreSQL's function manager with a valid `fcinfo` holding two non-null
        /// hlculids.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $wrapper(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
            // SAFETY: the function is STRICT with two hlculid arguments.
            let $o = unsafe { compare_args(fcinfo) };
            pg_sys::Datum::from($result)
        }

        v1_function_info!($finfo);
    };
}

compare_fn!(hlculid_eq_wrapper, pg_finfo_hlculid_eq_wrapper, |o| o
    .is_eq());
compare_fn!(hlculid_ne_wrapper, pg_finfo_hlculid_ne_wrapper, |o| o
    .is_ne());
compare_fn!(hlculid_lt_wrapper, pg_finfo_hlculid_lt_wrapper, |o| o
    .is_lt());
compare_fn!(hlculid_le_wrapper, pg_finfo_hlculid_le_wrapper, |o| o
    .is_le());
compare_fn!(hlculid_gt_wrapper, pg_finfo_hlculid_gt_wrapper, |o| o
    .is_gt());
compare_fn!(hlculid_ge_wrapper, pg_finfo_hlculid_ge_wrapper, |o| o
    .is_ge());
compare_fn!(hlculid_cmp_wrapper, pg_finfo_hlculid_cmp_wrapper, |o| o
    as i32);

// The same catalog entries pgrx generated for them up to 0.3.0 (#[pg_operator], #[pg_extern]).
extension_sql!(
    r#"
CREATE FUNCTION "hlculid_eq"("a" hlculid, "b" hlculid) RETURNS bool
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_eq_wrapper';
CREATE OPERATOR = (
    PROCEDURE = "hlculid_eq", LEFTARG = hlculid, RIGHTARG = hlculid,
    COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES
);

CREATE FUNCTION "hlculid_ne"("a" hlculid, "b" hlculid) RETURNS bool
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_ne_wrapper';
CREATE OPERATOR <> (
    PROCEDURE = "hlculid_ne", LEFTARG = hlculid, RIGHTARG = hlculid,
    COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);

CREATE FUNCTION "hlculid_lt"("a" hlculid, "b" hlculid) RETURNS bool
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_lt_wrapper';
CREATE OPERATOR < (
    PROCEDURE = "hlculid_lt", LEFTARG = hlculid, RIGHTARG = hlculid,
    COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);

CREATE FUNCTION "hlculid_le"("a" hlculid, "b" hlculid) RETURNS bool
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_le_wrapper';
CREATE OPERATOR <= (
    PROCEDURE = "hlculid_le", LEFTARG = hlculid, RIGHTARG = hlculid,
    COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);

CREATE FUNCTION "hlculid_gt"("a" hlculid, "b" hlculid) RETURNS bool
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_gt_wrapper';
CREATE OPERATOR > (
    PROCEDURE = "hlculid_gt", LEFTARG = hlculid, RIGHTARG = hlculid,
    COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);

CREATE FUNCTION "hlculid_ge"("a" hlculid, "b" hlculid) RETURNS bool
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_ge_wrapper';
CREATE OPERATOR >= (
    PROCEDURE = "hlculid_ge", LEFTARG = hlculid, RIGHTARG = hlculid,
    COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel
);

CREATE FUNCTION "hlculid_cmp"("a" hlculid, "b" hlculid) RETURNS INT
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_cmp_wrapper';
"#,
    name = "hlculid_compare",
    requires = ["hlculid_type"],
);

#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_smaller(a: Hlculid, b: Hlculid) -> Hlculid {
    a.min(b)
}

#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_larger(a: Hlculid, b: Hlculid) -> Hlculid {
    a.max(b)
}

/// 32-bit hash, equal to `uuid_hash` of the same bytes.
#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_hash(v: Hlculid) -> i32 {
    // SAFETY: hash_bytes reads exactly keylen = 16 bytes from the id's own array.
    unsafe { hash_bytes(v.0 .0.as_ptr(), 16) as i32 }
}

/// 64-bit seeded hash (hash support 2, needed by `PARTITION BY HASH`), equal to
/// `uuid_hash_extended`; with seed 0 its low 32 bits equal `hlculid_hash`.
#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_hash_extended(v: Hlculid, seed: i64) -> i64 {
    // SAFETY: as in hlculid_hash.
    unsafe { hash_bytes_extended(v.0 .0.as_ptr(), 16, seed as u64) as i64 }
}

// Sortsupport callbacks run inside tuplesort for every comparison: they must not allocate,
// raise or panic.
unsafe extern "C-unwind" fn hlculid_fastcmp(
    a: pg_sys::Datum,
    b: pg_sys::Datum,
    _: pg_sys::SortSupport,
) -> c_int {
    // SAFETY: tuplesort passes datums of this opclass's type: pointers to 16-byte values.
    unsafe { Hlculid::read(a).cmp(&Hlculid::read(b)) as c_int }
}

/// The abbreviated key is the first 8 bytes as an unsigned integer: 48 bits of ms and the
/// 16-bit counter, which almost always decide the comparison on their own.
unsafe extern "C-unwind" fn hlculid_abbrev_convert(
    original: pg_sys::Datum,
    _: pg_sys::SortSupport,
) -> pg_sys::Datum {
    // SAFETY: the original datum points to a 16-byte value; its first 8 bytes are read.
    let prefix = unsafe { original.cast_mut_ptr::<[u8; 8]>().read_unaligned() };
    pg_sys::Datum::from(u64::from_be_bytes(prefix))
}

/// Never abandon abbreviation: unlike random uuids, time-ordered ids have distinct prefixes
/// unless many share one millisecond and counter, and then comparing them in full is what
/// any strategy would do.
unsafe extern "C-unwind" fn hlculid_abbrev_abort(_: c_int, _: pg_sys::SortSupport) -> bool {
    false
}

#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_sortsupport(mut ssup: Internal) {
    // SAFETY: btree calls support function 2 with its SortSupportData.
    let Some(ssup) = (unsafe { ssup.get_mut::<pg_sys::SortSupportData>() }) else {
        return;
    };
    ssup.comparator = Some(hlculid_fastcmp);
    if ssup.abbreviate && core::mem::size_of::<pg_sys::Datum>() == 8 {
        ssup.abbrev_converter = Some(hlculid_abbrev_convert);
        ssup.abbrev_abort = Some(hlculid_abbrev_abort);
        ssup.abbrev_full_comparator = Some(hlculid_fastcmp);
        ssup.comparator = Some(ssup_datum_unsigned_cmp);
    }
}

mod skip {
    //! Btree skip support: the next and previous possible values. Built on every major so that
    //! the install script is the same text everywhere; only PostgreSQL 18+ has btree support
    //! function 6, so the script registers it there and nowhere else.
    use super::*;
    use hlculid_core::Id;

    use crate::base::pg_c::SkipSupportData;

    /// # Safety
    /// `existing` is a datum of this type and `overflow` a valid out-parameter, as btree passes.
    unsafe fn step(existing: pg_sys::Datum, overflow: *mut bool, up: bool) -> pg_sys::Datum {
        // SAFETY: the caller passes a datum of this type.
        let v = unsafe { Hlculid::read(existing) }.0.to_u128();
        let next = if up {
            v.checked_add(1)
        } else {
            v.checked_sub(1)
        };
        // SAFETY: the caller passes a valid out-parameter.
        unsafe { *overflow = next.is_none() };
        match next {
            Some(n) => Hlculid(Id::from_u128(n)).to_datum(),
            None => pg_sys::Datum::from(0), // undefined by contract when overflowing
        }
    }

    // Called by btree directly; they allocate the new value, which can raise (out of memory),
    // so they are guarded: an error comes back to PostgreSQL as an ERROR, never as an unwind.
    #[pg_guard]
    unsafe extern "C-unwind" fn decrement(
        _rel: pg_sys::Relation,
        existing: pg_sys::Datum,
        underflow: *mut bool,
    ) -> pg_sys::Datum {
        // SAFETY: btree passes a datum of this type and a valid out-parameter.
        unsafe { step(existing, underflow, false) }
    }

    #[pg_guard]
    unsafe extern "C-unwind" fn increment(
        _rel: pg_sys::Relation,
        existing: pg_sys::Datum,
        overflow: *mut bool,
    ) -> pg_sys::Datum {
        // SAFETY: as in decrement.
        unsafe { step(existing, overflow, true) }
    }

    #[pg_extern(immutable, parallel_safe, strict)]
    fn hlculid_skipsupport(mut sksup: Internal) {
        // SAFETY: btree (18+) calls support function 6 with its SkipSupportData.
        let Some(s) = (unsafe { sksup.get_mut::<SkipSupportData>() }) else {
            return;
        };
        s.low_elem = Hlculid(Id::MIN).to_datum();
        s.high_elem = Hlculid(Id::MAX).to_datum();
        s.decrement = Some(decrement);
        s.increment = Some(increment);
    }

    // The one step of the install script that depends on the major (sql/src/skipsupport.sql,
    // repeated by every upgrade script).
    extension_sql_file!(
        "../../sql/src/skipsupport.sql",
        name = "hlculid_skipsupport_opfamily",
        requires = ["hlculid_opclasses", hlculid_skipsupport],
    );
}

extension_sql!(
    r#"
CREATE OPERATOR CLASS hlculid_ops DEFAULT FOR TYPE hlculid USING btree AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 hlculid_cmp(hlculid, hlculid),
    FUNCTION 2 hlculid_sortsupport(internal),
    FUNCTION 4 btequalimage(oid);

CREATE OPERATOR CLASS hlculid_ops DEFAULT FOR TYPE hlculid USING hash AS
    OPERATOR 1 =,
    FUNCTION 1 hlculid_hash(hlculid),
    FUNCTION 2 hlculid_hash_extended(hlculid, int8);

CREATE OPERATOR CLASS hlculid_minmax_ops DEFAULT FOR TYPE hlculid USING brin AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 brin_minmax_opcinfo(internal),
    FUNCTION 2 brin_minmax_add_value(internal, internal, internal, internal),
    FUNCTION 3 brin_minmax_consistent(internal, internal, internal),
    FUNCTION 4 brin_minmax_union(internal, internal, internal);

CREATE AGGREGATE min(hlculid) (
    SFUNC = hlculid_smaller, STYPE = hlculid, COMBINEFUNC = hlculid_smaller,
    SORTOP = <, PARALLEL = SAFE
);
CREATE AGGREGATE max(hlculid) (
    SFUNC = hlculid_larger, STYPE = hlculid, COMBINEFUNC = hlculid_larger,
    SORTOP = >, PARALLEL = SAFE
);
"#,
    name = "hlculid_opclasses",
    requires = [
        "hlculid_type",
        "hlculid_compare",
        hlculid_sortsupport,
        hlculid_hash,
        hlculid_hash_extended,
        hlculid_smaller,
        hlculid_larger
    ],
);
