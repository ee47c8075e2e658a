//! Configuration: `hlculid.publisher_id`, `hlculid.max_clock_skew`, `hlculid.horizon_interval`,
//! `hlculid.horizon_database`, `hlculid.horizon_role` and `hlculid.mask_key_file`. All are set in postgresql.conf only (postmaster and sighup
//! contexts), so no ordinary role can change them.
//! They exist only when hlculid is in `shared_preload_libraries`.

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::prelude::*;
use std::ffi::{CStr, CString};
use std::sync::OnceLock;

/// -1 means "not set": derive one from the cluster's system identifier.
static PUBLISHER_ID: GucSetting<i32> = GucSetting::<i32>::new(-1);
static MAX_CLOCK_SKEW_MS: GucSetting<i32> = GucSetting::<i32>::new(500);
static HORIZON_INTERVAL_MS: GucSetting<i32> = GucSetting::<i32>::new(1000);
static HORIZON_DATABASE: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static HORIZON_ROLE: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static MASK_KEY_FILE: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static CLUSTER_DATABASE: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(c"postgres"));
static CLUSTER_INTERVAL_MS: GucSetting<f64> = GucSetting::<f64>::new(1.0);
static CLUSTER_CONNINFO: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// What postgresql.conf said for `hlculid.publisher_id` when PostgreSQL could not use it (out of
/// range, not a number): PostgreSQL then warns and keeps the default, which would derive an id
/// that may be another server's. Set in the postmaster while preloading; backends inherit it.
static PUBLISHER_INVALID: OnceLock<String> = OnceLock::new();

/// Called from `_PG_init` during `shared_preload_libraries` processing only: a postmaster-context
/// setting defined later is a FATAL error in PostgreSQL.
pub fn define() {
    // The placeholder PostgreSQL made from postgresql.conf, before defining replaces it.
    // SAFETY: a lookup by a static name; the result, if any, is copied before the GUC changes.
    let raw = unsafe {
        let p = pg_sys::GetConfigOption(c"hlculid.publisher_id".as_ptr(), true, false);
        (!p.is_null()).then(|| std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned())
    };
    GucRegistry::define_int_guc(
        c"hlculid.publisher_id",
        c"Publisher id embedded in every hlculid this server generates (0-65535, -1 = derive).",
        c"Give every server that generates ids its own value. When unset (-1), a value is derived from the cluster's system identifier, which standbys and copies of a data directory share.",
        &PUBLISHER_ID,
        -1,
        65535,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    if let Some(raw) = raw {
        if PUBLISHER_ID.get() == -1 && raw.trim() != "-1" {
            let _ = PUBLISHER_INVALID.set(raw);
        }
    }
    GucRegistry::define_int_guc(
        c"hlculid.max_clock_skew",
        c"How far ahead of the local clock an id passed to hlculid_observe() may be.",
        c"An observed id further ahead than this is rejected and leaves the clock unchanged.",
        &MAX_CLOCK_SKEW_MS,
        0,
        86_400_000,
        GucContext::Sighup,
        GucFlags::UNIT_MS,
    );
    GucRegistry::define_int_guc(
        c"hlculid.horizon_interval",
        c"How often the background worker writes this server's row of hlculid.hlculid_horizons (0 = never).",
        c"The row is written in the database named by hlculid.horizon_database; watermarks on subscribers lag by about this much.",
        &HORIZON_INTERVAL_MS,
        0,
        3_600_000,
        GucContext::Sighup,
        GucFlags::UNIT_MS,
    );
    GucRegistry::define_string_guc(
        c"hlculid.horizon_database",
        c"Database in which the background worker writes this server's row of hlculid.hlculid_horizons (unset = never).",
        c"The database whose publication carries the events and hlculid.hlculid_horizons; hlculid must be installed there.",
        &HORIZON_DATABASE,
        GucContext::Sighup,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"hlculid.horizon_role",
        c"Role the background worker connects as to write this server's row of hlculid.hlculid_horizons (unset = the bootstrap superuser).",
        c"A role with LOGIN and SELECT, INSERT and UPDATE on hlculid.hlculid_horizons: the worker then holds no superuser rights.",
        &HORIZON_ROLE,
        GucContext::Sighup,
        GucFlags::default(),
    );
    // A file, not the key: the postmaster logs every changed setting's value at reload.
    GucRegistry::define_string_guc(
        c"hlculid.mask_key_file",
        c"File holding the keys of hlculid_mask() and hlculid_unmask(), relative to the data directory.",
        c"One key a line (32 hexadecimal digits), the current one first, earlier ones after it for the _any lookups; readable by the server only.",
        &MASK_KEY_FILE,
        GucContext::Sighup,
        GucFlags::SUPERUSER_ONLY,
    );
    GucRegistry::define_string_guc(
        c"hlculid.cluster_horizon_database",
        c"Database in which the background worker keeps the Citus cluster horizon (empty = no worker).",
        c"The database that has Citus and hlculid; the worker runs where citus and hlculid are both preloaded.",
        &CLUSTER_DATABASE,
        GucContext::Sighup,
        GucFlags::default(),
    );
    GucRegistry::define_float_guc(
        c"hlculid.cluster_horizon_interval",
        c"Shortest time in milliseconds between two reads of every node's horizon while readers ask for the cluster horizon.",
        c"Once a second while no reader asks. Lower: a row is readable sooner after its commit, every node answers more queries.",
        &CLUSTER_INTERVAL_MS,
        0.0,
        1000.0,
        GucContext::Sighup,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"hlculid.cluster_horizon_conninfo",
        c"Connection options the cluster horizon worker adds to those of citus.node_conninfo when it connects to the nodes.",
        c"libpq keywords, e.g. sslmode or passfile; host, port, dbname and user are the worker's own.",
        &CLUSTER_CONNINFO,
        GucContext::Sighup,
        GucFlags::SUPERUSER_ONLY,
    );
    // SAFETY: called while loading the library, with a static C string.
    unsafe { pg_sys::MarkGUCPrefixReserved(c"hlculid".as_ptr()) };
}

/// Where the publisher id comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PublisherSource {
    Setting,
    SystemIdentifier,
    /// postgresql.conf sets `hlculid.publisher_id` to a value PostgreSQL refused: no ids are
    /// made until it is fixed (the id shown is the one that would be derived).
    InvalidSetting,
}

impl PublisherSource {
    pub fn describe(self) -> &'static str {
        match self {
            PublisherSource::Setting => "hlculid.publisher_id",
            PublisherSource::SystemIdentifier => "system identifier",
            PublisherSource::InvalidSetting => "invalid hlculid.publisher_id",
        }
    }
}

/// The value postgresql.conf gave `hlculid.publisher_id` that PostgreSQL refused, if any.
pub fn publisher_invalid() -> Option<&'static str> {
    PUBLISHER_INVALID.get().map(String::as_str)
}

/// Folds the 64-bit system identifier into 15 bits (0-32767). Bit 15 stays clear so that the
/// ids of a server left at the default never carry the RFC 9562 variant bits (10 at the top of
/// byte 8): as `uuid` values they are never RFC uuids, so never taken for a random one by the
/// `uuid` cast, nor equal to a `gen_random_uuid()` or `uuidv7()` value in a shared column.
fn derived_publisher() -> u16 {
    static DERIVED: OnceLock<u16> = OnceLock::new();
    *DERIVED.get_or_init(|| {
        // SAFETY: reads the control file's identifier, set before any backend runs SQL.
        let id = unsafe { pg_sys::GetSystemIdentifier() };
        ((id >> 48) ^ (id >> 32) ^ (id >> 16) ^ id) as u16 & 0x7FFF
    })
}

fn resolve(setting: i32) -> (u16, PublisherSource) {
    match setting {
        v @ 0..=65535 => (v as u16, PublisherSource::Setting),
        _ if PUBLISHER_INVALID.get().is_some() => {
            (derived_publisher(), PublisherSource::InvalidSetting)
        }
        _ => (derived_publisher(), PublisherSource::SystemIdentifier),
    }
}

/// The publisher id of this server and where it came from, as `hlculid_clock()` shows it.
#[inline]
pub fn publisher_shown() -> (u16, PublisherSource) {
    resolve(PUBLISHER_ID.get())
}

/// The publisher id of the ids this server makes, and where it came from; the 55000 error of a
/// setting PostgreSQL refused (a server told a publisher id never issues ids under another).
#[inline]
pub fn publisher() -> (u16, PublisherSource) {
    let (id, source) = resolve(PUBLISHER_ID.get());
    if source == PublisherSource::InvalidSetting {
        raise_invalid_publisher();
    }
    (id, source)
}

fn raise_invalid_publisher() -> ! {
    crate::base::errors::UserError::new(
        crate::base::errors::Condition::PublisherSettingInvalid,
        format!(
            "hlculid.publisher_id is set to \"{}\", which is not a publisher id, so no ids are issued",
            publisher_invalid().unwrap_or_default()
        ),
    )
    .detail("PostgreSQL refused the value in postgresql.conf at server start and kept the default; ids under a derived publisher id could collide with another server's.")
    .hint("Set hlculid.publisher_id to a number from 0 to 65535 (or -1 to derive one) and restart the server.")
    .raise()
}

/// [`publisher`]'s id without pgrx's thread check, for the generation fast paths (which run on
/// the backend's main thread like every SQL function); `None` sends them to their slow path,
/// which raises.
#[inline]
pub fn publisher_fast() -> Option<u16> {
    if PUBLISHER_INVALID.get().is_some() {
        return None;
    }
    // SAFETY: the setting's storage is only written by PostgreSQL's GUC code, on this thread.
    Some(resolve(unsafe { *PUBLISHER_ID.as_ptr() }).0)
}

pub fn max_clock_skew_ms() -> u64 {
    MAX_CLOCK_SKEW_MS.get().max(0) as u64
}

/// `hlculid.horizon_interval` in ms (0: the horizon is not published).
pub fn horizon_interval_ms() -> u64 {
    HORIZON_INTERVAL_MS.get().max(0) as u64
}

/// `hlculid.horizon_database`, if set to a name.
pub fn horizon_database() -> Option<String> {
    HORIZON_DATABASE
        .get()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
}

/// `hlculid.horizon_role`, if set to a name.
pub fn horizon_role() -> Option<String> {
    HORIZON_ROLE
        .get()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
}

/// `hlculid.mask_key_file`, if set (it exists only when preloaded: without the preload anyone
/// could SET a placeholder of that name, and have the server read a file of their choosing).
pub fn mask_key_file() -> Option<String> {
    MASK_KEY_FILE
        .get()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.trim().is_empty())
}

/// `hlculid.cluster_horizon_database`, if set to a name.
pub fn cluster_horizon_database() -> Option<String> {
    CLUSTER_DATABASE
        .get()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
}

/// `hlculid.cluster_horizon_interval` in microseconds.
pub fn cluster_horizon_interval_us() -> u64 {
    (CLUSTER_INTERVAL_MS.get().max(0.0) * 1000.0) as u64
}

/// `hlculid.cluster_horizon_conninfo`, if set.
pub fn cluster_horizon_conninfo() -> Option<String> {
    CLUSTER_CONNINFO
        .get()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.trim().is_empty())
}

/// Runs `f` with another module's setting `name` at `value`, as a function's `SET` clause does
/// (restored after, and at an error by the transaction's or subtransaction's abort); as it was
/// when no loaded module defines the setting.
pub fn with_setting<R>(name: &CStr, value: &CStr, f: impl FnOnce() -> R) -> R {
    // SAFETY: a lookup by a NUL-terminated name; missing_ok, so NULL when undefined.
    let defined = unsafe { !pg_sys::GetConfigOption(name.as_ptr(), true, false).is_null() };
    if !defined {
        return f();
    }
    // SAFETY: fmgr_security_definer's protocol for a function's SET clause: a new GUC nest
    // level, the value saved at it, and the level popped (the old value back) after `f`.
    let level = unsafe {
        let level = pg_sys::NewGUCNestLevel();
        pg_sys::set_config_option(
            name.as_ptr(),
            value.as_ptr(),
            pg_sys::GucContext::PGC_USERSET,
            pg_sys::GucSource::PGC_S_SESSION,
            pg_sys::GucAction::GUC_ACTION_SAVE,
            true,
            0,
            false,
        );
        level
    };
    let out = f();
    // SAFETY: pops the level made above; `f` returned normally, so it is still the innermost.
    unsafe { pg_sys::AtEOXact_GUC(true, level) };
    out
}
