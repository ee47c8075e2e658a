//! Time partitions of a table keyed on an hlculid: `PARTITION BY RANGE (id)` with the bounds of
//! periods (`hlculid_min` of each period's start), created ahead and retired behind. Plain
//! PL/pgSQL: idempotent, serialised per table by an advisory lock, safe to run from cron or
//! pg_cron, and with a fixed `search_path`, so a caller's path cannot change what they run.
//! Bounds are computed as the canonical text of `hlculid_min(ts)` (12 hex digits of the
//! millisecond, then zeros) and typed by the partition key, so nothing outside pg_catalog runs.

use pgrx::prelude::*;

extension_sql!(
    r#"
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

"#,
    name = "hlculid_partitions",
    requires = ["hlculid_type"],
);
