-- hlculid 0.1.1 -> 0.2.0: one catalog on every PostgreSQL major.
-- 0.1.x had btree skip support only in its PostgreSQL 18 script. From 0.2.0 the function exists
-- on every major and is registered as btree support function 6 where the server has one (18+).
-- This also completes a database moved to 18 with pg_upgrade from an older major.
-- Also: text and varchar cast to hlculid on assignment, for string-typed driver parameters;
-- hlculid_clock() shows the state of the high-water mark; hlculid_clock_recover() (superuser);
-- hlculid_generate_at's comment says exactly what order backfilled ids keep; hlculid_generate_n();
-- hlculid_create_partitions() and hlculid_drop_partitions().
\echo Use "ALTER EXTENSION hlculid UPDATE TO '0.2.0'" to load this file. \quit

CREATE OR REPLACE FUNCTION "hlculid_skipsupport"(
	"sksup" internal /* Internal */
) RETURNS void
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_skipsupport_wrapper';

DO $$
BEGIN
  IF current_setting('server_version_num')::int >= 180000 AND NOT EXISTS (
      SELECT FROM pg_amproc p JOIN pg_opclass c ON c.opcfamily = p.amprocfamily
      WHERE c.opcintype = 'hlculid'::regtype AND c.opcname = 'hlculid_ops' AND p.amprocnum = 6
        AND c.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'btree')) THEN
    ALTER OPERATOR FAMILY hlculid_ops USING btree ADD FUNCTION 6 (hlculid) hlculid_skipsupport(internal);
  END IF;
END $$;

CREATE CAST (text AS hlculid) WITH INOUT AS ASSIGNMENT;
CREATE CAST (varchar AS hlculid) WITH INOUT AS ASSIGNMENT;

-- hlculid_clock() gains a column: a function's result type cannot be replaced in place.
DROP FUNCTION hlculid_clock();
CREATE  FUNCTION "hlculid_clock"() RETURNS TABLE (
	"wall_time" timestamp with time zone,  /* TimestampWithTimeZone */
	"logical_time" timestamp with time zone,  /* TimestampWithTimeZone */
	"counter" INT,  /* i32 */
	"drift_ms" bigint,  /* i64 */
	"publisher" INT,  /* i32 */
	"publisher_source" TEXT,  /* String */
	"backward_jumps" bigint,  /* i64 */
	"overflows" bigint,  /* i64 */
	"observes" bigint,  /* i64 */
	"high_water_mark" timestamp with time zone,  /* TimestampWithTimeZone */
	"high_water_mark_state" TEXT  /* String */
)
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_clock_wrapper';
COMMENT ON FUNCTION hlculid_clock() IS 'state of this server''s hybrid logical clock';

CREATE  FUNCTION "hlculid_clock_recover"(
	"floor" hlculid /* Option < Hlculid > */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_clock_recover_wrapper';
REVOKE ALL ON FUNCTION hlculid_clock_recover(hlculid) FROM PUBLIC;
COMMENT ON FUNCTION hlculid_clock_recover(hlculid) IS 'superuser: after a damaged high-water mark, every id issued afterwards sorts after the given one';

COMMENT ON FUNCTION hlculid_generate_at(timestamptz) IS 'id for a given time (backfills); consecutive calls of one backend for the same millisecond give increasing ids';

CREATE FUNCTION hlculid_generate_n(n int4) RETURNS hlculid[]
    STRICT VOLATILE PARALLEL SAFE
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_generate_n';
COMMENT ON FUNCTION hlculid_generate_n(integer) IS 'n ids (1 to 65536) from one step of the clock, increasing, greater than every id the server returned before';

CREATE FUNCTION hlculid_create_partitions(
    parent regclass, from_ts timestamptz, to_ts timestamptz, every interval DEFAULT '1 month')
RETURNS SETOF regclass
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    nsp name;
    rel name;
    unit text;
    fmt text;
    start_utc timestamp;
    stop_utc timestamp;
    part name;
    months int;
    days int;
    secs numeric;
BEGIN
    SELECT n.nspname, c.relname INTO nsp, rel
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = parent;
    IF NOT EXISTS (
        SELECT FROM pg_partitioned_table p
        JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
        JOIN pg_type t ON t.oid = a.atttypid
        WHERE p.partrelid = parent AND p.partstrat = 'r' AND p.partnatts = 1 AND t.typname = 'hlculid') THEN
        RAISE EXCEPTION 'table "%" is not partitioned by range on an hlculid column', rel
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'Create it with PARTITION BY RANGE (id), where id is the hlculid key.';
    END IF;
    -- whole months, days, hours or minutes, so that partitions are named after their period
    months := extract(year FROM every) * 12 + extract(month FROM every);
    days := extract(day FROM every);
    secs := extract(epoch FROM every - make_interval(months => months, days => days));
    IF months > 0 AND days = 0 AND secs = 0 THEN
        unit := 'month'; fmt := 'YYYY_MM';
    ELSIF months = 0 AND days > 0 AND secs = 0 THEN
        unit := 'day'; fmt := 'YYYY_MM_DD';
    ELSIF months = 0 AND days = 0 AND secs > 0 AND secs % 3600 = 0 THEN
        unit := 'hour'; fmt := 'YYYY_MM_DD_HH24';
    ELSIF months = 0 AND days = 0 AND secs > 0 AND secs % 60 = 0 THEN
        unit := 'minute'; fmt := 'YYYY_MM_DD_HH24MI';
    ELSE
        RAISE EXCEPTION 'partition interval % is not a whole number of months, days, hours or minutes', every
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF to_ts <= from_ts THEN
        RETURN;
    END IF;
    IF (extract(epoch FROM to_ts) - extract(epoch FROM from_ts))
         / greatest(extract(epoch FROM every), 1) > 10000 THEN
        RAISE EXCEPTION 'hlculid_create_partitions would create more than 10000 partitions'
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Use a longer interval or a shorter span.';
    END IF;
    PERFORM pg_advisory_xact_lock('pg_class'::regclass::oid::int, parent::oid::int);
    -- periods in UTC, aligned to the unit
    start_utc := date_trunc(unit, from_ts AT TIME ZONE 'UTC');
    WHILE (start_utc AT TIME ZONE 'UTC') < to_ts LOOP
        stop_utc := start_utc + every;
        part := left(rel, 63 - length(fmt) - 2) || '_p' || to_char(start_utc, fmt);
        IF NOT EXISTS (SELECT FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                       WHERE n.nspname = nsp AND c.relname = part) THEN
            EXECUTE format('CREATE TABLE %I.%I PARTITION OF %s FOR VALUES FROM (%L) TO (%L)',
                           nsp, part, parent,
                           upper(lpad(to_hex(floor(extract(epoch FROM start_utc AT TIME ZONE 'UTC') * 1000)::bigint), 12, '0')) || '-0000-0000-000000000000',
                           upper(lpad(to_hex(floor(extract(epoch FROM stop_utc AT TIME ZONE 'UTC') * 1000)::bigint), 12, '0')) || '-0000-0000-000000000000');
            RETURN NEXT format('%I.%I', nsp, part)::regclass;
        END IF;
        start_utc := stop_utc;
    END LOOP;
END
$fn$;

CREATE FUNCTION hlculid_drop_partitions(
    parent regclass, older_than timestamptz, detach_only boolean DEFAULT false)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    child record;
    -- hlculid_min(older_than) as canonical text
    cutoff text := upper(lpad(to_hex(floor(extract(epoch FROM older_than) * 1000)::bigint), 12, '0')) || '-0000-0000-000000000000';
BEGIN
    PERFORM pg_advisory_xact_lock('pg_class'::regclass::oid::int, parent::oid::int);
    FOR child IN
        SELECT c.oid::regclass AS part, format('%I.%I', n.nspname, c.relname) AS name,
               substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \(''([0-9A-Fa-f-]+)''\)') AS upper_bound
        FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE i.inhparent = parent
        ORDER BY 3
    LOOP
        -- the default partition, and one bounded by MAXVALUE, hold no period: never retired
        CONTINUE WHEN child.upper_bound IS NULL;
        -- canonical text (fixed width, upper-case hex) sorts like the ids
        EXIT WHEN upper(child.upper_bound) COLLATE "C" > cutoff COLLATE "C";
        EXECUTE format('ALTER TABLE %s DETACH PARTITION %s', parent, child.part);
        IF NOT detach_only THEN
            EXECUTE format('DROP TABLE %s', child.part);
        END IF;
        RETURN NEXT child.name;
    END LOOP;
END
$fn$;
COMMENT ON FUNCTION hlculid_create_partitions(regclass, timestamptz, timestamptz, interval) IS 'creates the missing range partitions of a table keyed on an hlculid that cover a time span, one per interval (UTC), named after their period';
COMMENT ON FUNCTION hlculid_drop_partitions(regclass, timestamptz, boolean) IS 'detaches, and unless told to keep them drops, the partitions whose rows are all older than the given time';
