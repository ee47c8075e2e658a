-- Readers that never miss an event (0.4.0): the horizons table, publishing horizons and the
-- holders' function (the view: horizon_holders.sql; advancing a row: advance_horizon.sql; the watermark and the reading helpers:
-- readers.sql). One source: the install script takes it through src/horizon/published.rs, and the released
-- sql/hlculid--0.3.0--0.4.0.sql carries the text it had then. Every name is schema-qualified.
--
-- The extension lives in pg_catalog (0.5.0, docs/security.md), where PostgreSQL creates no table or
-- view outside initdb (and pg_upgrade could not restore one): its relations live in the schema
-- `hlculid`, which the extension creates, so only the superuser who installed it owns it. A
-- schema of that name made before is an error here, never used: another role's schema could hold
-- their objects.
CREATE SCHEMA hlculid;
GRANT USAGE ON SCHEMA hlculid TO PUBLIC;
COMMENT ON SCHEMA hlculid IS 'the hlculid extension''s tables and views (its types and functions are in pg_catalog)';

-- One row per publisher: every event of that publisher with an id below `horizon` has been
-- committed (and, on a subscriber, has arrived). Replicated with the events.
CREATE TABLE hlculid.hlculid_horizons (
    publisher int4 PRIMARY KEY CHECK (publisher BETWEEN 0 AND 65535),
    horizon pg_catalog.hlculid NOT NULL,
    updated_at timestamptz NOT NULL
);
-- Rows (not the table) are the user's: pg_dump dumps them.
SELECT pg_catalog.pg_extension_config_dump('hlculid.hlculid_horizons', '');

-- The view of what holds the horizon back: horizon_holders.sql (0.6.0 measures its lag anew).

COMMENT ON TABLE hlculid.hlculid_horizons IS 'one row per publisher: every event of that publisher below horizon has been committed (and, replicated, has arrived)';
COMMENT ON FUNCTION hlculid_horizon() IS 'no running or prepared transaction of this server has made an id below this one; take it in one statement, read below it in the next (READ COMMITTED)';
COMMENT ON FUNCTION hlculid_horizon_bigint() IS 'hlculid_horizon() for bigint ids: every bigint id a running transaction may still commit is at or above it';
COMMENT ON FUNCTION hlculid_horizon_catch_up() IS 'moves an idle clock up to the wall clock, then returns the horizon (what hlculid_publish_horizon writes)';
COMMENT ON FUNCTION hlculid_horizon_holds() IS 'running transactions (pid) and prepared transactions (xid) holding this server''s horizon back, with the lowest id each may have made';
COMMENT ON FUNCTION hlculid_advance_horizon(int4, hlculid) IS 'raises a publisher''s row in hlculid_horizons (never lowers it): the publisher has sent every event below the horizon';
COMMENT ON FUNCTION hlculid_publish_horizon() IS 'writes this server''s row in hlculid_horizons from its horizon';
