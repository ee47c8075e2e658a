//! `hlculid_backfill`: PL/pgSQL kept in one source file, sql/src/backfill.sql, which the install
//! script takes from here and sql/hlculid--0.3.0--0.4.0.sql from its template (scripts/gen-sql.sh).

use pgrx::prelude::*;

extension_sql_file!(
    "../sql/src/backfill.sql",
    name = "hlculid_backfill",
    requires = ["hlculid_type", generate_at::hlculid_backfill_ids],
);
