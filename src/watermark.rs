//! Watermarks across publishers: the `hlculid_horizons` table, `hlculid_advance_horizon`,
//! `hlculid_publish_horizon`, `hlculid_watermark`, the holders view and the `hlculid_read`
//! helper. Plain SQL over the horizon (src/horizon.rs), kept in one source file.

use pgrx::prelude::*;

extension_sql_file!(
    "../sql/src/horizons.sql",
    name = "hlculid_horizons",
    requires = [
        "hlculid_opclasses",
        horizon::hlculid_horizon,
        horizon::hlculid_horizon_bigint,
        horizon::hlculid_horizon_catch_up,
        horizon::hlculid_horizon_holds,
        introspect::hlculid_clock,
        extract::hlculid_ts,
    ],
);
