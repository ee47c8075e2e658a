//! Raising errors the PostgreSQL way: a SQLSTATE, a short lower-case message, an optional
//! DETAIL and HINT (full sentences), and soft errors for input functions where the caller asks
//! for them (`pg_input_is_valid`, COPY ... ON_ERROR, PostgreSQL 16+).
//!
//! [`CONDITIONS`] is the one list of what can go wrong and its SQLSTATE: every error is raised
//! through a [`Condition`], and the table of docs/errors.md is tested against the list.

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::PgLogLevel;
use std::ffi::CStr;

/// No error of hlculid carries a Rust backtrace. pgrx re-raises an ERROR PostgreSQL raised under
/// one of our calls (a user's expression folded by the window estimator, a trigger or a grant
/// under SPI) and reports a Rust panic, and to either it appends the backtrace its panic hook
/// took with `Backtrace::capture`, 40 lines in the DETAIL a client sees, whenever the server was
/// started with `RUST_BACKTRACE` set. `RUST_LIB_BACKTRACE=0` turns that capture off whatever
/// `RUST_BACKTRACE` says (it does not touch the panic messages `RUST_BACKTRACE` governs), so the
/// error is PostgreSQL's own (code, message, detail, hint, location), or ours. Set while the
/// library loads, before anything of ours can panic: in the postmaster when preloaded (its
/// children inherit it), else in the backend that loads it. Programs the server starts
/// (`archive_command`, `COPY ... PROGRAM`) inherit it too, which only stops Rust programs among
/// them from capturing backtraces for their own errors.
pub fn no_backtraces() {
    // A PostgreSQL process has one thread, so nothing reads the environment meanwhile.
    std::env::set_var("RUST_LIB_BACKTRACE", "0");
}

/// Every condition hlculid reports, each with one SQLSTATE wherever it arises.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Condition {
    InvalidText,
    /// Bytes that are not 16 long, from the binary protocol, binary COPY or a `bytea` cast alike:
    /// PostgreSQL's receive functions report a malformed value's bytes as 22P03.
    InvalidBinary,
    FieldOutOfRange,
    /// Any time an id cannot hold: an argument, the system clock, or the clock's end.
    TimeOutOfRange,
    InvalidParameter,
    /// A random (version 4) uuid cast to `hlculid`: a value of the wrong kind, reported as
    /// PostgreSQL's `jsonb` casts report one (22023).
    RandomUuid,
    /// `hlculid_from_uuidv7` of a uuid that is not RFC 9562 version 7: a value of the wrong kind.
    NotUuidv7,
    NotSuperuser,
    /// More ids in one transaction than `hlculid_generate_tx`'s 32-bit offset counts.
    TxTooManyIds,
    MarkDamaged,
    NotPreloaded,
    /// A bigint id asked of a server whose publisher id does not fit 10 bits.
    PublisherTooWide,
    MarkWriteFailed,
    /// A generating function on a server whose postgresql.conf sets `hlculid.publisher_id` to a
    /// value PostgreSQL refused.
    PublisherSettingInvalid,
    /// `hlculid_horizon()` on a standby (or any server in recovery): it makes no ids.
    HorizonOnStandby,
    /// `hlculid_horizon()` in a REPEATABLE READ or SERIALIZABLE transaction, whose snapshot
    /// predates the horizon.
    HorizonInSnapshotTransaction,
    /// `hlculid_mask` and the others with no key to read.
    MaskKeyMissing,
    /// A line of the key file that is not a key (its text is never shown).
    MaskKeyInvalid,
    /// A generator in a parallel worker, whose commit comes before its leader's.
    GenerateInParallelWorker,
    /// PREPARE of a transaction that made ids when every prepared transaction's place is taken:
    /// PostgreSQL's own limit, raised as PostgreSQL raises it (our hold is taken first).
    PreparedTransactionsFull,
    /// A helper that writes a user's table (it acts as the table's owner), called by a role that
    /// may not act as that owner.
    NotTableOwner,
    /// A table given by an OID that names none.
    UndefinedTable,
    /// A NULL where a value is needed (a consumer's name, a wait's timeout).
    NullArgument,
    /// `hlculid_consumer_wait` of a consumer that does not exist.
    UndefinedConsumer,
    /// The cluster horizon on a server without Citus.
    CitusMissing,
    /// A node of the Citus cluster that does not answer the cluster horizon's worker.
    NodeUnreachable,
    /// Two nodes of a Citus cluster with one publisher id: the cluster horizon refuses, and the
    /// node that started later makes no ids.
    PublisherShared,
    /// The cluster horizon asked in a database its worker does not serve, or with no worker.
    ClusterHorizonNotKept,
    /// A wait called inside another wait's check (a row-level security policy or a view that
    /// calls `hlculid_wait`): a backend waits once at a time.
    WaitInsideWait,
    /// Never expected: a bug, or the operating system refusing random bytes.
    Internal,
}

/// One row of the error table of docs/errors.md: condition, SQLSTATE, its PostgreSQL name, when.
/// The table and what builds it exist for the test of that table only: nothing of it is in the
/// release library.
#[cfg(any(test, feature = "pg_test"))]
pub struct ConditionInfo {
    pub condition: Condition,
    pub sqlstate: &'static str,
    pub name: &'static str,
    pub when: &'static str,
}

#[cfg(any(test, feature = "pg_test"))]
const fn info(
    condition: Condition,
    sqlstate: &'static str,
    name: &'static str,
    when: &'static str,
) -> ConditionInfo {
    ConditionInfo {
        condition,
        sqlstate,
        name,
        when,
    }
}

#[cfg(any(test, feature = "pg_test"))]
pub const CONDITIONS: &[ConditionInfo] = &[
    info(Condition::InvalidText, "22P02", "invalid_text_representation",
        "malformed text input (the message shows the input, the DETAIL what is wrong)"),
    info(Condition::InvalidBinary, "22P03", "invalid_binary_representation",
        "bytes that are not exactly 16: binary input, binary `COPY`, a `bytea` cast"),
    info(Condition::FieldOutOfRange, "22003", "numeric_value_out_of_range",
        "`hlculid_from_parts` with a counter, publisher or random part out of range (the message names the part); `hlculid_to_bigint` of an id whose counter is over 2047, publisher over 1023 or time after 2109; a negative bigint given to a bigint id's function, and 0 or a negative one to `hlculid_mask_bigint`, `hlculid_unmask_bigint` or `hlculid_unmask_bigint_any` (a bigint id, masked or not, is 1 or more); `hlculid_backfill_ids` with a publisher outside 0-65535"),
    info(Condition::TimeOutOfRange, "22008", "datetime_field_overflow",
        "a time an id cannot hold: before 1970, after 10889-08-02 or infinite (`hlculid_min/max`, `hlculid_from_parts`, `hlculid_generate_at`, `hlculid_backfill_ids`, which also raises it when the last millisecond's counter is full), for a bigint id after 2109-05-15 07:35:11.103 UTC (`hlculid_bigint_min/max`); a system clock at or before 1970-01-01 00:00:00 UTC or after 10889 (generating functions, `hlculid_observe`); a clock that reached the end of the range (of bigint ids: 2109, for the bigint generators)"),
    info(Condition::InvalidParameter, "22023", "invalid_parameter_value",
        "`hlculid_observe` of an id further ahead of the local clock than `hlculid.max_clock_skew`; `hlculid_clock_recover` of such a floor without `allow_future`; `hlculid_generate_n` and `hlculid_generate_bigint_n` of fewer than 1 or more than 65536 ids; `hlculid_backfill_ids` of a NULL time or of times out of order; `hlculid_wait` and `hlculid_consumer_wait` with a negative timeout; `hlculid_cluster_horizon()` of a NULL or negative `max_wait`"),
    info(Condition::RandomUuid, "22023", "invalid_parameter_value",
        "a random uuid (version 4 with the RFC 9562 variant) cast to `hlculid`, e.g. `gen_random_uuid()` inserted into an `hlculid` column, or read from text in the uuid's 8-4-4-4-12 form, `COPY` included"),
    info(Condition::NotUuidv7, "22023", "invalid_parameter_value",
        "`hlculid_from_uuidv7` of a uuid that is not an RFC 9562 version 7 uuid (version field 7, variant bits 10)"),
    info(Condition::NotSuperuser, "42501", "insufficient_privilege",
        "`hlculid_clock_recover` by a role that is not a superuser"),
    info(Condition::TxTooManyIds, "54000", "program_limit_exceeded",
        "`hlculid_generate_tx` asked for more than 4294967295 (2^32 - 1) ids in one transaction"),
    info(Condition::MarkDamaged, "XX001", "data_corrupted",
        "any generating function (and `hlculid_observe`) while the high-water mark file was damaged at server start, until `hlculid_clock_recover`"),
    info(Condition::PublisherTooWide, "55000", "object_not_in_prerequisite_state",
        "`hlculid_generate_bigint` and `hlculid_generate_bigint_n` on a server whose publisher id is over 1023"),
    info(Condition::NotPreloaded, "55000", "object_not_in_prerequisite_state",
        "a function that uses the server's clock without `shared_preload_libraries`: the generating functions (`hlculid_generate_at` too), `hlculid_observe`, `hlculid_clock()`, `hlculid_clock_bound()`, `hlculid_clock_recover`, the horizon functions, the mask functions"),
    info(Condition::MarkWriteFailed, "58030", "io_error",
        "the high-water mark file cannot be written (disk full, read-only): no id is issued until it is, then generation resumes by itself; `PREPARE TRANSACTION` of a transaction that made ids when its horizon hold cannot be written"),
    info(Condition::PublisherSettingInvalid, "55000", "object_not_in_prerequisite_state",
        "a generating function on a server whose postgresql.conf sets `hlculid.publisher_id` to a value PostgreSQL refused (out of range, not a number): no ids under a derived id until it is fixed"),
    info(Condition::HorizonOnStandby, "55000", "object_not_in_prerequisite_state",
        "`hlculid_horizon()`, `hlculid_horizon_bigint()`, `hlculid_read()` during recovery (a standby): read below `hlculid_watermark()` there"),
    info(Condition::HorizonInSnapshotTransaction, "0A000", "feature_not_supported",
        "`hlculid_horizon()`, `hlculid_horizon_bigint()`, `hlculid_horizon_catch_up()`, `hlculid_watermark()`, `hlculid_cluster_horizon()` and the readers `hlculid_read()` and `hlculid_read_watermark()` (and `hlculid_publish_horizon()`, through the catch-up) in a REPEATABLE READ or SERIALIZABLE transaction: take the horizon or watermark before `BEGIN`. One check for all, `hlculid_require_read_committed`, naming the function called; READ UNCOMMITTED passes, as PostgreSQL runs it as READ COMMITTED"),
    info(Condition::MaskKeyMissing, "55000", "object_not_in_prerequisite_state",
        "`hlculid_mask`, `hlculid_unmask` and the other mask functions on a server without a readable key: `hlculid.mask_key_file` not set, the file missing, unreadable, empty or readable by every user of the machine"),
    info(Condition::MaskKeyInvalid, "22023", "invalid_parameter_value",
        "a mask function when a line of the key file is not 32 hexadecimal digits; the message gives the line, its length or the position of the first wrong character, never the key"),
    info(Condition::GenerateInParallelWorker, "25000", "invalid_transaction_state",
        "a generating function called in a parallel worker (from a user's function marked PARALLEL SAFE): its ids could pass a reader's horizon before the leader commits them"),
    info(Condition::PreparedTransactionsFull, "53200", "out_of_memory",
        "`PREPARE TRANSACTION` of a transaction that made ids when `max_prepared_transactions` transactions are prepared already: PostgreSQL's own \"maximum number of prepared transactions reached\""),
    info(Condition::NotTableOwner, "42501", "insufficient_privilege",
        "`hlculid_create_partitions`, `hlculid_drop_partitions` and `hlculid_backfill` called by a role that is neither the table's owner, a member of the owner's role, nor a superuser: they run the table's code as its owner; or when that code left something in the caller's session (an object in its temporary schema, an open cursor), which the error undoes; `hlculid_wake_waiters_at_commit` by a role without SELECT on the table; `hlculid_pin_schema` by a role that is not the owner of the table (nor a member of its role) nor of a table it is a partition of; `hlculid_read_lock` by a role without SELECT on the table or any of its columns"),
    info(Condition::UndefinedTable, "42P01", "undefined_table",
        "a partition or backfill helper, `hlculid_pin_schema` or `hlculid_read_lock`, given a table OID (`12345::regclass`) that names no table; a reader (`hlculid_read`, `hlculid_read_below`, `hlculid_read_key`, `hlculid_consume`) or a wait whose table's name gave another relation when its query was parsed (its schema renamed and another relation put in its place): nothing of that relation runs"),
    info(Condition::NullArgument, "22004", "null_value_not_allowed",
        "`hlculid_wait` and `hlculid_consumer_wait` with a NULL timeout, `hlculid_consumer_wait` with a NULL consumer"),
    info(Condition::UndefinedConsumer, "42704", "undefined_object",
        "`hlculid_consumer_wait` of a consumer the calling role does not have (another role's consumer of that name is not the caller's), or that is dropped while it waits"),
    info(Condition::CitusMissing, "55000", "object_not_in_prerequisite_state",
        "`hlculid_cluster_horizon()` in a database without Citus"),
    info(Condition::NodeUnreachable, "08006", "connection_failure",
        "`hlculid_cluster_horizon()` when a node of the Citus cluster has not answered the worker and the last horizon published is older than `max_wait`; the DETAIL names the node"),
    info(Condition::PublisherShared, "55000", "object_not_in_prerequisite_state",
        "`hlculid_cluster_horizon()` while two nodes of the Citus cluster share a publisher id; the generating functions on the node of the two that started later, until one of them gets another id; the HINT names the other node"),
    info(Condition::ClusterHorizonNotKept, "55000", "object_not_in_prerequisite_state",
        "`hlculid_cluster_horizon()` in a database other than `hlculid.cluster_horizon_database`, or while its worker is not running"),
    info(Condition::WaitInsideWait, "0A000", "feature_not_supported",
        "`hlculid_wait` or `hlculid_consumer_wait` called inside another wait's check (from a row-level security policy or a view the check reads): a session waits once at a time"),
    info(Condition::Internal, "XX000", "internal_error",
        "never expected: a bug, or the operating system refusing random bytes"),
];

#[cfg(any(test, feature = "pg_test"))]
impl Condition {
    /// Its row's position in [`CONDITIONS`]. The match is exhaustive, so a new condition does not
    /// compile until it has a row; the errors page's test checks each row is at its position.
    pub const fn row(self) -> usize {
        match self {
            Condition::InvalidText => 0,
            Condition::InvalidBinary => 1,
            Condition::FieldOutOfRange => 2,
            Condition::TimeOutOfRange => 3,
            Condition::InvalidParameter => 4,
            Condition::RandomUuid => 5,
            Condition::NotUuidv7 => 6,
            Condition::NotSuperuser => 7,
            Condition::TxTooManyIds => 8,
            Condition::MarkDamaged => 9,
            Condition::PublisherTooWide => 10,
            Condition::NotPreloaded => 11,
            Condition::MarkWriteFailed => 12,
            Condition::PublisherSettingInvalid => 13,
            Condition::HorizonOnStandby => 14,
            Condition::HorizonInSnapshotTransaction => 15,
            Condition::MaskKeyMissing => 16,
            Condition::MaskKeyInvalid => 17,
            Condition::GenerateInParallelWorker => 18,
            Condition::PreparedTransactionsFull => 19,
            Condition::NotTableOwner => 20,
            Condition::UndefinedTable => 21,
            Condition::NullArgument => 22,
            Condition::UndefinedConsumer => 23,
            Condition::CitusMissing => 24,
            Condition::NodeUnreachable => 25,
            Condition::PublisherShared => 26,
            Condition::ClusterHorizonNotKept => 27,
            Condition::WaitInsideWait => 28,
            Condition::Internal => 29,
        }
    }
}

/// A row of the error table of docs/errors.md that PostgreSQL itself raises for hlculid's objects (so no
/// [`Condition`] of ours), with the statements that raise it (the table's test runs them).
#[cfg(any(test, feature = "pg_test"))]
pub struct RaisedByPostgres {
    pub sqlstate: &'static str,
    pub name: &'static str,
    pub when: &'static str,
    pub statements: &'static [&'static str],
}

#[cfg(any(test, feature = "pg_test"))]
pub const RAISED_BY_POSTGRES: &[RaisedByPostgres] = &[RaisedByPostgres {
    sqlstate: "55P02",
    name: "cant_change_runtime_param",
    when: "`SET hlculid.publisher_id` / `hlculid.max_clock_skew` (raised by PostgreSQL)",
    statements: &[
        "SET hlculid.publisher_id = 5",
        "SET hlculid.max_clock_skew = '1s'",
    ],
}];

impl Condition {
    pub fn code(self) -> PgSqlErrorCode {
        use PgSqlErrorCode::*;
        match self {
            Condition::InvalidText => ERRCODE_INVALID_TEXT_REPRESENTATION,
            Condition::InvalidBinary => ERRCODE_INVALID_BINARY_REPRESENTATION,
            Condition::FieldOutOfRange => ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            Condition::TimeOutOfRange => ERRCODE_DATETIME_FIELD_OVERFLOW,
            Condition::InvalidParameter
            | Condition::RandomUuid
            | Condition::NotUuidv7
            | Condition::MaskKeyInvalid => ERRCODE_INVALID_PARAMETER_VALUE,
            Condition::NotSuperuser | Condition::NotTableOwner => ERRCODE_INSUFFICIENT_PRIVILEGE,
            Condition::NullArgument => ERRCODE_NULL_VALUE_NOT_ALLOWED,
            Condition::UndefinedConsumer => ERRCODE_UNDEFINED_OBJECT,
            Condition::UndefinedTable => ERRCODE_UNDEFINED_TABLE,
            Condition::TxTooManyIds => ERRCODE_PROGRAM_LIMIT_EXCEEDED,
            Condition::MarkDamaged => ERRCODE_DATA_CORRUPTED,
            Condition::HorizonInSnapshotTransaction | Condition::WaitInsideWait => {
                ERRCODE_FEATURE_NOT_SUPPORTED
            }
            Condition::NotPreloaded
            | Condition::PublisherTooWide
            | Condition::HorizonOnStandby
            | Condition::PublisherSettingInvalid
            | Condition::MaskKeyMissing
            | Condition::CitusMissing
            | Condition::PublisherShared
            | Condition::ClusterHorizonNotKept => ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            Condition::NodeUnreachable => ERRCODE_CONNECTION_FAILURE,
            Condition::MarkWriteFailed => ERRCODE_IO_ERROR,
            Condition::GenerateInParallelWorker => ERRCODE_INVALID_TRANSACTION_STATE,
            Condition::PreparedTransactionsFull => ERRCODE_OUT_OF_MEMORY,
            Condition::Internal => ERRCODE_INTERNAL_ERROR,
        }
    }
}

/// One error a user can cause.
pub struct UserError {
    pub code: PgSqlErrorCode,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
}

impl UserError {
    /// 42P01 for a relation given by an OID that names none, as PostgreSQL words it.
    pub fn relation_missing(rel: pg_sys::Oid) -> ! {
        UserError::new(
            Condition::UndefinedTable,
            format!("relation with OID {} does not exist", u32::from(rel)),
        )
        .raise()
    }

    pub fn new(condition: Condition, message: impl Into<String>) -> Self {
        UserError {
            code: condition.code(),
            message: message.into(),
            detail: None,
            hint: None,
        }
    }

    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Reports at ERROR level; does not return.
    #[track_caller]
    pub fn raise(self) -> ! {
        let mut report = ErrorReport::new(self.code, self.message, "hlculid");
        if let Some(d) = self.detail {
            report = report.set_detail(d);
        }
        if let Some(h) = self.hint {
            report = report.set_hint(h);
        }
        report.report(PgLogLevel::ERROR);
        unreachable!("ERROR returned")
    }

    /// Reports as a soft error when the caller passed an `ErrorSaveContext`, otherwise raises.
    /// Returns only after saving a soft error; the caller then returns NULL. `function` is the
    /// C function raising it, as PostgreSQL records for the error's location.
    #[track_caller]
    pub fn raise_or_save(self, fcinfo: pg_sys::FunctionCallInfo, function: &'static CStr) {
        if !soft::try_save(fcinfo, &self, function) {
            self.raise()
        }
    }
}

#[cfg(any(feature = "pg16", feature = "pg17", feature = "pg18"))]
mod soft {
    use super::UserError;
    use crate::base::pg_c;
    use pgrx::prelude::*;
    use std::ffi::{CStr, CString};

    fn cstring(s: &str) -> CString {
        CString::new(s.replace('\0', "")).unwrap_or_default()
    }

    /// Fills the caller's ErrorSaveContext as `ereturn(escontext, ...)` would.
    pub fn try_save(
        fcinfo: pg_sys::FunctionCallInfo,
        e: &UserError,
        function: &'static CStr,
    ) -> bool {
        // SAFETY: fcinfo is the call's own FunctionCallInfo (checked for NULL), and its context
        // is either NULL or a valid Node, whose tag says whether it is an ErrorSaveContext.
        let ctx = unsafe {
            if fcinfo.is_null() {
                return false;
            }
            let ctx = (*fcinfo).context;
            if ctx.is_null() || (*ctx).type_ != pg_sys::NodeTag::T_ErrorSaveContext {
                return false;
            }
            ctx
        };
        let fmt = c"%s";
        // SAFETY: with a soft context these only record the error in it; they never jump. The
        // message strings are copied by the calls (each a NUL-terminated string that "%s"
        // consumes); the function name is kept by pointer, so it is 'static; no file is named,
        // since a Rust source path is no 'static C string.
        unsafe {
            if pg_sys::errsave_start(ctx, std::ptr::null()) {
                pg_c::errcode(e.code as i32);
                let msg = cstring(&e.message);
                pg_sys::errmsg_internal(fmt.as_ptr(), msg.as_ptr());
                if let Some(d) = &e.detail {
                    let d = cstring(d);
                    pg_sys::errdetail_internal(fmt.as_ptr(), d.as_ptr());
                }
                if let Some(h) = &e.hint {
                    let h = cstring(h);
                    pg_sys::errhint_plural(fmt.as_ptr(), fmt.as_ptr(), 1, h.as_ptr());
                }
                pg_sys::errsave_finish(ctx, std::ptr::null(), 0, function.as_ptr());
            }
        }
        true
    }
}

#[cfg(not(any(feature = "pg16", feature = "pg17", feature = "pg18")))]
mod soft {
    use super::UserError;
    use pgrx::prelude::*;
    use std::ffi::CStr;

    /// PostgreSQL 15 has no soft errors.
    pub fn try_save(_: pg_sys::FunctionCallInfo, _: &UserError, _: &'static CStr) -> bool {
        false
    }
}
