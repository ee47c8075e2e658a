//! Comparisons between `hlculid` and `uuid` (0.4.0), in hlculid's btree family as `int4 = int8`
//! is in integers': `id = some_uuid` and `id < some_uuid` keep using an index on the hlculid
//! column, now that the `uuid` -> `hlculid` cast is assignment-only (an implicit cast changed
//! queries on plain `uuid` columns, e.g. `max(u)`, into hlculid queries). Both types are 16
//! bytes in byte order, so every comparison is the bytes' order; they never raise (a random
//! uuid compares like any other value).

use crate::types::datum::Hlculid;
use pgrx::prelude::*;
use pgrx::Uuid;
use std::cmp::Ordering;

fn cmp(a: &Hlculid, b: &Uuid) -> Ordering {
    a.0 .0.cmp(b.as_bytes())
}

// One operator each way: `(hlculid, uuid)` and its commutator `(uuid, hlculid)`, each with its
// own negator and estimators; `u OP id` holds exactly when `id COMMUTATOR u` does.

#[pg_operator(immutable, parallel_safe)]
#[opname(=)]
#[commutator(=)]
#[negator(<>)]
#[restrict(eqsel)]
#[join(eqjoinsel)]
fn hlculid_eq_uuid(a: Hlculid, b: Uuid) -> bool {
    let o = cmp(&a, &b);
    o == Ordering::Equal
}

#[pg_operator(immutable, parallel_safe)]
#[opname(=)]
#[commutator(=)]
#[negator(<>)]
#[restrict(eqsel)]
#[join(eqjoinsel)]
fn uuid_eq_hlculid(a: Uuid, b: Hlculid) -> bool {
    let o = cmp(&b, &a);
    o == Ordering::Equal
}

#[pg_operator(immutable, parallel_safe)]
#[opname(<>)]
#[commutator(<>)]
#[negator(=)]
#[restrict(neqsel)]
#[join(neqjoinsel)]
fn hlculid_ne_uuid(a: Hlculid, b: Uuid) -> bool {
    let o = cmp(&a, &b);
    o != Ordering::Equal
}

#[pg_operator(immutable, parallel_safe)]
#[opname(<>)]
#[commutator(<>)]
#[negator(=)]
#[restrict(neqsel)]
#[join(neqjoinsel)]
fn uuid_ne_hlculid(a: Uuid, b: Hlculid) -> bool {
    let o = cmp(&b, &a);
    o != Ordering::Equal
}

#[pg_operator(immutable, parallel_safe)]
#[opname(<)]
#[commutator(>)]
#[negator(>=)]
#[restrict(scalarltsel)]
#[join(scalarltjoinsel)]
fn hlculid_lt_uuid(a: Hlculid, b: Uuid) -> bool {
    let o = cmp(&a, &b);
    o == Ordering::Less
}

#[pg_operator(immutable, parallel_safe)]
#[opname(>)]
#[commutator(<)]
#[negator(<=)]
#[restrict(scalargtsel)]
#[join(scalargtjoinsel)]
fn uuid_gt_hlculid(a: Uuid, b: Hlculid) -> bool {
    let o = cmp(&b, &a);
    o == Ordering::Less
}

#[pg_operator(immutable, parallel_safe)]
#[opname(<=)]
#[commutator(>=)]
#[negator(>)]
#[restrict(scalarlesel)]
#[join(scalarlejoinsel)]
fn hlculid_le_uuid(a: Hlculid, b: Uuid) -> bool {
    let o = cmp(&a, &b);
    o != Ordering::Greater
}

#[pg_operator(immutable, parallel_safe)]
#[opname(>=)]
#[commutator(<=)]
#[negator(<)]
#[restrict(scalargesel)]
#[join(scalargejoinsel)]
fn uuid_ge_hlculid(a: Uuid, b: Hlculid) -> bool {
    let o = cmp(&b, &a);
    o != Ordering::Greater
}

#[pg_operator(immutable, parallel_safe)]
#[opname(>)]
#[commutator(<)]
#[negator(<=)]
#[restrict(scalargtsel)]
#[join(scalargtjoinsel)]
fn hlculid_gt_uuid(a: Hlculid, b: Uuid) -> bool {
    let o = cmp(&a, &b);
    o == Ordering::Greater
}

#[pg_operator(immutable, parallel_safe)]
#[opname(<)]
#[commutator(>)]
#[negator(>=)]
#[restrict(scalarltsel)]
#[join(scalarltjoinsel)]
fn uuid_lt_hlculid(a: Uuid, b: Hlculid) -> bool {
    let o = cmp(&b, &a);
    o == Ordering::Greater
}

#[pg_operator(immutable, parallel_safe)]
#[opname(>=)]
#[commutator(<=)]
#[negator(<)]
#[restrict(scalargesel)]
#[join(scalargejoinsel)]
fn hlculid_ge_uuid(a: Hlculid, b: Uuid) -> bool {
    let o = cmp(&a, &b);
    o != Ordering::Less
}

#[pg_operator(immutable, parallel_safe)]
#[opname(<=)]
#[commutator(>=)]
#[negator(>)]
#[restrict(scalarlesel)]
#[join(scalarlejoinsel)]
fn uuid_le_hlculid(a: Uuid, b: Hlculid) -> bool {
    let o = cmp(&b, &a);
    o != Ordering::Less
}

#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_uuid_cmp(a: Hlculid, b: Uuid) -> i32 {
    cmp(&a, &b) as i32
}

#[pg_extern(immutable, parallel_safe, strict)]
fn uuid_hlculid_cmp(a: Uuid, b: Hlculid) -> i32 {
    cmp(&b, &a).reverse() as i32
}

extension_sql!(
    r#"
ALTER OPERATOR FAMILY hlculid_ops USING btree ADD
    OPERATOR 1 < (hlculid, uuid),
    OPERATOR 2 <= (hlculid, uuid),
    OPERATOR 3 = (hlculid, uuid),
    OPERATOR 4 >= (hlculid, uuid),
    OPERATOR 5 > (hlculid, uuid),
    OPERATOR 1 < (uuid, hlculid),
    OPERATOR 2 <= (uuid, hlculid),
    OPERATOR 3 = (uuid, hlculid),
    OPERATOR 4 >= (uuid, hlculid),
    OPERATOR 5 > (uuid, hlculid),
    FUNCTION 1 (hlculid, uuid) hlculid_uuid_cmp(hlculid, uuid),
    FUNCTION 1 (uuid, hlculid) uuid_hlculid_cmp(uuid, hlculid),
    -- uuid's own comparisons too, so the family is complete for both types (amvalidate)
    OPERATOR 1 < (uuid, uuid),
    OPERATOR 2 <= (uuid, uuid),
    OPERATOR 3 = (uuid, uuid),
    OPERATOR 4 >= (uuid, uuid),
    OPERATOR 5 > (uuid, uuid),
    FUNCTION 1 (uuid, uuid) uuid_cmp(uuid, uuid);
"#,
    name = "hlculid_uuid_ops",
    requires = [
        "hlculid_opclasses",
        hlculid_eq_uuid,
        uuid_eq_hlculid,
        hlculid_ne_uuid,
        uuid_ne_hlculid,
        hlculid_lt_uuid,
        uuid_gt_hlculid,
        hlculid_le_uuid,
        uuid_ge_hlculid,
        hlculid_gt_uuid,
        uuid_lt_hlculid,
        hlculid_ge_uuid,
        uuid_le_hlculid,
        hlculid_uuid_cmp,
        uuid_hlculid_cmp
    ],
);

// LEAKPROOF (0.4.0): under row-level security and in security_barrier views PostgreSQL moves a
// user's condition ahead of the policy, and so into an index condition, only through leakproof
// operators (uuid's are). Each function below compares two 16-byte values (`<@`: an id's time
// with a range's bounds) and returns: it never raises, whatever the values, so it reveals
// nothing but its result.
extension_sql!(
    r#"
ALTER FUNCTION hlculid_eq(hlculid, hlculid) LEAKPROOF;
ALTER FUNCTION hlculid_ne(hlculid, hlculid) LEAKPROOF;
ALTER FUNCTION hlculid_lt(hlculid, hlculid) LEAKPROOF;
ALTER FUNCTION hlculid_le(hlculid, hlculid) LEAKPROOF;
ALTER FUNCTION hlculid_gt(hlculid, hlculid) LEAKPROOF;
ALTER FUNCTION hlculid_ge(hlculid, hlculid) LEAKPROOF;
ALTER FUNCTION hlculid_cmp(hlculid, hlculid) LEAKPROOF;
ALTER FUNCTION hlculid_eq_uuid(hlculid, uuid) LEAKPROOF;
ALTER FUNCTION hlculid_ne_uuid(hlculid, uuid) LEAKPROOF;
ALTER FUNCTION hlculid_lt_uuid(hlculid, uuid) LEAKPROOF;
ALTER FUNCTION hlculid_le_uuid(hlculid, uuid) LEAKPROOF;
ALTER FUNCTION hlculid_gt_uuid(hlculid, uuid) LEAKPROOF;
ALTER FUNCTION hlculid_ge_uuid(hlculid, uuid) LEAKPROOF;
ALTER FUNCTION uuid_eq_hlculid(uuid, hlculid) LEAKPROOF;
ALTER FUNCTION uuid_ne_hlculid(uuid, hlculid) LEAKPROOF;
ALTER FUNCTION uuid_lt_hlculid(uuid, hlculid) LEAKPROOF;
ALTER FUNCTION uuid_le_hlculid(uuid, hlculid) LEAKPROOF;
ALTER FUNCTION uuid_gt_hlculid(uuid, hlculid) LEAKPROOF;
ALTER FUNCTION uuid_ge_hlculid(uuid, hlculid) LEAKPROOF;
ALTER FUNCTION hlculid_uuid_cmp(hlculid, uuid) LEAKPROOF;
ALTER FUNCTION uuid_hlculid_cmp(uuid, hlculid) LEAKPROOF;
ALTER FUNCTION hlculid_in_range(hlculid, tstzrange) LEAKPROOF;
"#,
    name = "hlculid_leakproof",
    requires = ["hlculid_opclasses", "hlculid_uuid_ops", "hlculid_window"],
);
