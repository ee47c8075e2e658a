-- hlculid 0.3.0 -> 0.4.0: readers that never miss an event.
-- Every object a 0.3.0 database has keeps its OID, so grants on it and views using it survive
-- the update; new things are added beside the old ones.
\echo Use "ALTER EXTENSION hlculid UPDATE TO '0.4.0'" to load this file. \quit

-- == skip support ==
-- As in every script since 0.2.0: a database moved to PostgreSQL 18 with pg_upgrade gains btree
-- support function 6 here, so the update ends in the catalog of a fresh install on 18.
DO $$
BEGIN
  IF current_setting('server_version_num')::int >= 180000 AND NOT EXISTS (
      SELECT FROM pg_amproc p JOIN pg_opclass c ON c.opcfamily = p.amprocfamily
      WHERE c.opcintype = 'hlculid'::regtype AND c.opcname = 'hlculid_ops' AND p.amprocnum = 6
        AND c.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'btree')) THEN
    ALTER OPERATOR FAMILY hlculid_ops USING btree ADD FUNCTION 6 (hlculid) hlculid_skipsupport(internal);
  END IF;
END $$;

-- == the horizon ==
-- The generators become PARALLEL RESTRICTED: a parallel worker's commit comes before its
-- leader's, so ids made in a worker could be released from the horizon before they are visible.
ALTER FUNCTION hlculid_generate() PARALLEL RESTRICTED;
ALTER FUNCTION hlculid_generate_n(int4) PARALLEL RESTRICTED;
ALTER FUNCTION hlculid_generate_bigint() PARALLEL RESTRICTED;
ALTER FUNCTION hlculid_generate_bigint_n(int4) PARALLEL RESTRICTED;

CREATE  FUNCTION "hlculid_horizon"() RETURNS hlculid /* Hlculid */
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_horizon_wrapper';

CREATE  FUNCTION "hlculid_horizon_bigint"() RETURNS bigint /* i64 */
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_horizon_bigint_wrapper';

CREATE  FUNCTION "hlculid_horizon_catch_up"() RETURNS hlculid /* Hlculid */
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_horizon_catch_up_wrapper';

CREATE  FUNCTION "hlculid_horizon_holds"() RETURNS TABLE (
	"pid" INT,  /* Option < i32 > */
	"transaction" bigint,  /* Option < i64 > */
	"holds_at" hlculid  /* Hlculid */
)
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_horizon_holds_wrapper';

-- == helpers fixed (issue 24) ==
-- hlculid_backfill: ordering columns qualified (a key column named c, r, ms or more bound to the
-- pass's own output columns and left rows unfilled); hlculid_create_partitions: the schema name
-- is quoted once (a schema like "user" was quoted twice), rows move through a temp table of a
-- name of its own; both partition helpers lock the table (SHARE UPDATE EXCLUSIVE) instead of an
-- advisory key any role could hold; a period whose rows a foreign key keeps from moving is
-- skipped with a WARNING, the others created. Same signatures: grants survive.
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

CREATE OR REPLACE FUNCTION hlculid_create_partitions(
    parent regclass, from_ts timestamptz, to_ts timestamptz, every interval DEFAULT '1 month')
RETURNS SETOF regclass
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    -- bytes of an hlculid sort like the ids; these two stand for MINVALUE and MAXVALUE
    bottom constant bytea := ''::bytea;
    top constant bytea := decode(repeat('ff', 17), 'hex');
    -- the last instant an id can hold: a period ending after it is bounded by MAXVALUE
    last_ts constant timestamptz :=
        @extschema@.hlculid_ts('FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF'::@extschema@.hlculid);
    span_lo bytea;
    span_hi bytea;
    months int;
    days int;
    usecs numeric;
    stride interval;
    unit text;
    mi int;
    s timestamp;
    e timestamp;
    p_lo bytea[] := '{}';
    p_hi bytea[] := '{}';
    ex_lo bytea[];
    ex_hi bytea[];
    def regclass;
    g_lo bytea[] := '{}';
    g_hi bytea[] := '{}';
    cursor_ bytea;
    i int;
    j int := 1;
    k int;
    nsp name;
    rel name;
    key name;
    cols text;
    t timestamp;
    stamp text;
    tail text;
    pre text;
    part name;
    n int;
    lo_txt text;
    hi_txt text;
    cond text;
    moving boolean;
    moved bigint;
    moving_tab text;
    fk record;
    fk_name text;
    fk_table text;
    fk_oid oid;
    fk_up oid;
BEGIN
    -- every input is checked before anything is locked or changed
    span_lo := @extschema@.hlculid_min(from_ts)::bytea;
    span_hi := @extschema@.hlculid_min(to_ts)::bytea;
    months := extract(year FROM every)::int * 12 + extract(month FROM every)::int;
    days := extract(day FROM every)::int;
    usecs := extract(epoch FROM every - make_interval(months => months, days => days)) * 1000000;
    IF months <> 0 AND (days <> 0 OR usecs <> 0) THEN
        RAISE EXCEPTION 'partition interval "%" mixes months with days or smaller units', every
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use whole months (such as 3 months), or a fixed length (such as 7 days or 15 minutes).';
    ELSIF months > 0 THEN
        unit := 'month';
    ELSIF months = 0 AND days::numeric * 86400000000 + usecs > 0
          AND (days::numeric * 86400000000 + usecs) % 60000000 = 0 THEN
        stride := make_interval(secs => ((days::numeric * 86400000000 + usecs) / 1000000)::float8);
        unit := CASE WHEN (days::numeric * 86400000000 + usecs) % 86400000000 = 0 THEN 'day'
                     WHEN (days::numeric * 86400000000 + usecs) % 3600000000 = 0 THEN 'hour'
                     ELSE 'minute' END;
    ELSE
        RAISE EXCEPTION 'partition interval "%" is not a positive whole number of months or minutes', every
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use whole months (such as 3 months), or a fixed length (such as 7 days or 15 minutes).';
    END IF;
    IF to_ts <= from_ts THEN
        RETURN;
    END IF;

    -- the periods that meet [from_ts, to_ts), on the fixed grid, in UTC
    IF unit = 'month' THEN
        mi := (extract(year FROM from_ts AT TIME ZONE 'UTC')::int - 1970) * 12
              + extract(month FROM from_ts AT TIME ZONE 'UTC')::int - 1;
        mi := mi - mi % months;
        s := timestamp '1970-01-01' + make_interval(months => mi);
    ELSE
        s := date_bin(stride, from_ts AT TIME ZONE 'UTC', timestamp '1970-01-01');
    END IF;
    WHILE (s AT TIME ZONE 'UTC') < to_ts LOOP
        IF cardinality(p_lo) >= 10000 THEN
            RAISE EXCEPTION 'hlculid_create_partitions would create more than 10000 partitions'
                USING ERRCODE = 'program_limit_exceeded',
                      HINT = 'Use a longer interval or a shorter span.';
        END IF;
        IF unit = 'month' THEN
            mi := mi + months;
            e := timestamp '1970-01-01' + make_interval(months => mi);
        ELSE
            e := s + stride;
        END IF;
        p_lo := array_append(p_lo, @extschema@.hlculid_min(s AT TIME ZONE 'UTC')::bytea);
        p_hi := array_append(p_hi, CASE WHEN (e AT TIME ZONE 'UTC') > last_ts THEN top
                                        ELSE @extschema@.hlculid_min(e AT TIME ZONE 'UTC')::bytea END);
        s := e;
    END LOOP;

    -- one run at a time per table, under a lock only roles that may change the table can take
    -- (0.3.0's advisory lock could be held by any role)
    EXECUTE format('LOCK TABLE ONLY %s IN SHARE UPDATE EXCLUSIVE MODE', parent);

    -- what the partitions cover now (this also refuses a table not partitioned on an hlculid)
    SELECT coalesce(array_agg(b.lo ORDER BY b.lo) FILTER (WHERE NOT b.is_default), '{}'),
           coalesce(array_agg(b.hi ORDER BY b.lo) FILTER (WHERE NOT b.is_default), '{}'),
           (array_agg(b.partition) FILTER (WHERE b.is_default))[1]
    INTO ex_lo, ex_hi, def
    FROM (SELECT x.partition, x.is_default,
                 coalesce(x.from_id::bytea, bottom) AS lo, coalesce(x.to_id::bytea, top) AS hi
          FROM @extschema@.hlculid_partition_bounds(parent) x) b;

    -- the parts of each period no partition covers (partitions never overlap, so sorted by
    -- their lower bound they are sorted by their upper bound too), kept if they meet the span
    FOR i IN 1 .. cardinality(p_lo) LOOP
        cursor_ := p_lo[i];
        WHILE j <= cardinality(ex_lo) AND ex_hi[j] <= cursor_ LOOP
            j := j + 1;
        END LOOP;
        k := j;
        WHILE k <= cardinality(ex_lo) AND ex_lo[k] < p_hi[i] LOOP
            IF ex_lo[k] > cursor_ AND cursor_ < span_hi AND ex_lo[k] > span_lo THEN
                g_lo := array_append(g_lo, cursor_);
                g_hi := array_append(g_hi, ex_lo[k]);
            END IF;
            cursor_ := greatest(cursor_, ex_hi[k]);
            k := k + 1;
        END LOOP;
        IF cursor_ < p_hi[i] AND cursor_ < span_hi AND p_hi[i] > span_lo THEN
            g_lo := array_append(g_lo, cursor_);
            g_hi := array_append(g_hi, p_hi[i]);
        END IF;
    END LOOP;
    IF cardinality(g_lo) = 0 THEN
        RETURN;
    END IF;

    -- creating a partition locks the table (and its default partition) anyway: lock them first,
    -- so that no row reaches the default partition between looking at it and creating
    EXECUTE format('LOCK TABLE ONLY %s IN ACCESS EXCLUSIVE MODE', parent);
    IF def IS NOT NULL THEN
        EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', def);
    END IF;
    -- the name itself (pg_identify_object quotes it, and format's %I would quote it again)
    SELECT n.nspname INTO nsp FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = parent;
    SELECT c.relname INTO rel FROM pg_class c WHERE c.oid = parent;
    SELECT a.attname INTO key FROM pg_partitioned_table p
    JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
    WHERE p.partrelid = parent;

    FOR i IN 1 .. cardinality(g_lo) LOOP
        lo_txt := g_lo[i]::@extschema@.hlculid::text;
        hi_txt := CASE WHEN g_hi[i] = top THEN NULL ELSE g_hi[i]::@extschema@.hlculid::text END;

        -- named after the start: the period's unit, or finer where a piece starts between periods
        t := @extschema@.hlculid_ts(g_lo[i]::@extschema@.hlculid) AT TIME ZONE 'UTC';
        stamp := '_p' || to_char(t, CASE
            WHEN unit = 'month' AND date_trunc('month', t) = t THEN 'YYYY_MM'
            WHEN unit IN ('month', 'day') AND date_trunc('day', t) = t THEN 'YYYY_MM_DD'
            WHEN unit IN ('month', 'day', 'hour') AND date_trunc('hour', t) = t THEN 'YYYY_MM_DD_HH24'
            WHEN date_trunc('minute', t) = t THEN 'YYYY_MM_DD_HH24MI'
            WHEN date_trunc('second', t) = t THEN 'YYYY_MM_DD_HH24MISS'
            ELSE 'YYYY_MM_DD_HH24MISS_MS' END);
        -- at most 63 bytes: a longer table name is cut on a character boundary and followed by
        -- a hash of the whole name, so two long names sharing a beginning stay apart; a name
        -- already taken (a detached partition, say) gets a number
        n := 1;
        LOOP
            tail := stamp || CASE WHEN n > 1 THEN '_' || n ELSE '' END;
            IF octet_length(rel) + octet_length(tail) <= 63 THEN
                part := rel || tail;
            ELSE
                pre := left(rel, 54 - octet_length(tail));
                WHILE octet_length(pre) > 54 - octet_length(tail) LOOP
                    pre := left(pre, -1);
                END LOOP;
                part := pre || '_' || left(encode(sha256(convert_to(rel, 'UTF8')), 'hex'), 8) || tail;
            END IF;
            EXIT WHEN to_regclass(format('%I.%I', nsp, part)) IS NULL
                  AND to_regtype(format('%I.%I', nsp, part)) IS NULL;
            n := n + 1;
        END LOOP;

        -- rows already waiting in the default partition for this piece move into it
        cond := format('%I OPERATOR(@extschema@.>=) %L::@extschema@.hlculid', key, lo_txt);
        IF hi_txt IS NOT NULL THEN
            cond := cond || format(' AND %I OPERATOR(@extschema@.<) %L::@extschema@.hlculid', key, hi_txt);
        END IF;
        moving := false;
        IF def IS NOT NULL THEN
            EXECUTE format('SELECT EXISTS (SELECT FROM %s WHERE %s)', def, cond) INTO moving;
        END IF;
        IF moving THEN
            -- A move is a delete and an insert. A foreign key that acts on delete (cascade, set
            -- null/default) would change the referencing rows, and a deferred one would fail at
            -- commit, after this call: such a piece is skipped, with a WARNING naming the
            -- constraint, before anything of it changes; the other pieces are still created.
            SELECT c.conname, c.conrelid::regclass AS referencing,
                   CASE WHEN c.confdeltype IN ('c', 'n', 'd') THEN 'acts on delete' ELSE 'is deferred' END AS why
            INTO fk FROM pg_constraint c
            WHERE c.contype = 'f' AND c.confrelid IN (parent, def)
              AND (c.confdeltype IN ('c', 'n', 'd') OR c.condeferrable)
            ORDER BY c.confrelid <> parent, c.conname LIMIT 1;
            IF FOUND THEN
                RAISE WARNING 'skipped new partition "%.%": rows of default partition "%" cannot move into it', nsp, part, def::text
                    USING DETAIL = format('Foreign key constraint "%s" of table "%s" %s; moving a row deletes and inserts it.', fk.conname, fk.referencing, fk.why),
                          HINT = 'Move those rows out of the default partition while the constraint is dropped (see Time partitions in hlculid''s README), then run this again.';
                CONTINUE;
            END IF;
            SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO cols
            FROM pg_attribute a
            WHERE a.attrelid = parent AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
        END IF;

        -- a subtransaction: a foreign key that refers to a row being moved (NO ACTION, RESTRICT)
        -- fails the move; the piece is then skipped whole and the others are still created
        BEGIN
            IF moving THEN
                -- a name of its own: a session's temp table could have any fixed one
                moving_tab := 'hlculid_moving_' || md5(clock_timestamp()::text || random()::text);
                EXECUTE format('CREATE TEMPORARY TABLE %I AS '
                               'WITH d AS (DELETE FROM %s WHERE %s RETURNING *) SELECT * FROM d', moving_tab, def, cond);
                GET DIAGNOSTICS moved = ROW_COUNT;
            END IF;
            EXECUTE format('CREATE TABLE %I.%I PARTITION OF %s FOR VALUES FROM (%L) TO (%s)',
                           nsp, part, parent, lo_txt, coalesce(quote_literal(hi_txt), 'MAXVALUE'));
            IF moving THEN
                EXECUTE format('INSERT INTO %I.%I (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM pg_temp.%I',
                               nsp, part, cols, cols, moving_tab);
                EXECUTE format('DROP TABLE pg_temp.%I', moving_tab);
                RAISE NOTICE 'moved % rows from default partition "%" into new partition "%.%"', moved, def::text, nsp, part;
            END IF;
        -- (RESTRICT is 23001 from PostgreSQL 18 on, 23503 before)
        EXCEPTION WHEN foreign_key_violation OR restrict_violation THEN
            GET STACKED DIAGNOSTICS fk_name = CONSTRAINT_NAME, fk_table = TABLE_NAME;
            fk_oid := NULL;
            fk_up := NULL;
            -- the error names the partition-level clone of the user's constraint (named
            -- differently by each major): report the constraint the user made
            SELECT c.oid, c.conparentid INTO fk_oid, fk_up FROM pg_constraint c
            WHERE c.conname = fk_name AND c.contype = 'f' AND c.confrelid IN (parent, def)
            ORDER BY c.confrelid = def DESC LIMIT 1;
            WHILE fk_up IS NOT NULL AND fk_up <> 0 LOOP
                fk_oid := fk_up;
                SELECT c.conparentid INTO fk_up FROM pg_constraint c WHERE c.oid = fk_oid;
            END LOOP;
            IF fk_oid IS NOT NULL THEN
                SELECT c.conname, c.conrelid::regclass::text INTO fk_name, fk_table FROM pg_constraint c WHERE c.oid = fk_oid;
            END IF;
            RAISE WARNING 'skipped new partition "%.%": rows of default partition "%" cannot move into it', nsp, part, def::text
                USING DETAIL = format('Foreign key constraint "%s" of table "%s" refers to rows among them; moving a row deletes and inserts it.', fk_name, fk_table),
                      HINT = 'Move those rows out of the default partition while the constraint is dropped (see Time partitions in hlculid''s README), then run this again.';
            CONTINUE;
        END;
        RETURN NEXT format('%I.%I', nsp, part)::regclass;
    END LOOP;
END
$fn$;

CREATE OR REPLACE FUNCTION hlculid_drop_partitions(
    parent regclass, older_than timestamptz, detach_only boolean DEFAULT false)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    -- a time an id cannot hold (before 1970, after 10889, infinite) is refused here (22008)
    cutoff @extschema@.hlculid := @extschema@.hlculid_min(older_than);
    child record;
    qualified text;
BEGIN
    -- one run at a time per table, under a lock only roles that may change the table can take
    -- (0.3.0's advisory lock could be held by any role)
    EXECUTE format('LOCK TABLE ONLY %s IN SHARE UPDATE EXCLUSIVE MODE', parent);
    -- (this also refuses a table not partitioned on an hlculid, before anything is detached)
    FOR child IN
        SELECT b.partition, b.to_id FROM @extschema@.hlculid_partition_bounds(parent) b
        WHERE NOT b.is_default AND b.to_id OPERATOR(@extschema@.<=) cutoff
        ORDER BY b.to_id
    LOOP
        qualified := (pg_identify_object('pg_class'::regclass, child.partition, 0)).identity;
        EXECUTE format('ALTER TABLE %s DETACH PARTITION %s', parent, child.partition);
        IF NOT detach_only THEN
            EXECUTE format('DROP TABLE %s', child.partition);
        END IF;
        RETURN NEXT qualified;
    END LOOP;
END
$fn$;

-- == uuid: assignment cast, cross-type comparisons (issue 24) ==
-- The uuid -> hlculid cast becomes assignment-only: an implicit one turned queries on plain uuid
-- columns (max(u), coalesce, UNION, CASE) into hlculid ones. `id = some_uuid` keeps an index on
-- id through cross-type operators in hlculid's btree family, as int4 = int8 in integers'.
DROP CAST (uuid AS hlculid);
CREATE CAST (uuid AS hlculid) WITH FUNCTION hlculid_from_uuid(uuid) AS ASSIGNMENT;

CREATE  FUNCTION "hlculid_ge_uuid"(
	"a" hlculid, /* Hlculid */
	"b" uuid /* Uuid */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_ge_uuid_wrapper';

CREATE OPERATOR >= (
	PROCEDURE="hlculid_ge_uuid",
	LEFTARG=hlculid, /* Hlculid */
	RIGHTARG=uuid, /* Uuid */
	COMMUTATOR = <=,
	NEGATOR = <,
	RESTRICT = scalargesel,
	JOIN = scalargejoinsel
);

CREATE  FUNCTION "hlculid_eq_uuid"(
	"a" hlculid, /* Hlculid */
	"b" uuid /* Uuid */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_eq_uuid_wrapper';

CREATE OPERATOR = (
	PROCEDURE="hlculid_eq_uuid",
	LEFTARG=hlculid, /* Hlculid */
	RIGHTARG=uuid, /* Uuid */
	COMMUTATOR = =,
	NEGATOR = <>,
	RESTRICT = eqsel,
	JOIN = eqjoinsel
);

CREATE  FUNCTION "hlculid_gt_uuid"(
	"a" hlculid, /* Hlculid */
	"b" uuid /* Uuid */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_gt_uuid_wrapper';

CREATE OPERATOR > (
	PROCEDURE="hlculid_gt_uuid",
	LEFTARG=hlculid, /* Hlculid */
	RIGHTARG=uuid, /* Uuid */
	COMMUTATOR = <,
	NEGATOR = <=,
	RESTRICT = scalargtsel,
	JOIN = scalargtjoinsel
);

CREATE  FUNCTION "hlculid_le_uuid"(
	"a" hlculid, /* Hlculid */
	"b" uuid /* Uuid */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_le_uuid_wrapper';

CREATE OPERATOR <= (
	PROCEDURE="hlculid_le_uuid",
	LEFTARG=hlculid, /* Hlculid */
	RIGHTARG=uuid, /* Uuid */
	COMMUTATOR = >=,
	NEGATOR = >,
	RESTRICT = scalarlesel,
	JOIN = scalarlejoinsel
);

CREATE  FUNCTION "hlculid_lt_uuid"(
	"a" hlculid, /* Hlculid */
	"b" uuid /* Uuid */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_lt_uuid_wrapper';

CREATE OPERATOR < (
	PROCEDURE="hlculid_lt_uuid",
	LEFTARG=hlculid, /* Hlculid */
	RIGHTARG=uuid, /* Uuid */
	COMMUTATOR = >,
	NEGATOR = >=,
	RESTRICT = scalarltsel,
	JOIN = scalarltjoinsel
);

CREATE  FUNCTION "hlculid_ne_uuid"(
	"a" hlculid, /* Hlculid */
	"b" uuid /* Uuid */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_ne_uuid_wrapper';

CREATE OPERATOR <> (
	PROCEDURE="hlculid_ne_uuid",
	LEFTARG=hlculid, /* Hlculid */
	RIGHTARG=uuid, /* Uuid */
	COMMUTATOR = <>,
	NEGATOR = =,
	RESTRICT = neqsel,
	JOIN = neqjoinsel
);

CREATE  FUNCTION "hlculid_uuid_cmp"(
	"a" hlculid, /* Hlculid */
	"b" uuid /* Uuid */
) RETURNS INT /* i32 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_uuid_cmp_wrapper';

CREATE  FUNCTION "uuid_eq_hlculid"(
	"a" uuid, /* Uuid */
	"b" hlculid /* Hlculid */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuid_eq_hlculid_wrapper';

CREATE OPERATOR = (
	PROCEDURE="uuid_eq_hlculid",
	LEFTARG=uuid, /* Uuid */
	RIGHTARG=hlculid, /* Hlculid */
	COMMUTATOR = =,
	NEGATOR = <>,
	RESTRICT = eqsel,
	JOIN = eqjoinsel
);

CREATE  FUNCTION "uuid_ge_hlculid"(
	"a" uuid, /* Uuid */
	"b" hlculid /* Hlculid */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuid_ge_hlculid_wrapper';

CREATE OPERATOR >= (
	PROCEDURE="uuid_ge_hlculid",
	LEFTARG=uuid, /* Uuid */
	RIGHTARG=hlculid, /* Hlculid */
	COMMUTATOR = <=,
	NEGATOR = <,
	RESTRICT = scalargesel,
	JOIN = scalargejoinsel
);

CREATE  FUNCTION "uuid_gt_hlculid"(
	"a" uuid, /* Uuid */
	"b" hlculid /* Hlculid */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuid_gt_hlculid_wrapper';

CREATE OPERATOR > (
	PROCEDURE="uuid_gt_hlculid",
	LEFTARG=uuid, /* Uuid */
	RIGHTARG=hlculid, /* Hlculid */
	COMMUTATOR = <,
	NEGATOR = <=,
	RESTRICT = scalargtsel,
	JOIN = scalargtjoinsel
);

CREATE  FUNCTION "uuid_hlculid_cmp"(
	"a" uuid, /* Uuid */
	"b" hlculid /* Hlculid */
) RETURNS INT /* i32 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuid_hlculid_cmp_wrapper';

CREATE  FUNCTION "uuid_le_hlculid"(
	"a" uuid, /* Uuid */
	"b" hlculid /* Hlculid */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuid_le_hlculid_wrapper';

CREATE OPERATOR <= (
	PROCEDURE="uuid_le_hlculid",
	LEFTARG=uuid, /* Uuid */
	RIGHTARG=hlculid, /* Hlculid */
	COMMUTATOR = >=,
	NEGATOR = >,
	RESTRICT = scalarlesel,
	JOIN = scalarlejoinsel
);

CREATE  FUNCTION "uuid_lt_hlculid"(
	"a" uuid, /* Uuid */
	"b" hlculid /* Hlculid */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuid_lt_hlculid_wrapper';

CREATE OPERATOR < (
	PROCEDURE="uuid_lt_hlculid",
	LEFTARG=uuid, /* Uuid */
	RIGHTARG=hlculid, /* Hlculid */
	COMMUTATOR = >,
	NEGATOR = >=,
	RESTRICT = scalarltsel,
	JOIN = scalarltjoinsel
);

CREATE  FUNCTION "uuid_ne_hlculid"(
	"a" uuid, /* Uuid */
	"b" hlculid /* Hlculid */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuid_ne_hlculid_wrapper';

CREATE OPERATOR <> (
	PROCEDURE="uuid_ne_hlculid",
	LEFTARG=uuid, /* Uuid */
	RIGHTARG=hlculid, /* Hlculid */
	COMMUTATOR = <>,
	NEGATOR = =,
	RESTRICT = neqsel,
	JOIN = neqjoinsel
);

ALTER OPERATOR FAMILY hlculid_ops USING btree ADD
    OPERATOR 1 < (hlculid, uuid),
    OPERATOR 2 <= (hlculid, uuid),
    OPERATOR 3 = (hlculid, uuid),
    OPERATOR 4 >= (hlculid, uuid),
    OPERATOR 5 > (hlculid, uuid),
    OPERATOR 1 < (uuid, hlculid),
    OPERATOR 2 <= (uuid, hlculid),
    OPERATOR 3 = (uuid, hlculid),
    OPERATOR 4 >= (uuid, hlculid),
    OPERATOR 5 > (uuid, hlculid),
    FUNCTION 1 (hlculid, uuid) hlculid_uuid_cmp(hlculid, uuid),
    FUNCTION 1 (uuid, hlculid) uuid_hlculid_cmp(uuid, hlculid),
    -- uuid's own comparisons too, so the family is complete for both types (amvalidate)
    OPERATOR 1 < (uuid, uuid),
    OPERATOR 2 <= (uuid, uuid),
    OPERATOR 3 = (uuid, uuid),
    OPERATOR 4 >= (uuid, uuid),
    OPERATOR 5 > (uuid, uuid),
    FUNCTION 1 (uuid, uuid) uuid_cmp(uuid, uuid);

-- == LEAKPROOF comparisons (row-level security can use the index) ==
-- Each compares two 16-byte values and never raises, so it reveals nothing but its result.
ALTER FUNCTION hlculid_eq(hlculid, hlculid) LEAKPROOF;
ALTER FUNCTION hlculid_ne(hlculid, hlculid) LEAKPROOF;
ALTER FUNCTION hlculid_lt(hlculid, hlculid) LEAKPROOF;
ALTER FUNCTION hlculid_le(hlculid, hlculid) LEAKPROOF;
ALTER FUNCTION hlculid_gt(hlculid, hlculid) LEAKPROOF;
ALTER FUNCTION hlculid_ge(hlculid, hlculid) LEAKPROOF;
ALTER FUNCTION hlculid_cmp(hlculid, hlculid) LEAKPROOF;
ALTER FUNCTION hlculid_eq_uuid(hlculid, uuid) LEAKPROOF;
ALTER FUNCTION hlculid_ne_uuid(hlculid, uuid) LEAKPROOF;
ALTER FUNCTION hlculid_lt_uuid(hlculid, uuid) LEAKPROOF;
ALTER FUNCTION hlculid_le_uuid(hlculid, uuid) LEAKPROOF;
ALTER FUNCTION hlculid_gt_uuid(hlculid, uuid) LEAKPROOF;
ALTER FUNCTION hlculid_ge_uuid(hlculid, uuid) LEAKPROOF;
ALTER FUNCTION uuid_eq_hlculid(uuid, hlculid) LEAKPROOF;
ALTER FUNCTION uuid_ne_hlculid(uuid, hlculid) LEAKPROOF;
ALTER FUNCTION uuid_lt_hlculid(uuid, hlculid) LEAKPROOF;
ALTER FUNCTION uuid_le_hlculid(uuid, hlculid) LEAKPROOF;
ALTER FUNCTION uuid_gt_hlculid(uuid, hlculid) LEAKPROOF;
ALTER FUNCTION uuid_ge_hlculid(uuid, hlculid) LEAKPROOF;
ALTER FUNCTION hlculid_uuid_cmp(hlculid, uuid) LEAKPROOF;
ALTER FUNCTION uuid_hlculid_cmp(uuid, hlculid) LEAKPROOF;
ALTER FUNCTION hlculid_in_range(hlculid, tstzrange) LEAKPROOF;

-- == watermarks (the text of sql/src/horizons.sql) ==
-- Readers that never miss an event (0.4.0): the horizons table, publishing and advancing
-- horizons, the watermark across publishers, and the reading helper. One source: the install
-- script takes it through src/watermark.rs, and sql/hlculid--0.3.0--0.4.0.sql carries the same
-- text (scripts/schema-check.sh compares the two). Objects outside the extension are
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

-- Raises the row of a publisher to `horizon`; never lowers it. Returns the row's horizon.
CREATE FUNCTION hlculid_advance_horizon(publisher int4, horizon @extschema@.hlculid)
RETURNS @extschema@.hlculid
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    result @extschema@.hlculid;
BEGIN
    IF $1 IS NULL OR $2 IS NULL THEN
        RAISE EXCEPTION 'hlculid_advance_horizon needs a publisher and a horizon'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Pass the publisher id (0 to 65535) and the id below which it has sent every event.';
    END IF;
    IF $1 < 0 OR $1 > 65535 THEN
        RAISE EXCEPTION 'publisher id % is out of range', $1
            USING ERRCODE = 'numeric_value_out_of_range',
                  DETAIL = 'A publisher id is 0 to 65535.';
    END IF;
    INSERT INTO @extschema@.hlculid_horizons AS h (publisher, horizon, updated_at)
    VALUES ($1, $2, clock_timestamp())
    ON CONFLICT ON CONSTRAINT hlculid_horizons_pkey DO UPDATE
        SET horizon = excluded.horizon, updated_at = excluded.updated_at
        WHERE h.horizon OPERATOR(@extschema@.<) excluded.horizon;
    SELECT h.horizon INTO result FROM @extschema@.hlculid_horizons h WHERE h.publisher = $1;
    RETURN result;
END
$fn$;

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

-- == decode at the extractors' speed (speed) ==
-- hlculid_decode and hlculid_bigint_decode become native functions (a SQL body returning a
-- record is never inlined, and ran the SQL-function executor per row). Same signature, same
-- output; CREATE OR REPLACE keeps their OIDs, grants and comments. The comparison functions
-- keep their catalog entries: the library exports hand-written versions under the same symbols.
CREATE OR REPLACE FUNCTION hlculid_decode(id hlculid,
    OUT ts timestamptz, OUT counter int4, OUT publisher int4, OUT random int8)
RETURNS record
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_decode_fast';

CREATE OR REPLACE FUNCTION hlculid_bigint_decode(id bigint,
    OUT ts timestamptz, OUT counter int4, OUT publisher int4)
RETURNS record
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_bigint_decode_fast';
