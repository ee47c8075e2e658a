-- The readers (0.4.0; all CREATE OR REPLACE since 0.6.0, so that the install script, through the
-- module src/horizon/readers.rs after horizons.sql, and the upgrade scripts from 0.4.0 and 0.5.0,
-- which keep OIDs and grants, share one text): the watermark across publishers, and the helpers
-- that take a bound in one statement and read below it in the next. Objects outside the extension are
-- schema-qualified; the extension's own through pg_catalog.

-- The smallest horizon of the publishers named (NULL: every row, and this server's own live
-- horizon when it makes ids, its idle clock caught up since 0.5.0). NULL, never a value too
-- high, while a named publisher has no row or a subscription of this database has a table not
-- yet synchronised. An error under REPEATABLE READ (0.5.0): the transaction's snapshot predates
-- the rows and the live horizon it reads, as for hlculid_horizon() (one check since 0.6.0, in
-- the module src/horizon/read_committed.rs).
CREATE OR REPLACE FUNCTION hlculid_watermark(publishers int4[] DEFAULT NULL)
RETURNS pg_catalog.hlculid
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    own int4;
    live pg_catalog.hlculid;
    result pg_catalog.hlculid;
    missing int4;
BEGIN
    -- the array's shape first (0.5.0): array_position below refuses more than one dimension
    -- with a message about searching, which says nothing of the argument
    IF pg_catalog.array_ndims($1) OPERATOR(pg_catalog.>) 1 THEN
        RAISE EXCEPTION 'publishers must be a one-dimensional array'
            USING ERRCODE = 'array_subscript_error',
                  DETAIL = pg_catalog.format('The array given has %s dimensions.', pg_catalog.array_ndims($1)),
                  HINT = 'Pass the publisher ids as a list: ARRAY[1, 2, 3].';
    END IF;
    -- the one READ COMMITTED rule (0.6.0: READ UNCOMMITTED passes, as PostgreSQL runs it)
    PERFORM pg_catalog.hlculid_require_read_committed('hlculid_watermark');
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
    -- This server's own ids: its live horizon, when it makes ids, the clock first brought up to
    -- the wall clock (0.5.0): an idle clock's horizon would hold every other publisher back.
    IF current_setting('hlculid.publisher_id', true) IS NOT NULL AND NOT pg_is_in_recovery() THEN
        own := (SELECT c.publisher FROM pg_catalog.hlculid_clock() c);
        live := pg_catalog.hlculid_horizon_catch_up();
    END IF;
    IF $1 IS NULL THEN
        SELECT pg_catalog.min(h.horizon) INTO result FROM hlculid.hlculid_horizons h
        WHERE own IS NULL OR h.publisher <> own;
        IF live IS NOT NULL AND (result IS NULL OR live OPERATOR(pg_catalog.<) result) THEN
            result := live;
        END IF;
        RETURN result;
    END IF;
    SELECT count(*) INTO missing FROM (SELECT DISTINCT p FROM unnest($1) p) n
    WHERE (own IS NULL OR n.p <> own)
      AND NOT EXISTS (SELECT 1 FROM hlculid.hlculid_horizons h WHERE h.publisher = n.p);
    IF missing > 0 OR cardinality($1) = 0 THEN
        RETURN NULL;
    END IF;
    SELECT pg_catalog.min(h.horizon) INTO result FROM hlculid.hlculid_horizons h
    WHERE h.publisher = ANY ($1) AND (own IS NULL OR h.publisher <> own);
    IF own = ANY ($1) AND (result IS NULL OR live OPERATOR(pg_catalog.<) result) THEN
        result := live;
    END IF;
    RETURN result;
END
$fn$;

-- The checks of every read of table `rel` by its column `id_column` (the readers below, and a
-- consumer's creation, which has the table's OID: naming its row type instead would be a name
-- the schema's owner could swap, 0.6.0): the column, its type, its unique index, no inheritance
-- child; with `privileges`, also that the caller may read every column, with a plan that reads
-- nothing (a read checks them as it reads).
CREATE OR REPLACE FUNCTION hlculid_read_checks(rel regclass, id_column name, privileges boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET citus.select_opens_transaction_block = off
AS $fn$
DECLARE
    col_type regtype;
    col_num int2;
    base regtype;
    q text;
BEGIN
    IF $1 IS NULL OR $2 IS NULL OR $3 IS NULL THEN
        RAISE EXCEPTION 'hlculid_read_checks needs a table, a column and whether to check privileges'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_class c WHERE c.oid = rel) THEN
        RAISE EXCEPTION 'relation with OID % does not exist', rel::pg_catalog.oid
            USING ERRCODE = 'undefined_table';
    END IF;
    -- the table locked as its read locks it, before its columns are checked: until the
    -- transaction ends, its owner cannot change them (src/base/read_guard.rs)
    PERFORM pg_catalog.hlculid_read_lock(rel::pg_catalog.oid);
    SELECT a.atttypid::regtype, a.attnum INTO col_type, col_num FROM pg_catalog.pg_attribute a
    WHERE a.attrelid = rel AND a.attname = $2 AND a.attnum > 0 AND NOT a.attisdropped;
    IF col_type IS NULL THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', $2, rel
            USING ERRCODE = 'undefined_column';
    END IF;
    -- a domain over hlculid reads as an hlculid (0.5.0): its base type, through domains of domains
    WITH RECURSIVE d(t, typtype, basetype) AS (
        SELECT y.oid, y.typtype, y.typbasetype FROM pg_catalog.pg_type y WHERE y.oid = col_type
        UNION ALL
        SELECT y.oid, y.typtype, y.typbasetype FROM d JOIN pg_catalog.pg_type y ON y.oid = d.basetype
        WHERE d.typtype = 'd')
    SELECT d.t::regtype INTO base FROM d WHERE d.typtype <> 'd';
    IF base IS DISTINCT FROM 'pg_catalog.hlculid'::regtype THEN
        RAISE EXCEPTION 'column "%" of relation % is of type %, not hlculid', $2, rel, col_type
            USING ERRCODE = 'datatype_mismatch';
    END IF;
    -- pages go by id > the last id read: rows sharing an id with a page's last row would be
    -- passed (0.5.0). The column must be unique by itself: a valid unique index (or primary key)
    -- whose one key column it is, on no expression and with no predicate; of a partitioned table,
    -- the parent's.
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_index x
                   WHERE x.indrelid = rel AND x.indisunique AND x.indisvalid
                     AND x.indnkeyatts = 1 AND x.indkey[0] = col_num
                     AND x.indpred IS NULL AND x.indexprs IS NULL) THEN
        RAISE EXCEPTION 'column "%" of relation % has no unique index of its own', $2, rel
            USING ERRCODE = 'invalid_column_reference',
                  DETAIL = 'hlculid_read pages by id after the last id read: rows that share an id with the last row of a page would be passed.',
                  HINT = pg_catalog.format('Add one (ALTER TABLE %s ADD UNIQUE (%I)), or read this table by other means.', rel, $2);
    END IF;
    -- a plain table's index covers that table only: a child's rows (INHERITS) may repeat its ids
    IF EXISTS (SELECT FROM pg_catalog.pg_class c WHERE c.oid = rel AND c.relkind <> 'p')
       AND EXISTS (SELECT FROM pg_catalog.pg_inherits i WHERE i.inhparent = rel) THEN
        RAISE EXCEPTION 'column "%" of relation % has no unique index of its own', $2, rel
            USING ERRCODE = 'invalid_column_reference',
                  DETAIL = 'The table has inheritance children, whose rows its unique index does not cover: hlculid_read pages by id after the last id read, and rows of a child that share an id with the last row of a page would be passed.',
                  HINT = pg_catalog.format('Make %s a partitioned table, or read its rows by other means.', rel);
    END IF;
    -- read only if its name still gives the table when parsed (0.6.0: a schema's owner could
    -- rename the schema in between and put her view in its place)
    IF $3 THEN
        q := pg_catalog.format('SELECT t FROM %s t LIMIT 0', rel);
        PERFORM pg_catalog.hlculid_expect_reads(rel::pg_catalog.oid, q);
        EXECUTE q;
    END IF;
END
$fn$;

-- Reads the next rows after `after` below `below`, by index, with a snapshot taken after the
-- call began (its own statement, READ COMMITTED): a bound the caller took before the call (its
-- arguments are evaluated first) vouches for every row below it. NULL `below` (a watermark not
-- yet known): no rows.
-- (On Citus its shard queries go outside transaction blocks, src/horizon/cluster.rs: an open
-- transaction that only reads is no distributed transaction, which the cluster horizon would wait for.)
CREATE OR REPLACE FUNCTION hlculid_read_below(table_row anyelement, after pg_catalog.hlculid,
                                   below pg_catalog.hlculid, max_rows int4 DEFAULT 1000,
                                   id_column name DEFAULT 'id')
RETURNS SETOF anyelement
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET citus.select_opens_transaction_block = off
AS $fn$
DECLARE
    rel regclass;
    q text;
BEGIN
    SELECT t.typrelid::regclass INTO rel FROM pg_catalog.pg_type t
    WHERE t.oid = pg_catalog.pg_typeof($1) AND t.typrelid <> 0;
    IF rel IS NULL THEN
        RAISE EXCEPTION 'hlculid_read needs a row of the table to read, not a value of type %', pg_catalog.pg_typeof($1)
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'Pass NULL cast to the table''s row type: hlculid_read(NULL::events, $last).';
    END IF;
    IF $4 IS NULL OR $4 < 1 THEN
        RAISE EXCEPTION 'hlculid_read cannot read % rows', coalesce($4::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'max_rows is 1 or more.';
    END IF;
    -- no bound, or none above the position: no row can be read, and no shard is asked (0.6.0);
    -- the privileges the read needs are checked all the same
    IF $3 IS NULL OR ($2 IS NOT NULL AND $3 OPERATOR(pg_catalog.<=) $2) THEN
        PERFORM pg_catalog.hlculid_read_checks(rel, $5, true);
        RETURN;
    END IF;
    PERFORM pg_catalog.hlculid_read_checks(rel, $5, false);
    -- read only if its name still gives the table when parsed (0.6.0: a schema's owner could
    -- rename the schema in between and put her view in its place)
    q := pg_catalog.format(
        'SELECT * FROM %s t WHERE ($1 IS NULL OR t.%I OPERATOR(pg_catalog.>) $1) AND t.%I OPERATOR(pg_catalog.<) $2 ORDER BY t.%I USING OPERATOR(pg_catalog.<) LIMIT $3',
        rel, $5, $5, $5);
    PERFORM pg_catalog.hlculid_expect_reads(rel::pg_catalog.oid, q);
    RETURN QUERY EXECUTE q USING $2, $3, $4;
END
$fn$;

-- The next rows after `after`, below the horizon: the horizon in one statement, the read in the
-- next. This server's horizon, or for a table Citus spreads over nodes (0.5.0), the cluster's.
CREATE OR REPLACE FUNCTION hlculid_read(table_row anyelement, after pg_catalog.hlculid,
                                        max_rows int4 DEFAULT 1000, id_column name DEFAULT 'id')
RETURNS SETOF anyelement
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    rel regclass;
    h pg_catalog.hlculid;
BEGIN
    PERFORM pg_catalog.hlculid_require_read_committed('hlculid_read');
    SELECT t.typrelid::regclass INTO rel FROM pg_catalog.pg_type t
    WHERE t.oid = pg_catalog.pg_typeof($1) AND t.typrelid <> 0;
    IF rel IS NOT NULL AND pg_catalog.hlculid_citus_table(rel) THEN
        h := pg_catalog.hlculid_cluster_horizon();
    ELSE
        h := pg_catalog.hlculid_horizon();
    END IF;
    RETURN QUERY SELECT * FROM pg_catalog.hlculid_read_below($1, $2, h, $3, $4);
END
$fn$;

-- The next rows after `after`, below the watermark of `publishers` (NULL: every row, and this
-- server's own): the watermark in one statement, the read in the next. No rows while the
-- watermark is NULL. Works on a standby, where the replicated rows vouch for the events.
CREATE OR REPLACE FUNCTION hlculid_read_watermark(table_row anyelement, after pg_catalog.hlculid,
                                       publishers int4[] DEFAULT NULL, max_rows int4 DEFAULT 1000,
                                       id_column name DEFAULT 'id')
RETURNS SETOF anyelement
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    w pg_catalog.hlculid;
BEGIN
    PERFORM pg_catalog.hlculid_require_read_committed('hlculid_read_watermark');
    w := pg_catalog.hlculid_watermark($3);
    RETURN QUERY SELECT * FROM pg_catalog.hlculid_read_below($1, $2, w, $4, $5);
END
$fn$;

COMMENT ON FUNCTION hlculid_watermark(int4[]) IS 'smallest horizon of the publishers (NULL: all rows and this server''s own): below it the datastore has every event it will get from them; NULL while one has no row or a table is still synchronising';
COMMENT ON FUNCTION hlculid_read_lock(pg_catalog.oid) IS 'ACCESS SHARE on the table until the transaction ends (the lock its read takes), for a role that may read it or a column of it: the readers take it before checking the table''s columns, so that its owner cannot change them before the read';
COMMENT ON FUNCTION hlculid_read_checks(regclass, name, boolean) IS 'the checks of every read of a table by its hlculid column (the column, its type, its own unique index, no inheritance child) and, with privileges, that the caller may read every column: the readers and hlculid_consumer_create call it';
COMMENT ON FUNCTION hlculid_read_below(anyelement, hlculid, hlculid, int4, name) IS 'the next rows after an id of a table keyed on an hlculid, below a bound taken before the call (a horizon, a watermark), read by index with a later snapshot';
COMMENT ON FUNCTION hlculid_read(anyelement, hlculid, int4, name) IS 'the next rows after an id of a table keyed on an hlculid, below the horizon: a cursor reader that never misses a row';
COMMENT ON FUNCTION hlculid_expect_reads(pg_catalog.oid, text) IS 'until the transaction ends or the next call, a parse of exactly this query in this session raises 42P01 unless every relation it names is rel or one of pg_catalog''s or hlculid''s: the readers arm it before EXECUTE of a query built from a table''s name; NULL disarms, and takes in other sessions'' catalog changes, so that a name formatted next is current';
COMMENT ON FUNCTION hlculid_require_read_committed(text) IS 'the one READ COMMITTED rule of the horizon, watermark and reader functions: 0A000 naming the caller in a REPEATABLE READ or SERIALIZABLE transaction; READ UNCOMMITTED is READ COMMITTED';
COMMENT ON FUNCTION hlculid_read_watermark(anyelement, hlculid, int4[], int4, name) IS 'the next rows after an id of a table keyed on an hlculid, below the watermark of the publishers: a reader of many publishers that never misses a row';
