-- `hlculid_backfill`: fills the NULL ids of an existing table from a time column, in batches,
-- each committed on its own, with a publisher id of the caller's (one reserved for backfills,
-- so `hlculid_publisher(id)` tells backfilled rows from live ones).
--
-- - Order: ids follow (time, then the primary key, else tableoid and ctid), taken once in one
--   snapshot at the start (the loop's cursor is materialised at the first commit).
-- - Uniqueness within and across runs: each id is the next value of a clock that, like the
--   server's, takes `max(last + 1, ms << 16)` and carries a full counter into the next
--   millisecond; it also steps over the values of every millisecond it enters up to the largest
--   id of this publisher already in the table (looked up per millisecond with the id index,
--   or per batch over its time span without one). Batches of one table are serialised by an
--   advisory lock, so two runs at once never read the same largest id.
-- - Locks: each batch is one UPDATE of its rows by (tableoid, ctid) and a COMMIT, so no lock
--   outlives a batch, and ROW EXCLUSIVE never blocks other writers. A row changed by another
--   session meanwhile (so at another ctid) is skipped, and a later pass takes it; rows inserted
--   meanwhile with `DEFAULT hlculid_generate()` are not NULL, so they keep their live ids.
-- - Logical values are held biased, `(ms - 2^47) << 16 | counter`, so that every millisecond
--   up to 10889 fits a signed int8 and int8 order is id order; `# sign` gives the unsigned bits.
-- - A procedure with a `SET` clause cannot commit, so the fixed `search_path` is set with
--   `set_config(..., true)` at the start of every transaction of the run; the extension's own
--   objects are schema-qualified (`@extschema@`) and the declared types are pg_catalog's.

CREATE OR REPLACE PROCEDURE hlculid_backfill(tbl regclass, id_column name, ts_column name,
    publisher int4, batch_size int4 DEFAULT 10000)
LANGUAGE plpgsql
AS $fn$
DECLARE
    sign pg_catalog.int8 := '-9223372036854775808';
    bias pg_catalog.int8 := '140737488355328';  -- 2^47
    kind pg_catalog."char";
    id_type pg_catalog.oid;
    ts_type pg_catalog.oid;
    id_num pg_catalog.int2;
    valid pg_catalog.text;
    ms_expr pg_catalog.text;
    order_key pg_catalog.text;
    l_expr pg_catalog.text;
    range_fmt pg_catalog.text;
    span_q pg_catalog.text;
    busy_q pg_catalog.text;
    probe_q pg_catalog.text;
    has_index pg_catalog.bool;
    busy pg_catalog.bool;
    covered pg_catalog.bool;
    pub_bytes pg_catalog.bytea;
    n_null pg_catalog.int8;
    n_out pg_catalog.int8;
    earliest pg_catalog.text;
    latest pg_catalog.text;
    b record;
    n pg_catalog.int4;
    rv pg_catalog.oid[];
    cv pg_catalog.tid[];
    msv pg_catalog.int8[];
    em pg_catalog.int8[];
    ex pg_catalog.int8[];
    em1 pg_catalog.int8[];
    ex1 pg_catalog.int8[];
    lv pg_catalog.int8[];
    k pg_catalog.int4;
    i pg_catalog.int4;
    m pg_catalog.int8;
    cm pg_catalog.int8;
    cmax pg_catalog.int8;
    v pg_catalog.int8;
    last pg_catalog.int8;
    found_rows pg_catalog.int8;
    filled pg_catalog.int8;
    pass_found pg_catalog.int8;
    pass_filled pg_catalog.int8;
    batches pg_catalog.int8 := 0;
    total pg_catalog.int8 := 0;
    passes pg_catalog.int4 := 0;
    left_null pg_catalog.int8;
BEGIN
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);

    -- every argument and the table's shape, before anything is read or changed
    IF tbl IS NULL OR id_column IS NULL OR ts_column IS NULL OR publisher IS NULL OR batch_size IS NULL THEN
        RAISE EXCEPTION 'argument "%" of hlculid_backfill must not be null',
            CASE WHEN tbl IS NULL THEN 'tbl' WHEN id_column IS NULL THEN 'id_column'
                 WHEN ts_column IS NULL THEN 'ts_column' WHEN publisher IS NULL THEN 'publisher'
                 ELSE 'batch_size' END
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT c.relkind INTO kind FROM pg_class c WHERE c.oid = tbl;
    IF kind IS NULL OR kind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '"%" is not a table', tbl::text
            USING ERRCODE = 'wrong_object_type';
    END IF;
    SELECT a.atttypid, a.attnum INTO id_type, id_num FROM pg_attribute a
    WHERE a.attrelid = tbl AND a.attname = id_column AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation "%" does not exist', id_column, tbl::text
            USING ERRCODE = 'undefined_column';
    END IF;
    IF id_type <> '@extschema@.hlculid'::regtype THEN
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

    -- a timestamp without time zone is read as UTC, so ids keep exactly the column's order
    valid := format('extract(epoch FROM %1$I) >= 0 AND extract(epoch FROM %1$I) < 281474976710.656', ts_column);
    ms_expr := format('floor(extract(epoch FROM %I) * 1000)::int8', ts_column);
    -- qualified: in the pass's query a bare name would bind to its output columns (r, c, ms,
    -- more) in ORDER BY and to the table's in WINDOW, two different orders
    SELECT string_agg(format('t.%I', a.attname), ', ' ORDER BY k.i) INTO order_key
    FROM pg_index x, unnest(x.indkey::int2[]) WITH ORDINALITY k(attnum, i)
    JOIN pg_attribute a ON a.attnum = k.attnum
    WHERE x.indrelid = tbl AND x.indisprimary AND a.attrelid = tbl;
    order_key := format('t.%I, ', ts_column) || coalesce(order_key, 't.tableoid, t.ctid');

    -- rows that cannot get an id: refused before anything changes
    EXECUTE format('SELECT count(*) FILTER (WHERE %1$I IS NULL),
                           count(*) FILTER (WHERE %1$I IS NOT NULL AND NOT (%2$s)),
                           min(%1$I) FILTER (WHERE NOT (%2$s))::text,
                           max(%1$I) FILTER (WHERE NOT (%2$s))::text
                    FROM %3$s WHERE %4$I IS NULL', ts_column, valid, tbl, id_column)
        INTO n_null, n_out, earliest, latest;
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

    -- what this publisher already holds, as the largest biased value of each millisecond among
    -- those of $1 (sorted): span_q lists the milliseconds in $1[1] .. $1[cardinality($1)] that
    -- hold any, with one scan of that span (an index range scan, or without an index a scan of
    -- the table); with an index, a batch first asks busy_q whether the span holds any at all
    -- (stopping at the first), and only then probe_q, one index probe per millisecond of $1
    pub_bytes := substring(int4send(publisher) FROM 3);
    l_expr := format('(''x'' || encode(substring(t.%I::bytea FROM 1 FOR 8), ''hex''))::bit(64)::int8 # $2', id_column);
    range_fmt := 't.%1$I OPERATOR(@extschema@.>=) (int8send(((%2$s - $3) * 65536) # $2) || decode(''0000000000000000'', ''hex''))::@extschema@.hlculid
         AND t.%1$I OPERATOR(@extschema@.<=) (int8send(((%3$s - $3) * 65536 + 65535) # $2) || decode(''ffffffffffffffff'', ''hex''))::@extschema@.hlculid
         AND @extschema@.hlculid_publisher(t.%1$I) = $4';
    span_q := format(
        'SELECT coalesce(array_agg(g.ms ORDER BY g.ms), ''{}''), coalesce(array_agg(g.mx ORDER BY g.ms), ''{}'')
         FROM (SELECT (s.l >> 16) + $3 AS ms, max(s.l) AS mx
               FROM (SELECT %1$s AS l FROM %2$s t WHERE %3$s) s GROUP BY 1) g',
        l_expr, tbl, format(range_fmt, id_column, '($1)[1]', '($1)[cardinality($1)]'));
    busy_q := format('SELECT EXISTS (SELECT FROM %1$s t WHERE %2$s)',
        tbl, format(range_fmt, id_column, '($1)[1]', '($1)[cardinality($1)]'));
    probe_q := format(
        'SELECT array_agg(d.ms ORDER BY d.ms), array_agg(x.mx ORDER BY d.ms)
         FROM (SELECT DISTINCT u.ms FROM unnest($1) u(ms)) d
         LEFT JOIN LATERAL (SELECT %1$s AS mx FROM %2$s t WHERE %3$s
                            ORDER BY t.%4$I DESC LIMIT 1) x ON true',
        l_expr, tbl, format(range_fmt, id_column, 'd.ms', 'd.ms'), id_column);
    has_index := EXISTS (
        SELECT FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_am am ON am.oid = i.relam
        WHERE x.indrelid = tbl AND x.indkey[0] = id_num AND am.amname = 'btree'
          AND x.indpred IS NULL AND x.indisvalid);

    -- outside a transaction block this ends the checks' transaction; inside one it fails
    -- (2D000) before anything has changed
    COMMIT;
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);

    -- passes (at most 3) until one fills every row it found: a row another session changed
    -- during a pass (so at another ctid) is left for the next one
    LOOP
        passes := passes + 1;
        pass_found := 0;
        pass_filled := 0;
        n := 0;
        -- the rows in order, `more` false on the last; the cursor is kept (materialised) at
        -- the first COMMIT, so the order is the one of this pass's snapshot
        FOR b IN EXECUTE format(
            'SELECT t.tableoid AS r, t.ctid AS c, %1$s AS ms, lead(true, 1, false) OVER w AS more
             FROM %2$s t WHERE t.%3$I IS NULL AND %4$s
             WINDOW w AS (ORDER BY %5$s) ORDER BY %5$s', ms_expr, tbl, id_column, valid, order_key)
        LOOP
            n := n + 1;
            rv[n] := b.r;
            cv[n] := b.c;
            msv[n] := b.ms;
            CONTINUE WHEN n < batch_size AND b.more;

            PERFORM pg_advisory_xact_lock(hashtext('hlculid_backfill'), tbl::oid::int4);
            IF NOT has_index THEN
                EXECUTE span_q INTO em, ex USING msv, sign, bias, publisher;
                covered := true;
            ELSE
                EXECUTE busy_q INTO busy USING msv, sign, bias, publisher;
                IF busy THEN
                    EXECUTE probe_q INTO em, ex USING msv, sign, bias, publisher;
                ELSE
                    em := '{}';
                    ex := '{}';
                END IF;
                covered := NOT busy;
            END IF;
            -- the clock: max(last + 1, ms << 16), then past the largest existing value of the
            -- millisecond it lands in (a later one when the counter carried)
            lv := '{}';
            last := NULL;
            k := 1;
            cm := NULL;
            FOR i IN 1 .. cardinality(msv) LOOP
                v := (msv[i] - bias) * 65536;
                IF v <= last THEN
                    IF last = 9223372036854775807 THEN
                        RAISE EXCEPTION 'hlculid_backfill ran out of ids at the end of hlculid''s time range'
                            USING ERRCODE = 'datetime_field_overflow',
                                  DETAIL = 'The counter of the last millisecond, 10889-08-02 05:31:50.655+00, is full.';
                    END IF;
                    v := last + 1;
                END IF;
                LOOP
                    m := (v >> 16) + bias;
                    IF m IS DISTINCT FROM cm THEN
                        cm := m;
                        WHILE k <= cardinality(em) AND em[k] < m LOOP
                            k := k + 1;
                        END LOOP;
                        IF k <= cardinality(em) AND em[k] = m THEN
                            cmax := ex[k];
                        ELSIF covered AND m <= msv[cardinality(msv)] THEN
                            cmax := NULL;
                        ELSE
                            -- a millisecond the counter carried into, none of the batch's own
                            EXECUTE span_q INTO em1, ex1 USING ARRAY[m], sign, bias, publisher;
                            cmax := ex1[1];
                        END IF;
                    END IF;
                    EXIT WHEN cmax IS NULL OR v > cmax;
                    IF cmax = 9223372036854775807 THEN
                        RAISE EXCEPTION 'hlculid_backfill ran out of ids at the end of hlculid''s time range'
                            USING ERRCODE = 'datetime_field_overflow',
                                  DETAIL = 'The counter of the last millisecond, 10889-08-02 05:31:50.655+00, is full.';
                    END IF;
                    v := cmax + 1;
                END LOOP;
                lv[i] := v;
                last := v;
            END LOOP;
            EXECUTE format(
                'UPDATE %1$s t SET %2$I = (int8send(u.l # $4) || $5 || substring(uuid_send(gen_random_uuid()) FROM 11 FOR 6))::@extschema@.hlculid
                 FROM (SELECT * FROM unnest($1, $2, $3) u(r, c, l) ORDER BY 1, 2) u
                 WHERE t.tableoid = u.r AND t.ctid = u.c AND t.%2$I IS NULL', tbl, id_column)
                USING rv, cv, lv, sign, pub_bytes;
            GET DIAGNOSTICS filled = ROW_COUNT;
            pass_found := pass_found + cardinality(msv);
            pass_filled := pass_filled + filled;
            batches := batches + 1;
            n := 0;
            rv := '{}';
            cv := '{}';
            msv := '{}';
            COMMIT;
            PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
        END LOOP;
        total := total + pass_filled;
        EXIT WHEN pass_filled = pass_found OR passes = 3;
    END LOOP;
    RAISE NOTICE 'hlculid_backfill filled % rows of table "%" in % batches', total, tbl::text, batches;
    IF pass_filled < pass_found THEN
        EXECUTE format('SELECT count(*) FROM %s t WHERE t.%I IS NULL AND %s', tbl, id_column, valid) INTO left_null;
        IF left_null > 0 THEN
            RAISE WARNING '% rows of table "%" still have no id: other sessions changed them during each of % passes', left_null, tbl::text, passes
                USING HINT = 'Run hlculid_backfill again when they are left alone.';
        END IF;
    END IF;
END
$fn$;
