//! The restriction estimator of `id <@ tstzrange`: the column's most common values and histogram,
//! interpolated inside buckets on the ids' time (the built-in inequality estimators interpolate
//! only for types they know).

use super::ms_window;
use hlculid_core::window;
use hlculid_core::Id;
use pgrx::prelude::*;
use pgrx::FromDatum;

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

v1_function_info!(pg_finfo_hlculid_in_range_sel);
