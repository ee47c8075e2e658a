-- hlculid 0.2.0 -> 0.3.0.
-- Every object a 0.2.0 database has keeps its OID, so grants on it and views using it survive
-- the update: functions change with CREATE OR REPLACE (same arguments and result type); new
-- things are added beside the old ones.
\echo Use "ALTER EXTENSION hlculid UPDATE TO '0.3.0'" to load this file. \quit

-- == clock ==

-- == partitions ==

-- == casts and text forms ==

