-- What holds this server's horizon back, with what a DBA needs to end it (0.4.0; 0.6.0: `lag`
-- and `since`). `lag` is how long the holder has held readers back: from when its transaction
-- made its first id (hlculid_horizon_holds_since(), kept in the backend's slot and in the
-- prepared transaction's hold), else from its PREPARE (a hold reloaded at a start keeps no time).
-- 0.5.0 measured it from the time of `holds_at`, the clock's last value when the transaction
-- began: on an idle server that is the last id made, seconds or hours before, and a transaction
-- 0.5 s old showed a lag of that age. One source: the install script takes it through the
-- module src/horizon/published.rs, the 0.5.0 -> 0.6.0 update includes it (CREATE OR REPLACE
-- keeps the view's OID, grants and comment; `since` is a column added at the end).
CREATE OR REPLACE VIEW hlculid.hlculid_horizon_holders AS
SELECT h.pid,
       a.xact_start,
       a.state,
       h.transaction AS prepared_xid,
       p.gid,
       h.holds_at,
       pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) COALESCE(h.since, p.prepared) AS lag,
       COALESCE(h.since, p.prepared) AS since
FROM pg_catalog.hlculid_horizon_holds_since() h
LEFT JOIN pg_catalog.pg_stat_activity a ON a.pid OPERATOR(pg_catalog.=) h.pid
LEFT JOIN pg_catalog.pg_prepared_xacts p
       ON p.transaction::pg_catalog.text OPERATOR(pg_catalog.=) h.transaction::pg_catalog.text;

COMMENT ON VIEW hlculid.hlculid_horizon_holders IS 'what holds this server''s horizon back: sessions and prepared transactions, since when (their first id), how long (lag)';
COMMENT ON FUNCTION hlculid_horizon_holds_since() IS 'hlculid_horizon_holds() with since: when each holder''s transaction made its first id (NULL for a prepared transaction reloaded at a start)';
-- As hlculid_horizon_holds() (horizon_grants.sql): other sessions' pids and xids, for pg_monitor.
REVOKE EXECUTE ON FUNCTION hlculid_horizon_holds_since() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION hlculid_horizon_holds_since() TO pg_monitor;
