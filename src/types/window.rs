//! Time windows the planner understands: `id <@ tstzrange`. The operator's restriction estimator
//! reads the column's histogram and interpolates inside buckets on the ids' time (the built-in
//! inequality estimators cannot: they interpolate only for types they know, so a window narrower
//! than a bucket comes out as one row). Its planner support function turns it into index
//! conditions on the key, `id >= hlculid_range_min(r) AND id <= hlculid_range_max(r)`, exact, so
//! btree and BRIN indexes on the id serve it and no row is checked twice.

use crate::types::datum::Hlculid;
use hlculid_core::time::PG_EPOCH_OFFSET_US;
use hlculid_core::window::{self, End};
use hlculid_core::Id;
use pgrx::datum::{Range, RangeBound};
use pgrx::prelude::*;
use pgrx::{FromDatum, PgList};

/// One end of a range of times as core's [`End`]; infinite timestamps count as open on their
/// own side and as nothing on the other.
fn end(b: &RangeBound<TimestampWithTimeZone>, lower: bool) -> End {
    let (t, inclusive) = match b {
        RangeBound::Infinite => return End::Open,
        RangeBound::Inclusive(t) => (*t, true),
        RangeBound::Exclusive(t) => (*t, false),
    };
    let us: i64 = t.into();
    match (us, lower) {
        (i64::MAX, true) | (i64::MIN, false) => End::Empty,
        (i64::MAX, false) | (i64::MIN, true) => End::Open,
        _ => {
            let unix = us.saturating_add(PG_EPOCH_OFFSET_US);
            if inclusive {
                End::Inclusive(unix)
            } else {
                End::Exclusive(unix)
            }
        }
    }
}

/// The milliseconds whose ids lie in the range (`None`: no id does).
fn ms_window(r: &Range<TimestampWithTimeZone>) -> Option<(u64, u64)> {
    let (lower, upper) = r.as_ref()?;
    window::ms_window(end(lower, true), end(upper, false))
}

/// True when the id's time lies in the range (each bound's inclusivity respected; empty and
/// unbounded ranges handled). The SQL function behind `<@`.
#[pg_extern(immutable, parallel_safe, strict, sql = false)]
fn hlculid_in_range(id: Hlculid, range: Range<TimestampWithTimeZone>) -> bool {
    ms_window(&range).is_some_and(|(first, last)| (first..=last).contains(&id.0.ms()))
}

/// `range @> id`: [`hlculid_in_range`] with its arguments the other way round, the commutator of
/// `<@`, planned the same way (estimator and index conditions).
#[pg_extern(immutable, parallel_safe, strict, sql = false)]
fn hlculid_range_contains(range: Range<TimestampWithTimeZone>, id: Hlculid) -> bool {
    hlculid_in_range(id, range)
}

/// The smallest id whose time lies in the range (the largest id when none does).
#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_range_min(range: Range<TimestampWithTimeZone>) -> Hlculid {
    Hlculid(window::id_bounds(ms_window(&range)).0)
}

/// The largest id whose time lies in the range (the smallest id when none does).
#[pg_extern(immutable, parallel_safe, strict)]
fn hlculid_range_max(range: Range<TimestampWithTimeZone>) -> Hlculid {
    Hlculid(window::id_bounds(ms_window(&range)).1)
}

/// The restriction estimator of `<@`: the fraction of the column's rows whose id lies in the
/// window, from its most common values and its histogram, interpolating inside buckets on the
/// ids' time. Without statistics, or when the range is not known at plan time, PostgreSQL's
/// default for a range condition (0.005).
///
/// # Safety
/// Called by the planner with a valid `fcinfo` for `(internal, oid, internal, int4)`.
#[pg_guard]
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn hlculid_in_range_sel(
    fcinfo: pg_sys::FunctionCallInfo,
) -> pg_sys::Datum {
    // SAFETY: the planner passes (PlannerInfo *, operator, List *args, varRelid).
    let sel = unsafe {
        let root =
            pgrx::fcinfo::pg_getarg_datum_raw(fcinfo, 0).cast_mut_ptr::<pg_sys::PlannerInfo>();
        let args = pgrx::fcinfo::pg_getarg_datum_raw(fcinfo, 2).cast_mut_ptr::<pg_sys::List>();
        let var_relid = pgrx::fcinfo::pg_getarg::<i32>(fcinfo, 3).unwrap_or(0);
        restriction_selectivity(root, args, var_relid)
    };
    sel.clamp(0.0, 1.0)
        .into_datum()
        .unwrap_or(pg_sys::Datum::from(0))
}

/// # Safety
/// Arguments as the planner passes them to a restriction estimator.
unsafe fn restriction_selectivity(
    root: *mut pg_sys::PlannerInfo,
    args: *mut pg_sys::List,
    var_relid: i32,
) -> f64 {
    let mut vardata = pg_sys::VariableStatData::default();
    let mut other: *mut pg_sys::Node = std::ptr::null_mut();
    let mut var_on_left = false; // either side: the constant's type says which is which
                                 // SAFETY: what every estimator does; it fills vardata (to be released) and folds the other
                                 // argument with estimate_expression_value. That evaluates the user's stable expressions (a
                                 // `now()`-relative range) and may raise their error (`tstzrange(NULL, now(), NULL::text)`),
                                 // at plan time, as PostgreSQL's own range estimator does for a timestamptz column: pgrx
                                 // re-raises it as PostgreSQL raised it (code, message, detail, hint; without a Rust backtrace,
                                 // `errors::no_backtraces`), and nothing here has anything to undo.
    let found = unsafe {
        pg_sys::get_restriction_variable(
            root,
            args,
            var_relid,
            &mut vardata,
            &mut other,
            &mut var_on_left,
        )
    };
    if !found {
        return pg_sys::DEFAULT_RANGE_INEQ_SEL;
    }
    // SAFETY: `other` is a valid node; a Const's value is a tstzrange datum (the operator's right
    // argument type), NULL or not.
    let sel = unsafe {
        // the column is the id and the constant the range, on either side (`<@` and `@>`)
        if !pgrx::is_a(other, pg_sys::NodeTag::T_Const)
            || (*other.cast::<pg_sys::Const>()).consttype != pg_sys::TSTZRANGEOID
        {
            pg_sys::DEFAULT_RANGE_INEQ_SEL
        } else {
            let c = other.cast::<pg_sys::Const>();
            if (*c).constisnull {
                0.0
            } else {
                let range = Range::<TimestampWithTimeZone>::from_polymorphic_datum(
                    (*c).constvalue,
                    false,
                    (*c).consttype,
                );
                match range {
                    Some(r) => column_fraction(&vardata, ms_window(&r)),
                    None => pg_sys::DEFAULT_RANGE_INEQ_SEL,
                }
            }
        }
    };
    // SAFETY: ReleaseVariableStats: the stats tuple, when there is one, is freed by its freefunc.
    unsafe {
        if !vardata.statsTuple.is_null() {
            if let Some(free) = vardata.freefunc {
                free(vardata.statsTuple);
            }
        }
    }
    sel
}

/// The fraction of the column's rows in a window of milliseconds, from its statistics.
///
/// # Safety
/// `vardata` as filled by `get_restriction_variable`, not yet released.
unsafe fn column_fraction(vardata: &pg_sys::VariableStatData, window: Option<(u64, u64)>) -> f64 {
    let stats = vardata.statsTuple;
    if stats.is_null() {
        return pg_sys::DEFAULT_RANGE_INEQ_SEL;
    }
    // SAFETY: a pg_statistic tuple, whose fixed part is FormData_pg_statistic; the slots hold
    // this column's values (hlculid: 16 bytes by reference) and their frequencies.
    unsafe {
        let nullfrac = f64::from(
            (*pg_sys::heap_tuple_get_struct::<pg_sys::FormData_pg_statistic>(stats)).stanullfrac,
        );
        let read = |d: pg_sys::Datum| Id(*d.cast_mut_ptr::<[u8; 16]>());
        let in_window = |id: Id| window.is_some_and(|(a, b)| (a..=b).contains(&id.ms()));

        let mut mcv_sel = 0.0;
        let mut mcv_total = 0.0;
        let mut slot = pg_sys::AttStatsSlot::default();
        let flags = (pg_sys::ATTSTATSSLOT_VALUES | pg_sys::ATTSTATSSLOT_NUMBERS) as i32;
        if pg_sys::get_attstatsslot(
            &mut slot,
            stats,
            pg_sys::STATISTIC_KIND_MCV as i32,
            pg_sys::InvalidOid,
            flags,
        ) {
            for i in 0..slot.nvalues.min(slot.nnumbers) as usize {
                let freq = f64::from(*slot.numbers.add(i));
                mcv_total += freq;
                if in_window(read(*slot.values.add(i))) {
                    mcv_sel += freq;
                }
            }
            pg_sys::free_attstatsslot(&mut slot);
        }

        let mut slot = pg_sys::AttStatsSlot::default();
        let hist_sel = if pg_sys::get_attstatsslot(
            &mut slot,
            stats,
            pg_sys::STATISTIC_KIND_HISTOGRAM as i32,
            pg_sys::InvalidOid,
            pg_sys::ATTSTATSSLOT_VALUES as i32,
        ) {
            let bounds: Vec<f64> = (0..slot.nvalues as usize)
                .map(|i| window::position(read(*slot.values.add(i))))
                .collect();
            pg_sys::free_attstatsslot(&mut slot);
            window::fraction_in(&bounds, window)
        } else {
            0.0
        };
        mcv_sel + hist_sel * (1.0 - nullfrac - mcv_total).max(0.0)
    }
}

/// The planner support function of `hlculid_in_range`: for an index on the id (btree, or BRIN
/// with `hlculid_minmax_ops`), `id <@ r` becomes `id >= hlculid_range_min(r) AND
/// id <= hlculid_range_max(r)`, exactly the same rows, for a constant range or one computed at
/// run time (`now()`-relative).
///
/// # Safety
/// Called by the planner with a valid `fcinfo` whose one argument is a support request node.
#[pg_guard]
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn hlculid_in_range_support(
    fcinfo: pg_sys::FunctionCallInfo,
) -> pg_sys::Datum {
    // SAFETY: the argument is a Node (a SupportRequest*); only an index-condition request is
    // answered, through the planner's own helpers, with nodes made in the planner's context.
    unsafe {
        let req = pgrx::fcinfo::pg_getarg_datum_raw(fcinfo, 0).cast_mut_ptr::<pg_sys::Node>();
        if !pgrx::is_a(req, pg_sys::NodeTag::T_SupportRequestIndexCondition) {
            return pg_sys::Datum::from(0);
        }
        let req = req.cast::<pg_sys::SupportRequestIndexCondition>();
        match index_conditions(req) {
            Some(list) => {
                (*req).lossy = false;
                pg_sys::Datum::from(list)
            }
            None => pg_sys::Datum::from(0),
        }
    }
}

/// # Safety
/// `req` is the planner's valid index-condition request.
unsafe fn index_conditions(
    req: *mut pg_sys::SupportRequestIndexCondition,
) -> Option<*mut pg_sys::List> {
    // SAFETY: as for the caller; the clause is an OpExpr or FuncExpr of hlculid_in_range, whose
    // two arguments are the id and the range.
    unsafe {
        let node = (*req).node;
        let args = if pgrx::is_a(node, pg_sys::NodeTag::T_OpExpr) {
            (*node.cast::<pg_sys::OpExpr>()).args
        } else if pgrx::is_a(node, pg_sys::NodeTag::T_FuncExpr) {
            (*node.cast::<pg_sys::FuncExpr>()).args
        } else {
            return None;
        };
        let args = PgList::<pg_sys::Node>::from_pg(args);
        if args.len() != 2 {
            return None;
        }
        // `id <@ r` or `r @> id`: the index matched the id, the other argument is the range
        let (key, range) = match (*req).indexarg {
            0 => (args.get_ptr(0)?, args.get_ptr(1)?),
            1 => (args.get_ptr(1)?, args.get_ptr(0)?),
            _ => return None,
        };
        if pg_sys::exprType(range) != pg_sys::TSTZRANGEOID {
            return None;
        }
        // the range must be computable before the scan: no column of the indexed table in it
        if !pg_sys::is_pseudo_constant_for_index((*req).root, range, (*req).index) {
            return None;
        }
        let id_type = pg_sys::exprType(key);
        let opfamily = (*req).opfamily;
        let ge = pg_sys::get_opfamily_member(
            opfamily,
            id_type,
            id_type,
            pg_sys::BTGreaterEqualStrategyNumber as i16,
        );
        let le = pg_sys::get_opfamily_member(
            opfamily,
            id_type,
            id_type,
            pg_sys::BTLessEqualStrategyNumber as i16,
        );
        if ge == pg_sys::InvalidOid || le == pg_sys::InvalidOid {
            return None;
        }
        // A constant range gives constant bounds, as the explicit form would write them; any
        // other range, calls evaluated once when the scan starts.
        let (lo, hi) = match constant_bounds(range, id_type) {
            Some(bounds) => bounds,
            None => {
                let schema = pg_sys::get_func_namespace((*req).funcid);
                (
                    bound_call(schema, c"hlculid_range_min", id_type, range)?,
                    bound_call(schema, c"hlculid_range_max", id_type, range)?,
                )
            }
        };
        let mut out = PgList::<pg_sys::Expr>::new();
        for (op, bound) in [(ge, lo), (le, hi)] {
            out.push(pg_sys::make_opclause(
                op,
                pg_sys::BOOLOID,
                false,
                pg_sys::copyObjectImpl(key.cast()).cast(),
                bound,
                pg_sys::InvalidOid,
                (*req).indexcollation,
            ));
        }
        Some(out.into_pg())
    }
}

/// The first and last id of a constant, non-NULL range, as constants of the id type.
///
/// # Safety
/// `range` is a valid expression of type tstzrange.
unsafe fn constant_bounds(
    range: *mut pg_sys::Node,
    id_type: pg_sys::Oid,
) -> Option<(*mut pg_sys::Expr, *mut pg_sys::Expr)> {
    // SAFETY: a Const of the range type holds a tstzrange datum; the new constants point at 16
    // bytes palloc'd in the planner's context, the type's length and by-reference storage.
    unsafe {
        if !pgrx::is_a(range, pg_sys::NodeTag::T_Const) {
            return None;
        }
        let c = range.cast::<pg_sys::Const>();
        if (*c).constisnull {
            return None;
        }
        let r = Range::<TimestampWithTimeZone>::from_polymorphic_datum(
            (*c).constvalue,
            false,
            (*c).consttype,
        )?;
        let (lo, hi) = window::id_bounds(ms_window(&r));
        let make = |id: Id| {
            let p = pg_sys::palloc(16).cast::<[u8; 16]>();
            p.write(id.0);
            pg_sys::makeConst(
                id_type,
                -1,
                pg_sys::InvalidOid,
                16,
                pg_sys::Datum::from(p),
                false,
                false,
            )
            .cast::<pg_sys::Expr>()
        };
        Some((make(lo), make(hi)))
    }
}

/// A call of the extension's `name(tstzrange)` (in `schema`, the extension's own) on the range.
///
/// # Safety
/// `range` is a valid expression of type tstzrange.
unsafe fn bound_call(
    schema: pg_sys::Oid,
    name: &std::ffi::CStr,
    id_type: pg_sys::Oid,
    range: *mut pg_sys::Node,
) -> Option<*mut pg_sys::Expr> {
    // SAFETY: a catalog lookup by (schema, name, argument type), and nodes built with the
    // planner's constructors in its memory context.
    unsafe {
        let range_type = pg_sys::exprType(range);
        let func = pg_sys::GetSysCacheOid(
            pg_sys::SysCacheIdentifier::PROCNAMEARGSNSP as i32,
            pg_sys::Anum_pg_proc_oid as i16,
            pg_sys::Datum::from(name.as_ptr()),
            pg_sys::Datum::from(pg_sys::buildoidvector(&range_type, 1)),
            pg_sys::Datum::from(schema),
            pg_sys::Datum::from(0),
        );
        if func == pg_sys::InvalidOid {
            return None;
        }
        let args = PgList::<pg_sys::Node>::new();
        let mut args = args;
        args.push(pg_sys::copyObjectImpl(range.cast()).cast());
        Some(
            pg_sys::makeFuncExpr(
                func,
                id_type,
                args.into_pg(),
                pg_sys::InvalidOid,
                pg_sys::InvalidOid,
                pg_sys::CoercionForm::COERCE_EXPLICIT_CALL,
            )
            .cast(),
        )
    }
}

v1_function_info!(pg_finfo_hlculid_in_range_sel);
v1_function_info!(pg_finfo_hlculid_in_range_support);

extension_sql!(
    r#"
CREATE FUNCTION hlculid_in_range_sel(internal, oid, internal, integer) RETURNS float8
    STABLE STRICT PARALLEL SAFE
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_in_range_sel';
CREATE FUNCTION hlculid_in_range_support(internal) RETURNS internal
    STABLE STRICT PARALLEL SAFE
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_in_range_support';
CREATE FUNCTION hlculid_in_range(id hlculid, range tstzrange) RETURNS boolean
    IMMUTABLE STRICT PARALLEL SAFE
    SUPPORT hlculid_in_range_support
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_in_range_wrapper';
CREATE OPERATOR <@ (
    LEFTARG = hlculid,
    RIGHTARG = tstzrange,
    FUNCTION = hlculid_in_range,
    RESTRICT = hlculid_in_range_sel,
    JOIN = contjoinsel
);
"#,
    name = "hlculid_window",
    requires = ["hlculid_type", hlculid_range_min, hlculid_range_max],
);

// `tstzrange @> id` (0.5.0): in its own source, which the upgrade script includes too.
extension_sql_file!(
    "../../sql/src/range_contains.sql",
    name = "hlculid_range_contains",
    requires = ["hlculid_window"],
);
