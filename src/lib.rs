//! hlculid: a 128-bit id type for PostgreSQL that sorts in real event order across many
//! publishers. The pure logic lives in the `hlculid-core` crate; each module here adapts one
//! part of it to PostgreSQL.

// Every unsafe block says why it is sound (SAFETY notes); unsafe fns spell out their unsafe calls.
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

/// C's `PG_FUNCTION_INFO_V1`, for the functions written by hand (without `#[pg_extern]`) where
/// pgrx's per-call wrapper would cost more than the work: `v1_function_info!(pg_finfo_NAME)`.
macro_rules! v1_function_info {
    ($finfo:ident) => {
        #[unsafe(no_mangle)]
        #[doc(hidden)]
        pub extern "C" fn $finfo() -> &'static pgrx::pg_sys::Pg_finfo_record {
            const V1_API: pgrx::pg_sys::Pg_finfo_record =
                pgrx::pg_sys::Pg_finfo_record { api_version: 1 };
            &V1_API
        }
    };
}

mod backend_local;
mod backfill;
mod bigint;
mod comments;
mod datum;
mod errors;
mod extract;
mod generate;
mod generate_at;
mod horizon;
mod horizon_publisher;
mod horizon_slots;
mod hwm_writer;
mod introspect;
mod io;
mod mask;
mod observe;
mod ops;
mod ops_uuid;
mod partitions;
mod pg_c;
mod prepared_holds;
mod record;
mod recover;
mod server_clock;
mod settings;
mod shmem;
mod tx;
mod uuidv7;
mod watermark;
mod window;
mod xact;

pub use datum::Hlculid;

pgrx::pg_module_magic!(name, version);

/// Loaded lazily (no `shared_preload_libraries`), hlculid keeps the type and every function but
/// the generators, which then raise a clear error. Preloaded, it also sets up its settings, the
/// shared clock and the high-water mark writer.
#[pgrx::pg_guard]
pub extern "C-unwind" fn _PG_init() {
    // SAFETY: a flag PostgreSQL sets before loading preloaded libraries; read-only here.
    if unsafe { !pgrx::pg_sys::process_shared_preload_libraries_in_progress } {
        return;
    }
    settings::define();
    shmem::init();
    horizon_slots::init();
    prepared_holds::init();
    xact::register();
    hwm_writer::register();
    horizon_publisher::register();
}

#[cfg(any(test, feature = "pg_test"))]
mod pg_tests;

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![
            "shared_preload_libraries = 'hlculid'",
            "hlculid.publisher_id = 42",
        ]
    }
}
