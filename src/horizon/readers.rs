//! The readers: `hlculid_watermark` (the smallest published horizon of the publishers named) and
//! the helpers that take a bound in one statement and read below it in the next
//! (`hlculid_read`, `hlculid_read_watermark`, `hlculid_read_below`). Plain SQL in
//! sql/src/readers.sql, over the horizon (src/horizon/server.rs), the published rows
//! (src/horizon/published.rs) and, on Citus, the cluster's horizon (src/horizon/cluster.rs); each
//! runs the one READ COMMITTED rule first (src/horizon/read_committed.rs).

use pgrx::prelude::*;

extension_sql_file!(
    "../../sql/src/readers.sql",
    name = "hlculid_readers",
    requires = [
        "hlculid_horizons",
        read_committed::hlculid_require_read_committed,
        base::read_guard::hlculid_expect_reads,
        base::read_guard::hlculid_read_lock
    ],
);
