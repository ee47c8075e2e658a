//! The planner support function of `hlculid_in_range`: `id <@ r` becomes exact index conditions
//! on the id, `id >= hlculid_range_min(r) AND id <= hlculid_range_max(r)`, for btree and BRIN.

use super::ms_window;
use hlculid_core::window;
use hlculid_core::Id;
use pgrx::prelude::*;
use pgrx::{FromDatum, PgList};

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

v1_function_info!(pg_finfo_hlculid_in_range_support);
