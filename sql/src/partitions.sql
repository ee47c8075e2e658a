-- Time partitions of a table keyed on an hlculid: `PARTITION BY RANGE (id)` with the bounds of
-- periods, created ahead and retired behind. Plain PL/pgSQL with a fixed `search_path`, so a
-- caller's path cannot change what runs: only pg_catalog, where the extension's own functions
-- live too (schema-qualified all the same: docs/security.md).
--
-- - Every bound is `hlculid_min` of a time, so a time an id cannot hold (before 1970, after
--   10889, infinite) is refused by it (22008) before anything is touched.
-- - The grid is fixed: fixed-length periods are binned from the Unix epoch (`date_bin`), months
--   counted from 1970-01. Re-runs from any start give the same periods.
-- - What exists is read from the partitions' bounds, never their names
--   (`hlculid_partition_bounds`), so partitions of another grid (0.2.0 aligned periods on their
--   first run's start) or made by hand are recognised: only the uncovered rest is created.
-- - Runs on a table are serialised by an advisory lock. At REPEATABLE READ the transaction's
--   snapshot predates the lock, so the partitions are listed with `pg_partition_tree` (it scans
--   pg_inherits with a fresh catalog snapshot) and a partition committed after the snapshot is
--   read through `pg_get_partition_constraintdef` (relcache), not through `pg_class`.
-- - Rows waiting in the default partition for a period being created are moved into the new
--   partition in the same transaction (DELETE from the default, attached, so logical
--   replication through the root sees a delete and an insert).
-- - As the table's owner (0.5.0): moving rows runs the table's triggers, defaults, constraints
--   and index expressions, so `hlculid_create_partitions` and `hlculid_drop_partitions` are
--   Rust entry points (src/tables/table_owner.rs) that switch to the owner in a security-restricted
--   operation, as VACUUM does, and call the bodies below, which refuse to run anywhere else.

CREATE OR REPLACE FUNCTION hlculid_partition_bounds(parent regclass,
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
      AND a.atttypid = 'pg_catalog.hlculid'::regtype;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table "%" is not partitioned by range on an hlculid column', parent::text
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'Create it with PARTITION BY RANGE (id), where id is the hlculid key.';
    END IF;
    -- a bound in pg_get_partition_constraintdef's text: (key >= 'id'::...), with the operator
    -- written OPERATOR(schema.>=) when the extension's schema is not on the search_path
    term_re := regexp_replace('(' || quote_ident(key) || ' ', '([^[:alnum:]_ ])', E'\\\\\\1', 'g')
        || '(?:(>=|<)|' || regexp_replace('OPERATOR(pg_catalog.', '([^[:alnum:]_ ])', E'\\\\\\1', 'g')
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
                from_id := btrim(m[1], '''')::pg_catalog.hlculid;
            END IF;
            IF m[2] <> 'MAXVALUE' THEN
                to_id := btrim(m[2], '''')::pg_catalog.hlculid;
            END IF;
        ELSE
            -- committed after this transaction's snapshot (REPEATABLE READ): its pg_class row is
            -- not visible to queries, its partition constraint (from the relcache) is
            bound := pg_get_partition_constraintdef(child);
            IF bound IS NULL OR strpos(bound, '(NOT (') > 0 THEN
                is_default := true;
            ELSE
                -- a partition of a partition carries its parent's bounds too: the tightest hold
                SELECT pg_catalog.max(v[3]::pg_catalog.hlculid) FILTER (WHERE coalesce(v[1], v[2]) = '>='),
                       pg_catalog.min(v[3]::pg_catalog.hlculid) FILTER (WHERE coalesce(v[1], v[2]) = '<'),
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
LANGUAGE c VOLATILE STRICT
AS 'MODULE_PATHNAME', 'hlculid_create_partitions_wrapper';

CREATE OR REPLACE FUNCTION hlculid_drop_partitions(
    parent regclass, older_than timestamptz, detach_only boolean DEFAULT false)
RETURNS SETOF text
LANGUAGE c VOLATILE STRICT
AS 'MODULE_PATHNAME', 'hlculid_drop_partitions_wrapper';

CREATE OR REPLACE FUNCTION hlculid_create_partitions_as_owner(
    parent regclass, from_ts timestamptz, to_ts timestamptz, every interval)
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
        pg_catalog.hlculid_ts('FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF'::pg_catalog.hlculid);
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
    q text;
    moving boolean;
    moved bigint;
    moving_tab text;
    fk record;
    fk_name text;
    fk_table text;
    fk_oid oid;
    fk_up oid;
BEGIN
    IF NOT pg_catalog.hlculid_acting_as_owner(parent::pg_catalog.oid) THEN
        RAISE EXCEPTION 'hlculid_create_partitions_as_owner runs only inside hlculid_create_partitions'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Call hlculid_create_partitions, which runs it as the table''s owner.';
    END IF;
    -- every input is checked before anything is locked or changed
    span_lo := pg_catalog.hlculid_min(from_ts)::bytea;
    span_hi := pg_catalog.hlculid_min(to_ts)::bytea;
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
        p_lo := array_append(p_lo, pg_catalog.hlculid_min(s AT TIME ZONE 'UTC')::bytea);
        p_hi := array_append(p_hi, CASE WHEN (e AT TIME ZONE 'UTC') > last_ts THEN top
                                        ELSE pg_catalog.hlculid_min(e AT TIME ZONE 'UTC')::bytea END);
        s := e;
    END LOOP;

    -- every name below gives the relation meant: the table's schema keeps its name until the
    -- transaction ends (0.6.0: its owner could rename it and put hers in its place, and the
    -- statements below would run her code as the table's owner; src/base/schema_pin.rs)
    PERFORM pg_catalog.hlculid_pin_schema(parent::pg_catalog.oid);
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
          FROM pg_catalog.hlculid_partition_bounds(parent) x) b;

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
        -- (the default partition may be in another schema)
        PERFORM pg_catalog.hlculid_pin_schema(def::pg_catalog.oid);
        EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', def);
    END IF;
    -- the names themselves, unquoted (format's %I quotes them), from the catalog caches as the
    -- pin left them: a query of pg_namespace would read this transaction's snapshot, which under
    -- REPEATABLE READ (a database's owner may make it the default) predates the pin and can
    -- give the schema's old name, another schema's by now (the eighth review)
    -- (pg_identify_object's schema comes quoted: "Sales" named another schema, the ninth review)
    SELECT a.object_names[1], a.object_names[2] INTO nsp, rel
    FROM pg_catalog.pg_identify_object_as_address('pg_catalog.pg_class'::pg_catalog.regclass, parent, 0) a;
    SELECT a.attname INTO key FROM pg_partitioned_table p
    JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
    WHERE p.partrelid = parent;

    FOR i IN 1 .. cardinality(g_lo) LOOP
        lo_txt := g_lo[i]::pg_catalog.hlculid::text;
        hi_txt := CASE WHEN g_hi[i] = top THEN NULL ELSE g_hi[i]::pg_catalog.hlculid::text END;

        -- named after the start: the period's unit, or finer where a piece starts between periods
        t := pg_catalog.hlculid_ts(g_lo[i]::pg_catalog.hlculid) AT TIME ZONE 'UTC';
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
        cond := format('%I OPERATOR(pg_catalog.>=) %L::pg_catalog.hlculid', key, lo_txt);
        IF hi_txt IS NOT NULL THEN
            cond := cond || format(' AND %I OPERATOR(pg_catalog.<) %L::pg_catalog.hlculid', key, hi_txt);
        END IF;
        moving := false;
        IF def IS NOT NULL THEN
            -- a column in the subquery: Citus plans no zero-column subquery of a distributed table
            -- (each query read only if its names give the default partition when parsed: the
            -- parse check of src/base/read_guard.rs, beside the pin)
            q := format('SELECT EXISTS (SELECT 1 FROM %s WHERE %s)', def, cond);
            PERFORM pg_catalog.hlculid_expect_reads(def::pg_catalog.oid, q);
            EXECUTE q INTO moving;
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
                -- a table of its own beside the partition, dropped below in this transaction, so
                -- no other session ever sees it (a security-restricted operation may not make a
                -- temporary one); a name no table has
                moving_tab := 'hlculid_moving_' || md5(clock_timestamp()::text || random()::text);
                q := format('CREATE UNLOGGED TABLE %I.%I AS '
                            'WITH d AS (DELETE FROM %s WHERE %s RETURNING *) SELECT * FROM d', nsp, moving_tab, def, cond);
                PERFORM pg_catalog.hlculid_expect_reads(def::pg_catalog.oid, q);
                EXECUTE q;
                GET DIAGNOSTICS moved = ROW_COUNT;
                -- the table's code just ran (its triggers, as the owner): whatever path it set
                -- (a plain SET outlives this function's SET clause), this body's is pinned again
                PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
            END IF;
            EXECUTE format('CREATE TABLE %I.%I PARTITION OF %s FOR VALUES FROM (%L) TO (%s)',
                           nsp, part, parent, lo_txt, coalesce(quote_literal(hi_txt), 'MAXVALUE'));
            PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
            IF moving THEN
                EXECUTE format('INSERT INTO %I.%I (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM %I.%I',
                               nsp, part, cols, cols, nsp, moving_tab);
                PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
                EXECUTE format('DROP TABLE %I.%I', nsp, moving_tab);
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

CREATE OR REPLACE FUNCTION hlculid_drop_partitions_as_owner(
    parent regclass, older_than timestamptz, detach_only boolean)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    cutoff pg_catalog.hlculid;
    child record;
    qualified text;
BEGIN
    IF NOT pg_catalog.hlculid_acting_as_owner(parent::pg_catalog.oid) THEN
        RAISE EXCEPTION 'hlculid_drop_partitions_as_owner runs only inside hlculid_drop_partitions'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Call hlculid_drop_partitions, which runs it as the table''s owner.';
    END IF;
    -- a time an id cannot hold (before 1970, after 10889, infinite) is refused here (22008)
    cutoff := pg_catalog.hlculid_min(older_than);
    -- every name below gives the relation meant: the schemas keep their names until the
    -- transaction ends (src/base/schema_pin.rs), the table's here, each partition's below
    PERFORM pg_catalog.hlculid_pin_schema(parent::pg_catalog.oid);
    -- one run at a time per table, under a lock only roles that may change the table can take
    -- (0.3.0's advisory lock could be held by any role)
    EXECUTE format('LOCK TABLE ONLY %s IN SHARE UPDATE EXCLUSIVE MODE', parent);
    -- (this also refuses a table not partitioned on an hlculid, before anything is detached)
    FOR child IN
        SELECT b.partition, b.to_id FROM pg_catalog.hlculid_partition_bounds(parent) b
        WHERE NOT b.is_default AND b.to_id OPERATOR(pg_catalog.<=) cutoff
        ORDER BY b.to_id
    LOOP
        PERFORM pg_catalog.hlculid_pin_schema(child.partition::pg_catalog.oid);
        qualified := (pg_identify_object('pg_class'::regclass, child.partition, 0)).identity;
        EXECUTE format('ALTER TABLE %s DETACH PARTITION %s', parent, child.partition);
        IF NOT detach_only THEN
            EXECUTE format('DROP TABLE %s', child.partition);
        END IF;
        PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
        RETURN NEXT qualified;
    END LOOP;
END
$fn$;

COMMENT ON FUNCTION hlculid_pin_schema(pg_catalog.oid) IS 'until the transaction ends, the table''s schema keeps its name: a rename waits (its pg_namespace row is locked as by SELECT FOR KEY SHARE); for the table''s owner, in a transaction that may write; the partition helpers and the backfill call it before naming a table of the schema in DDL';
COMMENT ON FUNCTION hlculid_partition_bounds(regclass) IS 'the partitions of a table partitioned by range on an hlculid, with the ids each holds (NULL: unbounded), as the partition helpers see them';
COMMENT ON FUNCTION hlculid_create_partitions_as_owner(regclass, timestamptz, timestamptz, interval) IS 'the body of hlculid_create_partitions, which runs it as the table''s owner; refuses to run anywhere else';
COMMENT ON FUNCTION hlculid_drop_partitions_as_owner(regclass, timestamptz, boolean) IS 'the body of hlculid_drop_partitions, which runs it as the table''s owner; refuses to run anywhere else';
