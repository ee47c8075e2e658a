//! Raising errors the PostgreSQL way: a SQLSTATE, a short lower-case message, an optional
//! DETAIL and HINT (full sentences), and soft errors for input functions where the caller asks
//! for them (`pg_input_is_valid`, COPY ... ON_ERROR, PostgreSQL 16+).

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::PgLogLevel;

/// One error a user can cause.
pub struct UserError {
    pub code: PgSqlErrorCode,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
}

impl UserError {
    pub fn new(code: PgSqlErrorCode, message: impl Into<String>) -> Self {
        UserError {
            code,
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
    /// Returns only after saving a soft error; the caller then returns NULL.
    #[track_caller]
    pub fn raise_or_save(self, fcinfo: pg_sys::FunctionCallInfo) {
        if !soft::try_save(fcinfo, &self) {
            self.raise()
        }
    }
}

#[cfg(any(feature = "pg16", feature = "pg17", feature = "pg18"))]
mod soft {
    use super::UserError;
    use pgrx::prelude::*;
    use std::ffi::CString;

    unsafe extern "C-unwind" {
        // Bound by pgrx only privately.
        fn errcode(sqlerrcode: core::ffi::c_int) -> core::ffi::c_int;
    }

    fn cstring(s: &str) -> CString {
        CString::new(s.replace('\0', "")).unwrap_or_default()
    }

    /// Fills the caller's ErrorSaveContext as `ereturn(escontext, ...)` would.
    pub fn try_save(fcinfo: pg_sys::FunctionCallInfo, e: &UserError) -> bool {
        unsafe {
            if fcinfo.is_null() {
                return false;
            }
            let ctx = (*fcinfo).context;
            if ctx.is_null() || (*ctx).type_ != pg_sys::NodeTag::T_ErrorSaveContext {
                return false;
            }
            // With a soft context these only record the error; they never jump.
            if pg_sys::errsave_start(ctx, std::ptr::null()) {
                let fmt = c"%s";
                errcode(e.code as i32);
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
                pg_sys::errsave_finish(ctx, c"hlculid".as_ptr(), 0, c"hlculid_in".as_ptr());
            }
            true
        }
    }
}

#[cfg(not(any(feature = "pg16", feature = "pg17", feature = "pg18")))]
mod soft {
    use super::UserError;
    use pgrx::prelude::*;

    /// PostgreSQL 15 and older have no soft errors.
    pub fn try_save(_: pg_sys::FunctionCallInfo, _: &UserError) -> bool {
        false
    }
}
