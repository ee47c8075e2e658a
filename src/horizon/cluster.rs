//! Readers on Citus: `hlculid_citus_table` and `hlculid_cluster_pending` (the cluster horizon
//! itself is kept by `cluster_worker`), plain SQL over Citus' own functions (sql/src/cluster.sql), called
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

/// A read of a Citus table sends its shard queries outside transaction blocks when its
/// transaction is not yet distributed: so it takes no distributed transaction number, and a
/// reader's or a consumer's open transaction is not among what the cluster horizon waits for.
/// The readers' SQL functions carry it as a `SET` clause (`hlculid_read_checks`,
/// `hlculid_read_below`, `hlculid_consume`, `hlculid_read_key`); the waits' checks set it in code
/// ([`crate::base::settings::with_setting`]). tests/citus/test_waits.py runs each of them in a
/// transaction left open and sees the cluster horizon pass a row committed meanwhile.
pub const READ_OUTSIDE_BLOCKS: (&std::ffi::CStr, &std::ffi::CStr) =
    (c"citus.select_opens_transaction_block", c"off");
