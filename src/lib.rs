//! hlculid: a 128-bit id type for PostgreSQL that sorts in real event order across many
//! publishers. The pure logic lives in the `hlculid-core` crate; each module here adapts one
//! part of it to PostgreSQL. The module map (the one list; docs/development.md points here):
//!
//! | module | owns |
//! |---|---|
//! | `datum` | the `hlculid` type: its 16-byte datum |
//! | `io` | text and binary I/O, the casts between the same 16 bytes |
//! | `ops`, `ops_uuid` | comparisons, opclasses, aggregates; the cross-type ones with `uuid` |
//! | `window` | `<@` / `@>` time windows: estimator and planner support |
//! | `extract` | fields of an id, ids from fields and times |
//! | `timestamps` | timestamptz and an id's millisecond, both ways; 22008 for a time an id cannot hold |
//! | `record` | records of pass-by-value fields from hand-written functions (`hlculid_decode`) |
//! | `bigint` | bigint ids |
//! | `uuidv7` | the UUIDv7 form |
//! | `mask` | masks: ids shown outside, their key file |
//! | `generate`, `generate_at`, `observe` | generating from the clock, for a given time, the receive rule |
//! | `generate_tx` | transaction-grouped ids (`hlculid_generate_tx`) |
//! | `xact_callbacks` | the transaction and resource-release callbacks (slots and id groups end with their transaction) |
//! | `shmem`, `server_clock` | the shared clock and its mark file; the clock as generators use it |
//! | `mark_writer` | the background worker that keeps the mark file ahead |
//! | `recover` | `hlculid_clock_recover` |
//! | `introspect` | `hlculid_clock()`, `hlculid_clock_bound()` |
//! | `horizon_slots` | the backends' horizon slots in shared memory |
//! | `prepared_holds` | prepared transactions' holds: state files and the WAL resource manager |
//! | `horizon` | the horizon's SQL entry points over slots and holds |
//! | `horizons`, `horizon_publisher` | the `hlculid.hlculid_horizons` table's SQL and the readers; the workers writing this server's row |
//! | `cluster` | readers on Citus: the cluster horizon |
//! | `horizon::wait` | waiting for rows on shared memory (`hlculid_wait`, `hlculid_consumer_wait`), woken as transactions that made ids end |
//! | `horizon::consumers` | named consumers: their tables, `hlculid_consume`, retries, dead letters, the view |
//! | `partitions`, `backfill` | time partitions; converting existing tables |
//! | `table_owner` | the helpers that write a user's table, run as its owner (the partition helpers' and the backfill's entry points) |
//! | `comments` | `COMMENT ON` the functions of 0.1.x |
//! | `settings`, `errors` | the GUCs; the conditions and their SQLSTATEs |
//! | `backend_local`, `pg_c` | backend-private state and randomness; C declarations pgrx does not bind |
//! | `pg_tests` | `#[pg_test]`s |

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

mod base;
mod clock;
mod comments;
mod generate;
mod horizon;
mod tables;
mod types;

pub use types::datum::Hlculid;

pgrx::pg_module_magic!(name, version);

/// Loaded lazily (no `shared_preload_libraries`), hlculid keeps the type and every function but
/// the generators, which then raise a clear error. Preloaded, it also sets up its settings, the
/// shared clock and the high-water mark writer.
#[pgrx::pg_guard]
pub extern "C-unwind" fn _PG_init() {
    base::errors::no_backtraces();
    // SAFETY: a flag PostgreSQL sets before loading preloaded libraries; read-only here.
    if unsafe { !pgrx::pg_sys::process_shared_preload_libraries_in_progress } {
        return;
    }
    base::settings::define();
    clock::shared::init();
    horizon::slots::init();
    horizon::prepared::init();
    horizon::wait::init();
    generate::xact_callbacks::register();
    clock::mark_writer::register();
    horizon::publisher::register();
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
