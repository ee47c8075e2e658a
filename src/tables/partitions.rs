//! Time partitions of a table keyed on an hlculid (`hlculid_partition_bounds`,
//! `hlculid_create_partitions`, `hlculid_drop_partitions`): PL/pgSQL kept in one source file,
//! sql/src/partitions.sql, which the install script takes from here and
//! sql/hlculid--0.3.0--0.4.0.sql from its template (scripts/gen-sql.sh).

use pgrx::prelude::*;

extension_sql_file!(
    "../../sql/src/partitions.sql",
    name = "hlculid_partitions",
    requires = ["hlculid_type", base::schema_pin::hlculid_pin_schema],
);
