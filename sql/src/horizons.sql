-- Readers that never miss an event (0.4.0): the horizons table, publishing horizons and the
-- holders view (advancing a row: advance_horizon.sql; the watermark and the reading helpers:
-- readers.sql). One source: the install script takes it through src/horizons.rs, and the released
-- sql/hlculid--0.3.0--0.4.0.sql carries the text it had then. Objects outside the extension are
-- schema-qualified; the extension's own through @extschema@.

-- One row per publisher: every event of that publisher with an id below `horizon` has been
-- committed (and, on a subscriber, has arrived). Replicated with the events.
CREATE TABLE hlculid_horizons (
    publisher int4 PRIMARY KEY CHECK (publisher BETWEEN 0 AND 65535),
    horizon @extschema@.hlculid NOT NULL,
    updated_at timestamptz NOT NULL
);
-- Rows (not the table) are the user's: pg_dump dumps them.
SELECT pg_catalog.pg_extension_config_dump('hlculid_horizons', '');

-- This server's row: its publisher id and its horizon, the clock first brought up to the wall
-- clock (an idle publisher's horizon moves with time).
CREATE FUNCTION hlculid_publish_horizon()
RETURNS @extschema@.hlculid
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
    SELECT @extschema@.hlculid_advance_horizon(c.publisher, @extschema@.hlculid_horizon_catch_up())
    FROM @extschema@.hlculid_clock() c;
$fn$;

-- What holds this server's horizon back, with what a DBA needs to end it.
CREATE VIEW hlculid_horizon_holders AS
SELECT h.pid,
       a.xact_start,
       a.state,
       h.transaction AS prepared_xid,
       p.gid,
       h.holds_at,
       clock_timestamp() - @extschema@.hlculid_ts(h.holds_at) AS lag
FROM @extschema@.hlculid_horizon_holds() h
LEFT JOIN pg_catalog.pg_stat_activity a ON a.pid = h.pid
LEFT JOIN pg_catalog.pg_prepared_xacts p ON p.transaction::text = h.transaction::text;

COMMENT ON TABLE hlculid_horizons IS 'one row per publisher: every event of that publisher below horizon has been committed (and, replicated, has arrived)';
COMMENT ON FUNCTION hlculid_horizon() IS 'no running or prepared transaction of this server has made an id below this one; take it in one statement, read below it in the next (READ COMMITTED)';
COMMENT ON FUNCTION hlculid_horizon_bigint() IS 'hlculid_horizon() for bigint ids: every bigint id a running transaction may still commit is at or above it';
COMMENT ON FUNCTION hlculid_horizon_catch_up() IS 'moves an idle clock up to the wall clock, then returns the horizon (what hlculid_publish_horizon writes)';
COMMENT ON FUNCTION hlculid_horizon_holds() IS 'running transactions (pid) and prepared transactions (xid) holding this server''s horizon back, with the lowest id each may have made';
COMMENT ON VIEW hlculid_horizon_holders IS 'what holds this server''s horizon back: sessions and prepared transactions, since when, how far behind';
COMMENT ON FUNCTION hlculid_advance_horizon(int4, hlculid) IS 'raises a publisher''s row in hlculid_horizons (never lowers it): the publisher has sent every event below the horizon';
COMMENT ON FUNCTION hlculid_publish_horizon() IS 'writes this server''s row in hlculid_horizons from its horizon';
