-- Readers that never miss an event (0.4.0): the horizons table, publishing horizons, the
-- watermark across publishers, and the reading helper (advancing a row: advance_horizon.sql). One
-- source: the install script takes it through src/watermark.rs, and the released
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

-- The smallest horizon of the publishers named (NULL: every row, and this server's own live
-- horizon when it makes ids). NULL, never a value too high, while a named publisher has no row
-- or a subscription of this database has a table not yet synchronised.
CREATE FUNCTION hlculid_watermark(publishers int4[] DEFAULT NULL)
RETURNS @extschema@.hlculid
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    own int4;
    live @extschema@.hlculid;
    result @extschema@.hlculid;
    missing int4;
BEGIN
    IF $1 IS NOT NULL AND (array_position($1, NULL) IS NOT NULL) THEN
        RAISE EXCEPTION 'hlculid_watermark cannot take a NULL publisher id'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF $1 IS NOT NULL AND EXISTS (SELECT 1 FROM unnest($1) p WHERE p < 0 OR p > 65535) THEN
        RAISE EXCEPTION 'publisher id % is out of range',
            (SELECT p FROM unnest($1) p WHERE p < 0 OR p > 65535 LIMIT 1)
            USING ERRCODE = 'numeric_value_out_of_range',
                  DETAIL = 'A publisher id is 0 to 65535.';
    END IF;
    -- A table still copying its initial data may lack events below a horizon row that arrived.
    IF EXISTS (SELECT 1 FROM pg_subscription_rel r JOIN pg_subscription s ON s.oid = r.srsubid
               JOIN pg_database d ON d.oid = s.subdbid
               WHERE d.datname = current_database() AND r.srsubstate <> 'r') THEN
        RETURN NULL;
    END IF;
    -- This server's own ids: its live horizon, when it makes ids.
    IF current_setting('hlculid.publisher_id', true) IS NOT NULL AND NOT pg_is_in_recovery() THEN
        own := (SELECT c.publisher FROM @extschema@.hlculid_clock() c);
        live := @extschema@.hlculid_horizon();
    END IF;
    IF $1 IS NULL THEN
        SELECT @extschema@.min(h.horizon) INTO result FROM @extschema@.hlculid_horizons h
        WHERE own IS NULL OR h.publisher <> own;
        IF live IS NOT NULL AND (result IS NULL OR live OPERATOR(@extschema@.<) result) THEN
            result := live;
        END IF;
        RETURN result;
    END IF;
    SELECT count(*) INTO missing FROM (SELECT DISTINCT p FROM unnest($1) p) n
    WHERE (own IS NULL OR n.p <> own)
      AND NOT EXISTS (SELECT 1 FROM @extschema@.hlculid_horizons h WHERE h.publisher = n.p);
    IF missing > 0 OR cardinality($1) = 0 THEN
        RETURN NULL;
    END IF;
    SELECT @extschema@.min(h.horizon) INTO result FROM @extschema@.hlculid_horizons h
    WHERE h.publisher = ANY ($1) AND (own IS NULL OR h.publisher <> own);
    IF own = ANY ($1) AND (result IS NULL OR live OPERATOR(@extschema@.<) result) THEN
        result := live;
    END IF;
    RETURN result;
END
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

-- Reads the next rows after `after` of a table keyed on an hlculid, below this server's
-- horizon: the horizon in one statement, the read in the next (its own snapshot, READ
-- COMMITTED), so no row below the horizon commits after the read.
CREATE FUNCTION hlculid_read(table_row anyelement, after @extschema@.hlculid,
                             max_rows int4 DEFAULT 1000, id_column name DEFAULT 'id')
RETURNS SETOF anyelement
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    rel regclass;
    col_type regtype;
    h @extschema@.hlculid;
BEGIN
    SELECT t.typrelid::regclass INTO rel FROM pg_catalog.pg_type t
    WHERE t.oid = pg_catalog.pg_typeof($1) AND t.typrelid <> 0;
    IF rel IS NULL THEN
        RAISE EXCEPTION 'hlculid_read needs a row of the table to read, not a value of type %', pg_catalog.pg_typeof($1)
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'Pass NULL cast to the table''s row type: hlculid_read(NULL::events, $last).';
    END IF;
    IF $3 IS NULL OR $3 < 1 THEN
        RAISE EXCEPTION 'hlculid_read cannot read % rows', coalesce($3::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'max_rows is 1 or more.';
    END IF;
    SELECT a.atttypid::regtype INTO col_type FROM pg_catalog.pg_attribute a
    WHERE a.attrelid = rel AND a.attname = $4 AND a.attnum > 0 AND NOT a.attisdropped;
    IF col_type IS NULL THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', $4, rel
            USING ERRCODE = 'undefined_column';
    END IF;
    IF col_type <> '@extschema@.hlculid'::regtype THEN
        RAISE EXCEPTION 'column "%" of relation % is of type %, not hlculid', $4, rel, col_type
            USING ERRCODE = 'datatype_mismatch';
    END IF;
    h := @extschema@.hlculid_horizon();
    RETURN QUERY EXECUTE pg_catalog.format(
        'SELECT * FROM %s t WHERE ($1 IS NULL OR t.%I OPERATOR(@extschema@.>) $1) AND t.%I OPERATOR(@extschema@.<) $2 ORDER BY t.%I USING OPERATOR(@extschema@.<) LIMIT $3',
        rel, $4, $4, $4)
    USING $2, h, $3;
END
$fn$;

COMMENT ON TABLE hlculid_horizons IS 'one row per publisher: every event of that publisher below horizon has been committed (and, replicated, has arrived)';
COMMENT ON FUNCTION hlculid_horizon() IS 'no running or prepared transaction of this server has made an id below this one; take it in one statement, read below it in the next (READ COMMITTED)';
COMMENT ON FUNCTION hlculid_horizon_bigint() IS 'hlculid_horizon() for bigint ids: every bigint id a running transaction may still commit is at or above it';
COMMENT ON FUNCTION hlculid_horizon_catch_up() IS 'moves an idle clock up to the wall clock, then returns the horizon (what hlculid_publish_horizon writes)';
COMMENT ON FUNCTION hlculid_horizon_holds() IS 'running transactions (pid) and prepared transactions (xid) holding this server''s horizon back, with the lowest id each may have made';
COMMENT ON VIEW hlculid_horizon_holders IS 'what holds this server''s horizon back: sessions and prepared transactions, since when, how far behind';
COMMENT ON FUNCTION hlculid_advance_horizon(int4, hlculid) IS 'raises a publisher''s row in hlculid_horizons (never lowers it): the publisher has sent every event below the horizon';
COMMENT ON FUNCTION hlculid_publish_horizon() IS 'writes this server''s row in hlculid_horizons from its horizon';
COMMENT ON FUNCTION hlculid_watermark(int4[]) IS 'smallest horizon of the publishers (NULL: all rows and this server''s own): below it the datastore has every event it will get from them; NULL while one has no row or a table is still synchronising';
COMMENT ON FUNCTION hlculid_read(anyelement, hlculid, int4, name) IS 'the next rows after an id of a table keyed on an hlculid, below the horizon: a cursor reader that never misses a row';
