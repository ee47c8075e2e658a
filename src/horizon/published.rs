//! The published horizons: the `hlculid.hlculid_horizons` table, one row per publisher, and the
//! SQL that writes it (`hlculid_advance_horizon`, `hlculid_publish_horizon`), the holders view
//! and their grants. Plain SQL over the horizon (src/horizon/server.rs), in
//! sql/src/advance_horizon.sql, publish_horizon.sql, horizons.sql, horizon_holders.sql and
//! horizon_grants.sql; the readers of the rows are src/horizon/readers.rs. The table and the view
//! are in the schema `hlculid` (the extension's functions in pg_catalog, where no table can be
//! made: docs/security.md).

use pgrx::prelude::*;

extension_sql_file!(
    "../../sql/src/advance_horizon.sql",
    name = "hlculid_advance_horizon",
    requires = [
        "hlculid_opclasses",
        introspect::hlculid_clock,
        extract::hlculid_ts
    ],
);

extension_sql_file!(
    "../../sql/src/publish_horizon.sql",
    name = "hlculid_publish_horizon",
    requires = [
        "hlculid_advance_horizon",
        server::hlculid_horizon_catch_up,
        introspect::hlculid_clock
    ],
);

extension_sql_file!(
    "../../sql/src/horizons.sql",
    name = "hlculid_horizons",
    requires = [
        "hlculid_opclasses",
        "hlculid_publish_horizon",
        server::hlculid_horizon,
        server::hlculid_horizon_bigint,
        server::hlculid_horizon_catch_up,
        server::hlculid_horizon_holds,
        introspect::hlculid_clock,
        extract::hlculid_ts,
    ],
);

extension_sql_file!(
    "../../sql/src/horizon_holders.sql",
    name = "hlculid_horizon_holders",
    requires = ["hlculid_horizons", server::hlculid_horizon_holds_since],
);

extension_sql_file!(
    "../../sql/src/horizon_grants.sql",
    name = "hlculid_horizon_grants",
    requires = ["hlculid_readers", "hlculid_horizon_holders"],
);
