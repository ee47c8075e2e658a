-- `hlculid_backfill`: fills the NULL ids of an existing table from a time column, in batches,
-- each committed on its own, with a publisher id of the caller's (one reserved for backfills,
-- so `hlculid_publisher(id)` tells backfilled rows from live ones).
--
-- - Order: ids follow (time, then the primary key, else tableoid and ctid), taken once in one
--   snapshot at the start (the loop's cursor is materialised at the first commit).
-- - Uniqueness within and across runs: the ids of a batch come from the extension's
--   `hlculid_backfill_ids` (src/generate/at.rs, the rule in core's `clock::backfill_batch`): the
--   clock's send rule, `max(last + 1, ms << 16)` with a full counter carrying into the next
--   millisecond, stepping over the largest id of this publisher already in the table in every
--   millisecond it enters (looked up per batch over its time span: with the id index, first
--   whether the span holds any at all). Batches of one table are serialised by an advisory
--   lock, so two runs at once never read the same largest id.
-- - Locks: each batch is one UPDATE of its rows by (tableoid, ctid) and a COMMIT, so no lock
--   outlives a batch, and ROW EXCLUSIVE never blocks other writers. Batches of one table are
--   serialised by the table's SHARE UPDATE EXCLUSIVE lock (0.5.0), which only roles that may
--   change the table can take (0.4.0's advisory lock could be held by any role, for ever).
-- - As the table's owner (0.5.0): each batch's UPDATE runs the table's triggers, defaults,
--   constraints and index expressions, so it is `hlculid_backfill_update` (src/tables/table_owner.rs),
--   which runs it as the table's owner in a security-restricted operation, as VACUUM does; a
--   caller who may not act as the owner is refused (42501) before anything changes. A row changed by another
--   session meanwhile (so at another ctid) is skipped, and a later pass takes it; rows inserted
--   meanwhile with `DEFAULT hlculid_generate()` are not NULL, so they keep their live ids.
-- - A procedure with a `SET` clause cannot commit, so the fixed `search_path` is set with
--   `set_config(..., true)` at the start of every transaction of the run, and the caller's is set
--   back the same way as the run's last step: the caller's transaction (a DO block or procedure
--   that called it) goes on with its own path. The extension's own objects are
--   schema-qualified (`pg_catalog`, the extension's schema) and the declared types are pg_catalog's.

-- The table as every part of a backfill needs it, checked under the lock each batch takes (0.6.0,
-- the ninth review: checked once at the start, the table's owner could change the id column's
-- type between batches to one of hers with a cast, and the next batch's queries, run as the
-- caller, called it): locked, so that ALTER TABLE waits until the transaction ends (for a batch
-- SHARE UPDATE EXCLUSIVE, which serialises batches, its schema's name pinned first,
-- src/base/schema_pin.rs; else ACCESS SHARE, as a read), a table, no foreign table among its partitions or
-- children (read through the caller's user mapping), not Citus', the id column an hlculid, the
-- time column timestamptz or timestamp: its type returned, and with `ts_type_was` (the run's),
-- the same as before.
CREATE OR REPLACE FUNCTION hlculid_backfill_check(tbl regclass, id_column name, ts_column name,
                                                  ts_type_was regtype DEFAULT NULL, batch boolean DEFAULT false)
RETURNS regtype
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    kind pg_catalog."char";
    id_type pg_catalog.oid;
    ts_type pg_catalog.oid;
BEGIN
    IF tbl IS NULL OR id_column IS NULL OR ts_column IS NULL THEN
        RAISE EXCEPTION 'hlculid_backfill_check needs a table, an id column and a time column'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT c.relkind INTO kind FROM pg_class c WHERE c.oid = tbl;
    IF kind IS NULL OR kind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '"%" is not a table', tbl::text
            USING ERRCODE = 'wrong_object_type';
    END IF;
    PERFORM pg_catalog.hlculid_read_lock(tbl::pg_catalog.oid);
    IF batch THEN
        PERFORM pg_catalog.hlculid_pin_schema(tbl::pg_catalog.oid);
        EXECUTE format('LOCK TABLE %s IN SHARE UPDATE EXCLUSIVE MODE', tbl);
    END IF;
    -- a utility statement, which the parse check does not see: the lock must be the table's
    -- (dropped and another relation made under its name since the last batch, the name could
    -- give another relation)
    IF batch AND NOT EXISTS (SELECT FROM pg_catalog.pg_locks l
                   WHERE l.locktype = 'relation' AND l.relation = tbl::pg_catalog.oid
                     AND l.pid = pg_catalog.pg_backend_pid() AND l.granted
                     AND l.mode = 'ShareUpdateExclusiveLock') THEN
        RAISE EXCEPTION 'the table to backfill is no longer the relation its name gives'
            USING ERRCODE = 'undefined_table',
                  DETAIL = 'Its name now gives another relation: the table''s schema was renamed, and another relation put in its place.',
                  HINT = 'Run it again: the name is taken anew from the table.';
    END IF;
    -- The rows are listed and counted as the caller (only each batch's UPDATE runs as the owner):
    -- a foreign table among the partitions or children would be read through the caller's user
    -- mapping (0.5.0: refused).
    IF EXISTS (WITH RECURSIVE tree(r) AS (
                   SELECT tbl::pg_catalog.oid
                   UNION ALL
                   SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN tree ON i.inhparent = tree.r)
               SELECT FROM tree JOIN pg_catalog.pg_class c ON c.oid = tree.r WHERE c.relkind = 'f') THEN
        RAISE EXCEPTION 'hlculid_backfill cannot convert table "%", which has a foreign table among its partitions or children', tbl::text
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'Backfill the foreign table''s rows where they are stored.';
    END IF;
    -- Rows are found again by (tableoid, ctid), which repeat across a Citus table's shards and
    -- nodes: such a table would get one id for rows of different shards (0.5.0: refused).
    IF pg_catalog.hlculid_citus_table(tbl) THEN
        RAISE EXCEPTION 'hlculid_backfill cannot convert table "%", which Citus manages', tbl::text
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Backfill the table before create_distributed_table() or create_reference_table(), or after undistribute_table().';
    END IF;
    SELECT a.atttypid INTO id_type FROM pg_attribute a
    WHERE a.attrelid = tbl AND a.attname = id_column AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation "%" does not exist', id_column, tbl::text
            USING ERRCODE = 'undefined_column';
    END IF;
    IF id_type <> 'pg_catalog.hlculid'::regtype THEN
        RAISE EXCEPTION 'column "%" of table "%" is of type %, not hlculid', id_column, tbl::text, format_type(id_type, NULL)
            USING ERRCODE = 'datatype_mismatch';
    END IF;
    SELECT a.atttypid INTO ts_type FROM pg_attribute a
    WHERE a.attrelid = tbl AND a.attname = ts_column AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation "%" does not exist', ts_column, tbl::text
            USING ERRCODE = 'undefined_column';
    END IF;
    IF ts_type NOT IN ('timestamptz'::regtype, 'timestamp'::regtype) THEN
        RAISE EXCEPTION 'column "%" of table "%" is of type %, not timestamptz or timestamp', ts_column, tbl::text, format_type(ts_type, NULL)
            USING ERRCODE = 'datatype_mismatch',
                  HINT = 'Add a timestamptz column computed from it, and backfill from that.';
    END IF;
    IF ts_type_was IS NOT NULL AND ts_type <> ts_type_was THEN
        RAISE EXCEPTION 'column "%" of table "%" changed its type during hlculid_backfill', ts_column, tbl::text
            USING ERRCODE = 'datatype_mismatch',
                  HINT = 'Run it again: the rows filled so far keep their ids.';
    END IF;
    RETURN ts_type;
END
$fn$;

CREATE OR REPLACE PROCEDURE hlculid_backfill(tbl regclass, id_column name, ts_column name,
    publisher int4, batch_size int4 DEFAULT 10000)
LANGUAGE plpgsql
AS $fn$
DECLARE
    caller_path pg_catalog.text;
    ts_type pg_catalog.oid;
    id_num pg_catalog.int2;
    valid pg_catalog.text;
    ts_expr pg_catalog.text;
    order_key pg_catalog.text;
    held_q pg_catalog.text;
    busy_q pg_catalog.text;
    q pg_catalog.text;
    has_index pg_catalog.bool;
    busy pg_catalog.bool := true;
    n_null pg_catalog.int8;
    n_out pg_catalog.int8;
    earliest pg_catalog.text;
    latest pg_catalog.text;
    b record;
    n pg_catalog.int4;
    rv pg_catalog.oid[];
    cv pg_catalog.tid[];
    tsv pg_catalog.timestamptz[];
    known_to pg_catalog.timestamptz;
    held pg_catalog.hlculid[];
    ids pg_catalog.hlculid[];
    filled pg_catalog.int8;
    pass_found pg_catalog.int8;
    pass_filled pg_catalog.int8;
    batches pg_catalog.int8 := 0;
    total pg_catalog.int8 := 0;
    passes pg_catalog.int4 := 0;
    left_null pg_catalog.int8;

BEGIN
    -- the caller's search_path, set again as the run's last step
    caller_path := pg_catalog.current_setting('search_path');
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);

    -- every argument and the table's shape, before anything is read or changed
    IF tbl IS NULL OR id_column IS NULL OR ts_column IS NULL OR publisher IS NULL OR batch_size IS NULL THEN
        RAISE EXCEPTION 'argument "%" of hlculid_backfill must not be null',
            CASE WHEN tbl IS NULL THEN 'tbl' WHEN id_column IS NULL THEN 'id_column'
                 WHEN ts_column IS NULL THEN 'ts_column' WHEN publisher IS NULL THEN 'publisher'
                 ELSE 'batch_size' END
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- the read committed rule of the readers: each statement's snapshot is taken after the
    -- last lock, so the checks under it read the table as it is (REPEATABLE READ, which a
    -- database's owner may make the default, would read it as the run began)
    IF pg_catalog.current_setting('transaction_isolation') IN ('repeatable read', 'serializable') THEN
        RAISE EXCEPTION 'hlculid_backfill cannot run in a REPEATABLE READ or SERIALIZABLE transaction'
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Its checks under each batch''s lock must read the table as it is then, not as one snapshot taken before.',
                  HINT = 'Run it at READ COMMITTED: SET default_transaction_isolation = ''read committed'' before CALL.';
    END IF;
    ts_type := pg_catalog.hlculid_backfill_check(tbl, id_column, ts_column);
    SELECT a.attnum INTO id_num FROM pg_attribute a
    WHERE a.attrelid = tbl AND a.attname = id_column AND a.attnum > 0 AND NOT a.attisdropped;
    IF publisher NOT BETWEEN 0 AND 65535 THEN
        RAISE EXCEPTION 'hlculid publisher % is out of range', publisher
            USING ERRCODE = 'numeric_value_out_of_range',
                  DETAIL = 'The publisher field must be between 0 and 65535.';
    END IF;
    IF batch_size < 1 THEN
        RAISE EXCEPTION 'hlculid_backfill cannot make batches of % rows', batch_size
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'batch_size must be at least 1.';
    END IF;

    -- the caller may act as the table's owner (42501 otherwise): an empty batch checks it
    PERFORM pg_catalog.hlculid_backfill_update(tbl, id_column::pg_catalog.text, '{}'::pg_catalog.oid[],
        '{}'::pg_catalog.text[], '{}'::pg_catalog.hlculid[]);

    -- a timestamp without time zone is read as UTC, so ids keep exactly the column's order
    valid := format('extract(epoch FROM %1$I) >= 0 AND extract(epoch FROM %1$I) < 281474976710.656', ts_column);
    ts_expr := format(CASE WHEN ts_type = 'timestamp'::regtype THEN '(t.%I AT TIME ZONE ''UTC'')' ELSE 't.%I' END, ts_column);
    -- qualified: in the pass's query a bare name would bind to its output columns (r, c, ms,
    -- more) in ORDER BY and to the table's in WINDOW, two different orders
    SELECT string_agg(format('t.%I', a.attname), ', ' ORDER BY k.i) INTO order_key
    FROM pg_index x, unnest(x.indkey::int2[]) WITH ORDINALITY k(attnum, i)
    JOIN pg_attribute a ON a.attnum = k.attnum
    WHERE x.indrelid = tbl AND x.indisprimary AND a.attrelid = tbl;
    order_key := format('t.%I, ', ts_column) || coalesce(order_key, 't.tableoid, t.ctid');

    -- rows that cannot get an id: refused before anything changes. Every query built from the
    -- table's name is built anew where it runs and read only if that name still gives the table
    -- when parsed (src/base/read_guard.rs: a schema's owner could rename the schema and put her
    -- view of that name in its place)
    PERFORM pg_catalog.hlculid_expect_reads(NULL, NULL);  -- the name as it is now
    q := format('SELECT count(*) FILTER (WHERE %1$I IS NULL),
                        count(*) FILTER (WHERE %1$I IS NOT NULL AND NOT (%2$s)),
                        min(%1$I) FILTER (WHERE NOT (%2$s))::text,
                        max(%1$I) FILTER (WHERE NOT (%2$s))::text
                 FROM %3$s WHERE %4$I IS NULL', ts_column, valid, tbl, id_column);
    PERFORM pg_catalog.hlculid_expect_reads(tbl::pg_catalog.oid, q);
    EXECUTE q INTO n_null, n_out, earliest, latest;
    IF n_null > 0 THEN
        RAISE EXCEPTION 'cannot backfill % rows of table "%": their % is null', n_null, tbl::text, ts_column
            USING ERRCODE = 'null_value_not_allowed',
                  DETAIL = 'Each id is made from its row''s time. Nothing was changed.',
                  HINT = 'Give those rows a time, or their ids another way, and run it again.';
    END IF;
    IF n_out > 0 THEN
        RAISE EXCEPTION 'cannot backfill % rows of table "%": their % is outside hlculid''s time range', n_out, tbl::text, ts_column
            USING ERRCODE = 'datetime_field_overflow',
                  DETAIL = format('The earliest is %s and the latest %s; hlculid timestamps run from 1970-01-01 00:00:00+00 to 10889-08-02 05:31:50.655+00. Nothing was changed.', earliest, latest),
                  HINT = 'Give those rows a time in the range, or their ids another way, and run it again.';
    END IF;

    -- the ids this publisher already holds in the milliseconds $1 .. $2 (the largest of each);
    -- with an index on the ids, a batch first asks busy_q whether that span holds any at all
    -- (stopping at the first, an index range scan), and only then held_q
    -- (formats, filled where each runs: the table's name is taken there)
    held_q := 'SELECT coalesce(array_agg(g.mx), ''{}'') FROM (
             SELECT pg_catalog.max(t.%1$I) AS mx FROM %2$s t
             WHERE t.%1$I OPERATOR(pg_catalog.>=) pg_catalog.hlculid_min($1)
               AND t.%1$I OPERATOR(pg_catalog.<=) pg_catalog.hlculid_max($2)
               AND pg_catalog.hlculid_publisher(t.%1$I) = $3
             GROUP BY pg_catalog.hlculid_ts(t.%1$I)) g';
    busy_q := 'SELECT EXISTS (SELECT 1 FROM %2$s t
             WHERE t.%1$I OPERATOR(pg_catalog.>=) pg_catalog.hlculid_min($1)
               AND t.%1$I OPERATOR(pg_catalog.<=) pg_catalog.hlculid_max($2)
               AND pg_catalog.hlculid_publisher(t.%1$I) = $3)';
    has_index := EXISTS (
        SELECT FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_am am ON am.oid = i.relam
        WHERE x.indrelid = tbl AND x.indkey[0] = id_num AND am.amname = 'btree'
          AND x.indpred IS NULL AND x.indisvalid);

    -- outside a transaction block this ends the checks' transaction; inside one it fails
    -- (2D000) before anything has changed
    COMMIT;
    caller_path := pg_catalog.current_setting('search_path');
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);

    -- passes (at most 3) until one fills every row it found: a row another session changed
    -- during a pass (so at another ctid) is left for the next one
    LOOP
        passes := passes + 1;
        pass_found := 0;
        pass_filled := 0;
        n := 0;
        -- the rows in order, `more` false on the last; the cursor is kept (materialised) at
        -- the first COMMIT, so the order is the one of this pass's snapshot; the table locked as
        -- a read locks it and checked again first (its columns' types could have changed since
        -- the last batch)
        PERFORM pg_catalog.hlculid_backfill_check(tbl, id_column, ts_column, ts_type::pg_catalog.regtype);
        PERFORM pg_catalog.hlculid_expect_reads(NULL, NULL);  -- the name as it is now
        q := format(
            'SELECT t.tableoid AS r, t.ctid AS c, %1$s AS ts, lead(true, 1, false) OVER w AS more
             FROM %2$s t WHERE t.%3$I IS NULL AND %4$s
             WINDOW w AS (ORDER BY %5$s) ORDER BY %5$s', ts_expr, tbl, id_column, valid, order_key);
        PERFORM pg_catalog.hlculid_expect_reads(tbl::pg_catalog.oid, q);
        FOR b IN EXECUTE q
        LOOP
            n := n + 1;
            rv[n] := b.r;
            cv[n] := b.c;
            tsv[n] := b.ts;
            CONTINUE WHEN n < batch_size AND b.more;

            -- the table locked (its schema's name pinned) until the batch commits, and checked
            -- under the lock: its columns' types cannot change before the batch's queries run
            PERFORM pg_catalog.hlculid_backfill_check(tbl, id_column, ts_column, ts_type::pg_catalog.regtype, true);
            -- the ids, from the extension's clock rule (hlculid_backfill_ids), above the ones
            -- this publisher holds in each millisecond they land in: known for the batch's span
            -- first, and again up to where the ids end whenever a full counter carried them
            -- past it, until they end within what is known
            known_to := tsv[n];
            LOOP
                IF has_index THEN
                    PERFORM pg_catalog.hlculid_expect_reads(NULL, NULL);  -- the name as it is now
                    q := format(busy_q, id_column, tbl);
                    PERFORM pg_catalog.hlculid_expect_reads(tbl::pg_catalog.oid, q);
                    EXECUTE q INTO STRICT busy USING tsv[1], known_to, publisher;
                END IF;
                IF has_index AND NOT busy THEN
                    held := '{}';
                ELSE
                    PERFORM pg_catalog.hlculid_expect_reads(NULL, NULL);  -- the name as it is now
                    q := format(held_q, id_column, tbl);
                    PERFORM pg_catalog.hlculid_expect_reads(tbl::pg_catalog.oid, q);
                    EXECUTE q INTO STRICT held USING tsv[1], known_to, publisher;
                END IF;
                ids := ARRAY(SELECT u.id FROM pg_catalog.hlculid_backfill_ids(tsv, publisher, held) WITH ORDINALITY u(id, i) ORDER BY u.i);
                EXIT WHEN ids[n] OPERATOR(pg_catalog.<=) pg_catalog.hlculid_max(known_to);
                known_to := pg_catalog.hlculid_ts(ids[n]);
            END LOOP;
            filled := pg_catalog.hlculid_backfill_update(tbl, id_column::pg_catalog.text, rv, cv::pg_catalog.text[], ids);
            pass_found := pass_found + n;
            pass_filled := pass_filled + filled;
            batches := batches + 1;
            n := 0;
            rv := '{}';
            cv := '{}';
            tsv := '{}';
            COMMIT;
            caller_path := pg_catalog.current_setting('search_path');
            PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
        END LOOP;
        total := total + pass_filled;
        EXIT WHEN pass_filled = pass_found OR passes = 3;
    END LOOP;
    RAISE NOTICE 'hlculid_backfill filled % rows of table "%" in % batches', total, tbl::text, batches;
    IF pass_filled < pass_found THEN
        PERFORM pg_catalog.hlculid_backfill_check(tbl, id_column, ts_column, ts_type::pg_catalog.regtype);
        PERFORM pg_catalog.hlculid_expect_reads(NULL, NULL);  -- the name as it is now
        q := format('SELECT count(*) FROM %s t WHERE t.%I IS NULL AND %s', tbl, id_column, valid);
        PERFORM pg_catalog.hlculid_expect_reads(tbl::pg_catalog.oid, q);
        EXECUTE q INTO left_null;
        IF left_null > 0 THEN
            RAISE WARNING '% rows of table "%" still have no id: other sessions changed them during each of % passes', left_null, tbl::text, passes
                USING HINT = 'Run hlculid_backfill again when they are left alone.';
        END IF;
    END IF;
    -- the pinned path ends with the run: the caller's transaction goes on with its own
    PERFORM pg_catalog.set_config('search_path', caller_path, true);
END
$fn$;

COMMENT ON FUNCTION hlculid_backfill_check(regclass, name, name, regtype, boolean) IS 'the table as every part of hlculid_backfill needs it, checked under a lock ALTER TABLE waits for (for a batch SHARE UPDATE EXCLUSIVE, its schema pinned; else ACCESS SHARE): a table, no foreign child, not Citus'', the id column an hlculid, the time column timestamptz or timestamp (its type returned; with the run''s, unchanged)';
COMMENT ON FUNCTION hlculid_backfill_ids(timestamptz[], integer, hlculid[]) IS 'the ids of one batch of a backfill: for times in ascending order, increasing, each in its time''s millisecond (unless a full counter carried), of the given publisher, above the given ids of that publisher in each millisecond';

CREATE OR REPLACE FUNCTION hlculid_backfill_update(tbl regclass, id_column text, tableoids oid[],
    ctids text[], ids hlculid[])
RETURNS int8
LANGUAGE c VOLATILE STRICT
AS 'MODULE_PATHNAME', 'hlculid_backfill_update_wrapper';
COMMENT ON FUNCTION hlculid_backfill_update(regclass, text, oid[], text[], hlculid[]) IS 'one batch of hlculid_backfill, run as the table''s owner: gives each row (tableoid, ctid) whose id is NULL its id; returns how many it filled';
