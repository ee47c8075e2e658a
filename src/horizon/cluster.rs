//! Readers on Citus: `hlculid_citus_table`, `hlculid_cluster_pending` and
//! `hlculid_cluster_horizon`, plain SQL over Citus' own functions (sql/src/cluster.sql), called
//! at run time only, so the extension installs with or without Citus.

use pgrx::prelude::*;

extension_sql_file!(
    "../../sql/src/cluster.sql",
    name = "hlculid_cluster",
    requires = [
        "hlculid_opclasses",
        server::hlculid_horizon_catch_up,
        introspect::hlculid_clock,
        read_committed::hlculid_require_read_committed,
    ],
);
