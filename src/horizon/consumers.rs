//! Named consumers: their tables in the schema `hlculid`, `hlculid_consume`, retries, dead
//! letters and the `hlculid.hlculid_consumers` view, in PL/pgSQL (sql/src/consumers.sql): they
//! read the user's table with the caller's privileges, and move the position in the caller's
//! transaction. The waits are Rust (src/horizon/wait.rs).

use pgrx::prelude::*;

extension_sql_file!(
    "../../sql/src/consumers.sql",
    name = "hlculid_consumers",
    requires = [
        "hlculid_readers",
        "hlculid_cluster",
        "hlculid_horizon_grants",
        "hlculid_horizon_holders",
        wait::hlculid_wait,
        wait::hlculid_consumer_wait,
        wait::hlculid_wake_waiters_at_commit,
        wait::hlculid_writing_commits,
        extract::hlculid_min,
        extract::hlculid_ts,
    ],
);
