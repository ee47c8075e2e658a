-- The Citus readers on a server without Citus (0.5.0): no table is a Citus table, and the
-- cluster horizon and what it waits for say that they need Citus (55000), with a hint
SELECT hlculid_citus_table('pg_class');
SELECT err('SELECT hlculid_cluster_horizon()');
SELECT err('SELECT hlculid_cluster_pending()');
