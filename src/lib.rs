//! hlculid: a 128-bit id type for PostgreSQL that sorts in real event order across many
//! publishers. The pure logic lives in the `hlculid-core` crate; each module here adapts one
//! part of it to PostgreSQL. Modules are grouped by subsystem, one folder each, whose README.md
//! says what it owns and which subsystems it uses; none uses one that uses it
//! (`tools/module_graph.py` checks that, the READMEs' `Uses:` lines and this map). The module map
//! (the one list; docs/development.md points here):
//!
//! | folder | module | owns |
//! |---|---|---|
//! | `base/` | `settings` | the GUCs |
//! | | `errors` | the conditions and their SQLSTATEs (docs/errors.md) |
//! | | `pg_c` | C declarations pgrx does not bind (scripts/check-c-decls.sh) |
//! | | `backend_local` | backend-private state and randomness |
//! | | `process` | whether the library was preloaded; the data directory |
//! | | `read_guard` | the check that a query built from a table's name reads that table when parsed (`hlculid_expect_reads`) |
//! | | `schema_pin` | a schema's name kept for the rest of the transaction, for DDL built from names (`hlculid_pin_schema`) |
//! | `types/` | `datum` | the `hlculid` type: its 16-byte datum |
//! | | `io` | text and binary I/O, the casts between the same 16 bytes |
//! | | `ops`, `ops_uuid` | comparisons, opclasses, aggregates; the cross-type ones with `uuid` |
//! | | `window` | `<@` / `@>` time windows: the functions and their SQL |
//! | | `window::estimate` | the restriction estimator of `<@` |
//! | | `window::support` | the planner support function: index conditions |
//! | | `extract` | fields of an id, ids from fields and times |
//! | | `timestamps` | timestamptz and an id's millisecond, both ways; 22008 for a time an id cannot hold |
//! | | `record` | records of pass-by-value fields from hand-written functions (`hlculid_decode`) |
//! | | `bigint` | bigint ids: fields, bounds, conversions |
//! | | `uuidv7` | the UUIDv7 form |
//! | | `mask` | masks: ids shown outside, their key file |
//! | `clock/` | `shared` | the clock in shared memory; the mark file's damage at start |
//! | | `durable` | the clock with its mark as callers take values; its refusals as errors |
//! | | `mark_writer` | the background worker that keeps the mark file ahead |
//! | | `recover` | `hlculid_clock_recover` |
//! | | `introspect` | `hlculid_clock()`, `hlculid_clock_bound()` |
//! | `horizon/` | `slots` | the backends' horizon slots in shared memory |
//! | | `prepared` | prepared transactions' holds: `take` at PRE_PREPARE, `live` for readers |
//! | | `prepared::table` | the holds in shared memory |
//! | | `prepared::files` | their state files; 0.4.0's floor file |
//! | | `prepared::wal` | the WAL resource manager (id 173) |
//! | | `prepared::xids` | whether a prepared transaction has ended |
//! | | `prepared::legacy` | 0.4.0's floor carried over |
//! | | `server` | this server's horizon: `hlculid_horizon()` and its kin |
//! | | `published` | the `hlculid.hlculid_horizons` table, `hlculid_advance_horizon`, `hlculid_publish_horizon` |
//! | | `publisher` | the workers writing this server's row |
//! | | `readers` | `hlculid_watermark` and the readers (`hlculid_read*`) |
//! | | `read_committed` | the one READ COMMITTED rule of the horizon, watermark and readers (`hlculid_require_read_committed`) |
//! | | `cluster` | readers on Citus: which tables Citus manages, what is pending |
//! | | `cluster_worker` | the Citus cluster horizon kept by a background worker; publisher ids checked across the nodes |
//! | | `wait` | waiting for rows on shared memory (`hlculid_wait`, `hlculid_consumer_wait`), woken as transactions that made ids end |
//! | | `consumers` | named consumers: their tables, `hlculid_consume`, retries, dead letters, the view |
//! | `generate/` | `ids` | `hlculid_generate()`, `hlculid_generate_n()` |
//! | | `bigint` | `hlculid_generate_bigint()`, `hlculid_generate_bigint_n()` |
//! | | `at` | ids for a given time (`hlculid_generate_at`) |
//! | | `tx` | transaction-grouped ids (`hlculid_generate_tx`) |
//! | | `observe` | the receive rule |
//! | | `take` | clock values for ids: the horizon slot held first |
//! | | `xact_callbacks` | the transaction and resource-release callbacks (slots and id groups end with their transaction) |
//! | `tables/` | `partitions`, `backfill` | time partitions; converting existing tables |
//! | | `table_owner` | the helpers that write a user's table, run as its owner |
//! | `src/` | `comments` | `COMMENT ON` the functions of 0.1.x |
//! | | `pg_tests` | `#[pg_test]`s |

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
    horizon::cluster_worker::init();
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
