-- hlculid 0.2.0 -> 0.3.0.
-- Every object a 0.2.0 database has keeps its OID, so grants on it and views using it survive
-- the update: functions change with CREATE OR REPLACE (same arguments and result type); new
-- things are added beside the old ones.
\echo Use "ALTER EXTENSION hlculid UPDATE TO '0.3.0'" to load this file. \quit

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

-- == clock ==
-- The clock is bounded: generation waits rather than push logical time more than
-- hlculid.max_clock_skew ahead; hlculid_clock_bound() shows the bound (hlculid_clock() keeps its
-- columns). hlculid_clock_recover(floor, allow_future) for a floor ahead of the wall clock; the
-- one-argument form refuses such a floor. hlculid_generate_at keeps per-backend state: PARALLEL
-- RESTRICTED.
CREATE OR REPLACE FUNCTION "hlculid_generate_at"(
	"ts" timestamp with time zone /* TimestampWithTimeZone */
) RETURNS hlculid /* Hlculid */
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_generate_at_wrapper';

CREATE  FUNCTION "hlculid_clock_bound"() RETURNS TABLE (
	"max_run_ahead_ms" bigint,  /* i64 */
	"run_ahead_ms" bigint,  /* i64 */
	"anchor_time" timestamp with time zone,  /* TimestampWithTimeZone */
	"waits" bigint  /* i64 */
)
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_clock_bound_wrapper';
COMMENT ON FUNCTION hlculid_clock_bound() IS 'the run-ahead bound of this server''s clock: the bound, how far generation has pushed the clock, waits at the bound';

CREATE  FUNCTION "hlculid_clock_recover"(
	"floor" hlculid, /* Option < Hlculid > */
	"allow_future" bool /* Option < bool > */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_clock_recover_allowing_wrapper';
REVOKE ALL ON FUNCTION hlculid_clock_recover(hlculid, boolean) FROM PUBLIC;
COMMENT ON FUNCTION hlculid_clock_recover(hlculid, boolean) IS 'superuser: hlculid_clock_recover(floor), and with allow_future => true a floor further ahead of the wall clock than hlculid.max_clock_skew';

-- == partitions ==
-- A fixed grid (date_bin from the epoch, months from 1970-01), coverage read from the
-- partitions' bounds, bounds and cutoffs through hlculid_min, rows of the default partition
-- moved: the two helpers keep their signatures (CREATE OR REPLACE); hlculid_partition_bounds
-- is new. Same text as src/partitions.rs.

CREATE FUNCTION hlculid_partition_bounds(parent regclass,
    OUT partition regclass, OUT is_default boolean, OUT from_id hlculid, OUT to_id hlculid)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    key name;
    term_re text;
    child oid;
    bound text;
    m text[];
    n bigint;
BEGIN
    SELECT a.attname INTO key
    FROM pg_partitioned_table p
    JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
    WHERE p.partrelid = parent AND p.partstrat = 'r' AND p.partnatts = 1
      AND a.atttypid = '@extschema@.hlculid'::regtype;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table "%" is not partitioned by range on an hlculid column', parent::text
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'Create it with PARTITION BY RANGE (id), where id is the hlculid key.';
    END IF;
    -- a bound in pg_get_partition_constraintdef's text: (key >= 'id'::...), with the operator
    -- written OPERATOR(schema.>=) when the extension's schema is not on the search_path
    term_re := regexp_replace('(' || quote_ident(key) || ' ', '([^[:alnum:]_ ])', E'\\\\\\1', 'g')
        || '(?:(>=|<)|' || regexp_replace('OPERATOR(@extschema@.', '([^[:alnum:]_ ])', E'\\\\\\1', 'g')
        || E'(>=|<)\\)) ''([^'']*)''::';
    -- pg_partition_tree lists the children as committed now (and locks them against DROP)
    FOR child IN SELECT t.relid FROM pg_partition_tree(parent) t WHERE t.parentrelid = parent LOOP
        partition := child;
        is_default := false;
        from_id := NULL;
        to_id := NULL;
        SELECT pg_get_expr(c.relpartbound, c.oid) INTO bound FROM pg_class c WHERE c.oid = child;
        IF bound = 'DEFAULT' THEN
            is_default := true;
        ELSIF bound IS NOT NULL THEN
            m := regexp_match(bound,
                E'^FOR VALUES FROM \\((MINVALUE|''[^'']*'')\\) TO \\((MAXVALUE|''[^'']*'')\\)$');
            IF m IS NULL THEN
                RAISE EXCEPTION 'unexpected bound of partition "%": %', child::regclass::text, bound
                    USING ERRCODE = 'internal_error';
            END IF;
            IF m[1] <> 'MINVALUE' THEN
                from_id := btrim(m[1], '''')::@extschema@.hlculid;
            END IF;
            IF m[2] <> 'MAXVALUE' THEN
                to_id := btrim(m[2], '''')::@extschema@.hlculid;
            END IF;
        ELSE
            -- committed after this transaction's snapshot (REPEATABLE READ): its pg_class row is
            -- not visible to queries, its partition constraint (from the relcache) is
            bound := pg_get_partition_constraintdef(child);
            IF bound IS NULL OR strpos(bound, '(NOT (') > 0 THEN
                is_default := true;
            ELSE
                -- a partition of a partition carries its parent's bounds too: the tightest hold
                SELECT @extschema@.max(v[3]::@extschema@.hlculid) FILTER (WHERE coalesce(v[1], v[2]) = '>='),
                       @extschema@.min(v[3]::@extschema@.hlculid) FILTER (WHERE coalesce(v[1], v[2]) = '<'),
                       count(*)
                INTO from_id, to_id, n
                FROM regexp_matches(bound, term_re, 'g') v;
                -- never take a constraint not understood for (MINVALUE) TO (MAXVALUE)
                IF n = 0 AND bound <> '(' || quote_ident(key) || ' IS NOT NULL)' THEN
                    RAISE EXCEPTION 'unexpected partition constraint of "%": %', child::regclass::text, bound
                        USING ERRCODE = 'internal_error';
                END IF;
            END IF;
        END IF;
        RETURN NEXT;
    END LOOP;
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
    fk record;
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

    PERFORM pg_advisory_xact_lock('pg_class'::regclass::oid::int, parent::oid::int);

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
    SELECT o.schema INTO nsp FROM pg_identify_object('pg_class'::regclass, parent, 0) o;
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
            -- a move is a delete and an insert: a foreign key that cascades or sets values on
            -- delete would change the referencing rows
            SELECT c.conname, c.conrelid::regclass AS referencing INTO fk FROM pg_constraint c
            WHERE c.contype = 'f' AND c.confrelid IN (parent, def) AND c.confdeltype IN ('c', 'n', 'd')
            ORDER BY c.confrelid <> parent, c.conname LIMIT 1;
            IF FOUND THEN
                RAISE EXCEPTION 'cannot move rows of default partition "%" into new partition "%.%"', def::text, nsp, part
                    USING ERRCODE = 'object_not_in_prerequisite_state',
                          DETAIL = format('Foreign key constraint "%s" of table "%s" acts on delete; moving a row deletes and inserts it.', fk.conname, fk.referencing),
                          HINT = 'Move the rows out of the default partition while the constraint is dropped, then run this again.';
            END IF;
            SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO cols
            FROM pg_attribute a
            WHERE a.attrelid = parent AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
            EXECUTE format('CREATE TEMPORARY TABLE hlculid_moving_rows AS '
                           'WITH d AS (DELETE FROM %s WHERE %s RETURNING *) SELECT * FROM d', def, cond);
            GET DIAGNOSTICS moved = ROW_COUNT;
        END IF;

        EXECUTE format('CREATE TABLE %I.%I PARTITION OF %s FOR VALUES FROM (%L) TO (%s)',
                       nsp, part, parent, lo_txt, coalesce(quote_literal(hi_txt), 'MAXVALUE'));
        IF moving THEN
            EXECUTE format('INSERT INTO %I.%I (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM pg_temp.hlculid_moving_rows',
                           nsp, part, cols, cols);
            DROP TABLE pg_temp.hlculid_moving_rows;
            RAISE NOTICE 'moved % rows from default partition "%" into new partition "%.%"', moved, def::text, nsp, part;
        END IF;
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
    PERFORM pg_advisory_xact_lock('pg_class'::regclass::oid::int, parent::oid::int);
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

COMMENT ON FUNCTION hlculid_partition_bounds(regclass) IS 'the partitions of a table partitioned by range on an hlculid, with the ids each holds (NULL: unbounded), as the partition helpers see them';

-- == casts and text forms ==
-- The uuid -> hlculid cast refuses a random (version 4) uuid, so it gets a function. A cast
-- cannot be changed in place: it is dropped and created again. Casts carry no grants, and no
-- view, default or generated column depends on a cast without a function (its expressions hold
-- a relabelling, which keeps working unchecked until they are created again).
CREATE FUNCTION hlculid_from_uuid(u uuid) RETURNS hlculid
    IMMUTABLE STRICT PARALLEL SAFE
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_from_uuid_wrapper';
DROP CAST (uuid AS hlculid);
CREATE CAST (uuid AS hlculid) WITH FUNCTION hlculid_from_uuid(uuid) AS IMPLICIT;

-- == bigint ids ==
-- [0][42-bit ms][11-bit counter][10-bit publisher] from the server's one clock.
CREATE  FUNCTION "hlculid_generate_bigint"() RETURNS bigint /* i64 */
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_generate_bigint_wrapper';

CREATE  FUNCTION "hlculid_generate_bigint_n"(
	"n" INT /* i32 */
) RETURNS bigint[] /* Vec < i64 > */
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_generate_bigint_n_wrapper';

CREATE  FUNCTION "hlculid_bigint_ts"(
	"id" bigint /* i64 */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_bigint_ts_wrapper';

CREATE  FUNCTION "hlculid_bigint_counter"(
	"id" bigint /* i64 */
) RETURNS INT /* i32 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_bigint_counter_wrapper';

CREATE  FUNCTION "hlculid_bigint_publisher"(
	"id" bigint /* i64 */
) RETURNS INT /* i32 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_bigint_publisher_wrapper';

CREATE FUNCTION hlculid_bigint_decode(id bigint,
    OUT ts timestamptz, OUT counter int4, OUT publisher int4)
RETURNS record
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (hlculid_bigint_ts(id), hlculid_bigint_counter(id), hlculid_bigint_publisher(id));

CREATE  FUNCTION "hlculid_bigint_min"(
	"ts" timestamp with time zone /* TimestampWithTimeZone */
) RETURNS bigint /* i64 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_bigint_min_wrapper';

CREATE  FUNCTION "hlculid_bigint_max"(
	"ts" timestamp with time zone /* TimestampWithTimeZone */
) RETURNS bigint /* i64 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_bigint_max_wrapper';

CREATE  FUNCTION "hlculid_from_bigint"(
	"id" bigint /* i64 */
) RETURNS hlculid /* Hlculid */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_from_bigint_wrapper';

CREATE  FUNCTION "hlculid_to_bigint"(
	"id" hlculid /* Hlculid */
) RETURNS bigint /* i64 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_to_bigint_wrapper';
COMMENT ON FUNCTION hlculid_generate_bigint() IS 'next bigint id from this server''s clock: [0][42-bit ms][11-bit counter][10-bit publisher], ordered with its 128-bit ids';
COMMENT ON FUNCTION hlculid_generate_bigint_n(integer) IS 'n bigint ids (1 to 65536) from one step of the clock, increasing';
COMMENT ON FUNCTION hlculid_bigint_ts(bigint) IS 'time embedded in a bigint id, to the millisecond';
COMMENT ON FUNCTION hlculid_bigint_counter(bigint) IS 'counter field of a bigint id (0-2047)';
COMMENT ON FUNCTION hlculid_bigint_publisher(bigint) IS 'publisher field of a bigint id (0-1023)';
COMMENT ON FUNCTION hlculid_bigint_decode(bigint) IS 'all fields of a bigint id: ts, counter, publisher';
COMMENT ON FUNCTION hlculid_bigint_min(timestamptz) IS 'smallest bigint id of the millisecond containing the time';
COMMENT ON FUNCTION hlculid_bigint_max(timestamptz) IS 'largest bigint id of the millisecond containing the time';
COMMENT ON FUNCTION hlculid_from_bigint(bigint) IS 'the 128-bit id with a bigint id''s time, counter and publisher (random bits 0)';
COMMENT ON FUNCTION hlculid_to_bigint(hlculid) IS 'the bigint id with an id''s time, counter and publisher (random bits dropped)';

-- == time windows ==
-- id <@ tstzrange: estimated from the histogram, index conditions on the key.
CREATE  FUNCTION "hlculid_range_min"(
	"range" tstzrange /* Range < TimestampWithTimeZone > */
) RETURNS hlculid /* Hlculid */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_range_min_wrapper';

CREATE  FUNCTION "hlculid_range_max"(
	"range" tstzrange /* Range < TimestampWithTimeZone > */
) RETURNS hlculid /* Hlculid */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_range_max_wrapper';
CREATE FUNCTION hlculid_in_range_sel(internal, oid, internal, integer) RETURNS float8
    STABLE STRICT PARALLEL SAFE
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_in_range_sel';
CREATE FUNCTION hlculid_in_range_support(internal) RETURNS internal
    STABLE STRICT PARALLEL SAFE
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_in_range_support';
CREATE FUNCTION hlculid_in_range(id hlculid, range tstzrange) RETURNS boolean
    IMMUTABLE STRICT PARALLEL SAFE
    SUPPORT hlculid_in_range_support
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_in_range_wrapper';
CREATE OPERATOR <@ (
    LEFTARG = hlculid,
    RIGHTARG = tstzrange,
    FUNCTION = hlculid_in_range,
    RESTRICT = hlculid_in_range_sel,
    JOIN = contjoinsel
);
COMMENT ON FUNCTION hlculid_in_range(hlculid, tstzrange) IS 'true when the id''s time lies in the range (the function behind hlculid <@ tstzrange)';
COMMENT ON FUNCTION hlculid_range_min(tstzrange) IS 'smallest id whose time lies in the range (the largest id when none does)';
COMMENT ON FUNCTION hlculid_range_max(tstzrange) IS 'largest id whose time lies in the range (the smallest id when none does)';
COMMENT ON OPERATOR <@ (hlculid, tstzrange) IS 'the id''s time lies in the range: estimated from the column''s histogram, an index range scan on the key';

-- == uuidv7 ==
-- The RFC 9562 version 7 uuid form of an id, for what accepts only real uuids (validators,
-- uuid_extract_timestamp, TimescaleDB), and back: any v7 uuid reads as an id, in order.
CREATE  FUNCTION "hlculid_to_uuidv7"(
	"id" hlculid /* Hlculid */
) RETURNS uuid /* pgrx :: Uuid */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_to_uuidv7_wrapper';

CREATE  FUNCTION "hlculid_from_uuidv7"(
	"u" uuid /* pgrx :: Uuid */
) RETURNS hlculid /* Hlculid */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_from_uuidv7_wrapper';
COMMENT ON FUNCTION hlculid_to_uuidv7(hlculid) IS 'the id as an RFC 9562 version 7 uuid: same time, counter and publisher, top 42 random bits; keeps the order of ids';
COMMENT ON FUNCTION hlculid_from_uuidv7(uuid) IS 'the id a version 7 uuid stands for: exact time, counter and publisher, in the order of the uuids';

-- == transaction ids ==
-- hlculid_generate_tx(): the ids of one transaction share one clock value and count an offset
-- in their last 32 bits; hlculid_tx(id) and hlculid_tx_offset(id) read them.
CREATE  FUNCTION "hlculid_generate_tx"() RETURNS hlculid /* Hlculid */
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_generate_tx_wrapper';

CREATE  FUNCTION "hlculid_tx"(
	"id" hlculid /* Hlculid */
) RETURNS hlculid /* Hlculid */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_tx_wrapper';

CREATE  FUNCTION "hlculid_tx_offset"(
	"id" hlculid /* Hlculid */
) RETURNS bigint /* i64 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_tx_offset_wrapper';
COMMENT ON FUNCTION hlculid_generate_tx() IS 'next id of the current transaction''s group: one clock value per transaction and an offset counting from 1, so a transaction''s ids sort together, in the order they were made';
COMMENT ON FUNCTION hlculid_tx(hlculid) IS 'the transaction''s own id of an id made by hlculid_generate_tx: the same id with offset (low 32 bits) 0';
COMMENT ON FUNCTION hlculid_tx_offset(hlculid) IS 'offset of an id made by hlculid_generate_tx in its transaction (its low 32 bits): 1 for the first id';
-- == backfill ==
-- hlculid_backfill(...): a procedure filling the NULL ids of a table from a time column, one
-- committed batch at a time. Same text as src/backfill.rs.
CREATE PROCEDURE hlculid_backfill(tbl regclass, id_column name, ts_column name,
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
    SELECT string_agg(format('%I', a.attname), ', ' ORDER BY k.i) INTO order_key
    FROM pg_index x, unnest(x.indkey::int2[]) WITH ORDINALITY k(attnum, i)
    JOIN pg_attribute a ON a.attnum = k.attnum
    WHERE x.indrelid = tbl AND x.indisprimary AND a.attrelid = tbl;
    order_key := format('%I, ', ts_column) || coalesce(order_key, 'tableoid, ctid');

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
COMMENT ON PROCEDURE hlculid_backfill(regclass, name, name, integer, integer) IS 'fills the NULL ids of a table from a time column, in time order, one committed batch at a time, with a publisher id reserved for backfills';
