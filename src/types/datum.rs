//! The `hlculid` SQL type: a fixed 16-byte pass-by-reference datum laid out like `uuid`
//! (`typlen` 16, `ALIGNMENT char`, `STORAGE plain`), and the glue that moves it between
//! PostgreSQL datums and Rust. The bytes are big-endian, so memcmp order is value order.

use hlculid_core::Id;
use pgrx::callconv::{Arg, ArgAbi, BoxRet, FcInfo};
use pgrx::datum::{Datum, UnboxDatum};
use pgrx::pgrx_sql_entity_graph::metadata::{
    ArgumentError, ReturnsError, ReturnsRef, SqlMappingRef, SqlTranslatable, TypeOrigin,
};
use pgrx::prelude::*;

#[repr(transparent)]
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Hlculid(pub Id);

impl Hlculid {
    /// Reads the 16 bytes a datum points to. The pointer may have any alignment
    /// (`ALIGNMENT char`), so this is a byte copy, never a `u128` load.
    ///
    /// # Safety
    /// `d` must point to at least 16 readable bytes.
    #[inline]
    pub unsafe fn read(d: pg_sys::Datum) -> Self {
        // SAFETY: the caller guarantees 16 readable bytes; the read is unaligned.
        Hlculid(Id(unsafe { d.cast_mut_ptr::<[u8; 16]>().read_unaligned() }))
    }

    /// Copies the value into a fresh palloc'd datum in the current memory context.
    #[inline]
    pub fn to_datum(self) -> pg_sys::Datum {
        // SAFETY: palloc returns 16 writable bytes or raises (never NULL); the write is unaligned.
        unsafe {
            let p = pg_sys::palloc(16).cast::<[u8; 16]>();
            p.write_unaligned(self.0 .0);
            pg_sys::Datum::from(p)
        }
    }
}

// SAFETY: the SQL type named here is this extension's 16-byte `hlculid`, the layout `read` and
// `to_datum` use.
unsafe impl SqlTranslatable for Hlculid {
    const TYPE_IDENT: &'static str = pgrx::pgrx_resolved_type!(Hlculid);
    const TYPE_ORIGIN: TypeOrigin = TypeOrigin::ThisExtension;
    const ARGUMENT_SQL: Result<SqlMappingRef, ArgumentError> =
        Ok(SqlMappingRef::literal("hlculid"));
    const RETURN_SQL: Result<ReturnsRef, ReturnsError> =
        Ok(ReturnsRef::One(SqlMappingRef::literal("hlculid")));
}

impl FromDatum for Hlculid {
    #[inline]
    unsafe fn from_polymorphic_datum(
        datum: pg_sys::Datum,
        is_null: bool,
        _: pg_sys::Oid,
    ) -> Option<Self> {
        if is_null {
            None
        } else {
            // SAFETY: a non-null datum of type hlculid points to its 16 bytes.
            Some(unsafe { Hlculid::read(datum) })
        }
    }
}

impl IntoDatum for Hlculid {
    #[inline]
    fn into_datum(self) -> Option<pg_sys::Datum> {
        Some(self.to_datum())
    }

    fn type_oid() -> pg_sys::Oid {
        pgrx::wrappers::regtypein("pg_catalog.hlculid")
    }
}

// SAFETY: `unbox` reads the value out of the datum (a copy), so the result borrows nothing.
unsafe impl UnboxDatum for Hlculid {
    type As<'src> = Hlculid;
    #[inline]
    unsafe fn unbox<'src>(d: Datum<'src>) -> Self::As<'src>
    where
        Self: 'src,
    {
        // SAFETY: pgrx unboxes only non-null datums of this type: pointers to 16 bytes.
        unsafe { Hlculid::read(d.sans_lifetime()) }
    }
}

// SAFETY: arguments are unboxed through `FromDatum`, which copies the 16 bytes out.
unsafe impl<'fcx> ArgAbi<'fcx> for Hlculid
where
    Self: 'fcx,
{
    unsafe fn unbox_arg_unchecked(arg: Arg<'_, 'fcx>) -> Self {
        let index = arg.index();
        // SAFETY: the argument is of type hlculid, as the SQL signature says.
        unsafe {
            arg.unbox_arg_using_from_datum()
                .unwrap_or_else(|| panic!("argument {index} must not be null"))
        }
    }
}

// SAFETY: the returned datum is a fresh palloc'd copy in the call's memory context.
unsafe impl BoxRet for Hlculid {
    unsafe fn box_into<'fcx>(self, fcinfo: &mut FcInfo<'fcx>) -> Datum<'fcx> {
        // SAFETY: the datum is a valid hlculid, the function's declared return type.
        unsafe { fcinfo.return_raw_datum(self.to_datum()) }
    }
}

extension_sql!(
    "CREATE TYPE hlculid; -- shell, completed below once its I/O functions exist",
    name = "hlculid_shell",
    bootstrap
);

extension_sql!(
    r#"
CREATE TYPE hlculid (
    INTERNALLENGTH = 16,
    INPUT = hlculid_in,
    OUTPUT = hlculid_out,
    RECEIVE = hlculid_recv,
    SEND = hlculid_send,
    ALIGNMENT = char,
    STORAGE = plain
);
COMMENT ON TYPE hlculid IS '128-bit time-ordered id: 48-bit Unix ms, 16-bit hybrid logical clock counter, 16-bit publisher, 48 random bits';
"#,
    name = "hlculid_type",
    creates = [Type(Hlculid)],
    requires = [
        "hlculid_shell",
        io::hlculid_in,
        "hlculid_out",
        "hlculid_binary_io"
    ],
);
