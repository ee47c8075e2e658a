-- Time partitions (README "Time partitions") on fixed dates: the grid, re-runs from any start,
-- partitions made on another grid, rows waiting in the default partition, names, and every
-- input the helpers refuse (with nothing changed).
SET timezone = 'UTC';
SET datestyle = 'ISO';
CREATE FUNCTION parts(t regclass) RETURNS TABLE (part text, from_ts timestamptz, to_ts timestamptz, rows bigint)
LANGUAGE plpgsql AS $$
DECLARE b record;
BEGIN
  FOR b IN SELECT * FROM hlculid_partition_bounds(t) ORDER BY is_default, from_id NULLS FIRST LOOP
    part := b.partition::text || CASE WHEN b.is_default THEN ' (default)' ELSE '' END;
    from_ts := hlculid_ts(b.from_id);
    to_ts := hlculid_ts(b.to_id);
    EXECUTE format('SELECT count(*) FROM %s', b.partition) INTO rows;
    RETURN NEXT;
  END LOOP;
END $$;

-- weekly periods lie on one grid, binned from 1970-01-01 (a Thursday): the run of the next day
-- creates only what the longer span adds (0.2.0: "would overlap")
CREATE TABLE wk (id hlculid NOT NULL, body text) PARTITION BY RANGE (id);
SELECT p FROM hlculid_create_partitions('wk', '2026-11-20+00', '2026-12-20+00', interval '7 days') p;
SELECT p FROM hlculid_create_partitions('wk', '2026-11-21+00', '2026-12-21+00', interval '7 days') p;
SELECT p FROM hlculid_create_partitions('wk', '2026-12-24+00', '2026-12-25+00', interval '7 days') p;
SELECT * FROM parts('wk');
-- quarters counted from 1970-01: October to December, then January to March
CREATE TABLE qt (id hlculid NOT NULL) PARTITION BY RANGE (id);
SELECT p FROM hlculid_create_partitions('qt', '2026-11-20+00', '2026-12-20+00', interval '3 months') p;
SELECT p FROM hlculid_create_partitions('qt', '2026-11-21+00', '2027-02-21+00', interval '3 months') p;
SELECT * FROM parts('qt');
-- fixed lengths of any number of minutes, from the epoch; names as fine as the period needs
CREATE TABLE mn (id hlculid NOT NULL) PARTITION BY RANGE (id);
SELECT p FROM hlculid_create_partitions('mn', '2026-03-01 10:07+00', '2026-03-01 10:50+00', interval '15 minutes') p;
SELECT p FROM hlculid_create_partitions('mn', '2026-03-01 10:50+00', '2026-03-02 01:00+00', interval '1 day 2 hours') p;
SELECT * FROM parts('mn');
-- the session's time zone changes nothing: periods are UTC
SET timezone = 'America/New_York';
SELECT p FROM hlculid_create_partitions('mn', '2026-03-08 00:00-05', '2026-03-08 12:00-04', interval '1 day') p;
SET timezone = 'UTC';

-- partitions of another grid (0.2.0 aligned weeks on the first run's day) are recognised by
-- their bounds: only the uncovered rest of each period is created, named after its start
CREATE TABLE old (id hlculid NOT NULL) PARTITION BY RANGE (id);
CREATE TABLE old_p2026_11_20 PARTITION OF old
    FOR VALUES FROM (hlculid_min('2026-11-20+00')) TO (hlculid_min('2026-11-27+00'));
SELECT p FROM hlculid_create_partitions('old', '2026-11-21+00', '2026-12-05+00', interval '7 days') p;
SELECT * FROM parts('old');
-- a month partly covered by a daily partition made by hand, and one from MINVALUE
CREATE TABLE hand (id hlculid NOT NULL) PARTITION BY RANGE (id);
CREATE TABLE hand_low PARTITION OF hand FOR VALUES FROM (MINVALUE) TO (hlculid_min('2026-10-10+00'));
CREATE TABLE hand_day PARTITION OF hand FOR VALUES FROM (hlculid_min('2026-10-20+00')) TO (hlculid_min('2026-10-21+00'));
SELECT p FROM hlculid_create_partitions('hand', '2026-10-01+00', '2026-12-01+00') p;
SELECT * FROM parts('hand');

-- rows waiting in the default partition move into the partition created for their period, in
-- the same transaction (0.2.0: "updated partition constraint for default partition ... would be
-- violated", for ever); rows of other periods stay; retention then drops them with it
CREATE TABLE ev (id hlculid NOT NULL, n int GENERATED ALWAYS AS IDENTITY,
                 twice int GENERATED ALWAYS AS (n * 2) STORED, body text) PARTITION BY RANGE (id);
CREATE TABLE ev_default PARTITION OF ev DEFAULT;
INSERT INTO ev (id, body)
SELECT hlculid_from_parts(t, 0, 1, 0), to_char(t, 'MM-DD HH24') FROM generate_series(
    timestamptz '2026-05-01+00', '2026-05-03 23:00+00', interval '5 hours') t;
ALTER TABLE ev DROP COLUMN body;  -- a dropped column: the partitions' columns are in another order
ALTER TABLE ev ADD COLUMN body text DEFAULT 'added';
SELECT p FROM hlculid_create_partitions('ev', '2026-05-01+00', '2026-05-03+00', interval '1 day') p;
SELECT * FROM parts('ev');
SELECT tableoid::regclass, n, twice, body, hlculid_ts(id) FROM ev ORDER BY id;
SELECT hlculid_drop_partitions('ev', '2026-05-02+00');
SELECT * FROM parts('ev');
-- a foreign key that acts on delete would act on the move: that piece is skipped with a
-- WARNING naming the constraint, nothing of it changed, and the other pieces are created (0.4.0;
-- 0.3.0 failed the whole call)
SET client_min_messages = warning;
CREATE TABLE ev_pk (id hlculid NOT NULL PRIMARY KEY) PARTITION BY RANGE (id);
CREATE TABLE ev_pk_default PARTITION OF ev_pk DEFAULT;
INSERT INTO ev_pk VALUES (hlculid_from_parts('2026-11-17 06:00+00', 0, 0, 1));
CREATE TABLE ev_ref (id hlculid REFERENCES ev_pk ON DELETE CASCADE);
INSERT INTO ev_ref SELECT id FROM ev_pk;
SELECT hlculid_create_partitions('ev_pk', '2026-11-16+00', '2026-11-19+00', interval '1 day');
SELECT * FROM parts('ev_pk');
SELECT count(*) FROM ev_ref;
-- NO ACTION and RESTRICT: a referenced row stays in the default partition (its piece skipped);
-- pieces whose rows nothing refers to move; DEFERRABLE: skipped before anything changes
CREATE TABLE fk_pk (id hlculid NOT NULL PRIMARY KEY) PARTITION BY RANGE (id);
CREATE TABLE fk_pk_default PARTITION OF fk_pk DEFAULT;
INSERT INTO fk_pk VALUES (hlculid_from_parts('2026-11-17 06:00+00', 0, 0, 1)),
                         (hlculid_from_parts('2026-11-18 06:00+00', 0, 0, 1));
CREATE TABLE fk_noaction (id hlculid REFERENCES fk_pk);
CREATE TABLE fk_restrict (id hlculid REFERENCES fk_pk ON DELETE RESTRICT);
INSERT INTO fk_noaction SELECT min(id) FROM fk_pk;
SELECT hlculid_create_partitions('fk_pk', '2026-11-17+00', '2026-11-19+00', interval '1 day');
SELECT * FROM parts('fk_pk');
SELECT tableoid::regclass AS holds, hlculid_ts(id) FROM fk_pk ORDER BY id;
DELETE FROM fk_noaction;
INSERT INTO fk_restrict SELECT min(id) FROM fk_pk;
SELECT hlculid_create_partitions('fk_pk', '2026-11-17+00', '2026-11-19+00', interval '1 day');
SELECT tableoid::regclass AS holds, hlculid_ts(id) FROM fk_pk ORDER BY id;
DELETE FROM fk_restrict;
CREATE TABLE fk_deferred (id hlculid REFERENCES fk_pk DEFERRABLE INITIALLY DEFERRED);
SELECT hlculid_create_partitions('fk_pk', '2026-11-17+00', '2026-11-19+00', interval '1 day');
DROP TABLE fk_deferred;
SELECT hlculid_create_partitions('fk_pk', '2026-11-17+00', '2026-11-19+00', interval '1 day');
SELECT tableoid::regclass AS holds, hlculid_ts(id) FROM fk_pk ORDER BY id;
DROP TABLE fk_noaction, fk_restrict, fk_pk;
RESET client_min_messages;

-- names: at most 63 bytes, counted in bytes and cut on a character boundary; two long names
-- sharing their beginning stay apart (a hash of the whole name); a name already taken (here a
-- detached partition) gets a number
CREATE TABLE "ééééééééééééééééééééééééééééééa" (id hlculid NOT NULL) PARTITION BY RANGE (id);
CREATE TABLE "ééééééééééééééééééééééééééééééb" (id hlculid NOT NULL) PARTITION BY RANGE (id);
SELECT p, octet_length(btrim(p::text, '"')) AS bytes FROM hlculid_create_partitions('"ééééééééééééééééééééééééééééééa"',
    '2026-11-20+00', '2026-11-22+00', interval '1 day') p;
SELECT p, octet_length(btrim(p::text, '"')) AS bytes FROM hlculid_create_partitions('"ééééééééééééééééééééééééééééééb"',
    '2026-11-20+00', '2026-11-21+00', interval '1 day') p;
SELECT p, octet_length(btrim(p::text, '"')) AS bytes FROM hlculid_create_partitions('"ééééééééééééééééééééééééééééééb"',
    '2026-11-25 10:00+00', '2026-11-25 10:02+00', interval '1 minute') p;
SELECT hlculid_drop_partitions('wk', '2026-11-26+00', detach_only => true);
SELECT p FROM hlculid_create_partitions('wk', '2026-11-19+00', '2026-11-20+00', interval '7 days') p;
-- results are the tables themselves (regclass), printed schema-qualified when the schema is not
-- on the search_path; retention returns qualified names
CREATE SCHEMA ops;
CREATE TABLE ops.log (id hlculid NOT NULL) PARTITION BY RANGE (id);
SELECT p, p::text FROM hlculid_create_partitions('ops.log', '2026-11-20+00', '2026-11-21+00', interval '1 day') p;
SET search_path = '';
SELECT p::text FROM pg_catalog.hlculid_create_partitions('public.wk', '2026-12-31+00', '2027-01-01+00', interval '7 days') p;
RESET search_path;
SELECT hlculid_drop_partitions('ops.log', '2026-11-21+00');

-- inputs refused before anything is locked or changed: times an id cannot hold (22008)...
CREATE TABLE keep (id hlculid NOT NULL) PARTITION BY RANGE (id);
CREATE TABLE keep_default PARTITION OF keep DEFAULT;
SELECT count(*) FROM hlculid_create_partitions('keep', '2026-11-18+00', '2026-11-21+00', interval '1 day');
INSERT INTO keep SELECT hlculid_from_parts(t, 0, 0, 0) FROM generate_series(
    timestamptz '2026-11-17 12:00+00', '2026-11-21 12:00+00', interval '12 hours') t;
SELECT err(format('SELECT hlculid_drop_partitions(%L, %L)', 'keep', t)) FROM (VALUES
    ('1900-01-01+00'), ('1969-12-31 23:59:59.999+00'), ('10889-08-03+00'), ('infinity'), ('-infinity')) v(t);
SELECT err(format('SELECT hlculid_drop_partitions(%L, %L, true)', 'keep', '-infinity'));
-- ...the epoch and the last millisecond an id holds are fine
SELECT hlculid_drop_partitions('keep', '1970-01-01 00:00:00+00');
SELECT err(format('SELECT hlculid_create_partitions(%L, %L, %L)', 'keep', f, t)) FROM (VALUES
    ('1900-01-01+00', '2026-01-01+00'), ('1969-12-31 23:59:59.999+00', '1970-01-02+00'),
    ('2026-01-01+00', '10889-08-03+00'), ('-infinity', '2026-01-01+00'), ('2026-01-01+00', 'infinity')) v(f, t);
-- ...intervals that are not whole months, nor a positive whole number of minutes (22023)...
SELECT err(format('SELECT hlculid_create_partitions(%L, now(), now() + interval %L, interval %L)', 'keep', '1 day', i))
FROM (VALUES ('1 month 1 day'), ('1 year 1 minute'), ('0'), ('-1 day'), ('-1 month'), ('30 seconds'), ('90 seconds')) v(i);
SELECT err($$SELECT hlculid_create_partitions('keep', now(), now() + interval '100 years', interval '1 hour')$$);
-- ...tables not partitioned by range on an hlculid column (42809)
CREATE TABLE plain (id hlculid PRIMARY KEY);
CREATE TABLE by_hash (id hlculid NOT NULL) PARTITION BY HASH (id);
CREATE TABLE by_hash_0 PARTITION OF by_hash FOR VALUES WITH (MODULUS 1, REMAINDER 0);
CREATE TABLE by_text (k text, id hlculid) PARTITION BY RANGE (k);
CREATE TABLE by_text_a PARTITION OF by_text FOR VALUES FROM (MINVALUE) TO (MAXVALUE);
CREATE TABLE by_expr (id hlculid) PARTITION BY RANGE ((hlculid_ts(id)));
CREATE TABLE by_two (id hlculid, n int) PARTITION BY RANGE (id, n);
SELECT t, err(format('SELECT hlculid_drop_partitions(%L, %L)', t, '2100-01-01+00')),
          err(format('SELECT hlculid_create_partitions(%L, now(), now() + interval %L)', t, '1 day'), false)
FROM unnest(array['plain', 'by_hash', 'by_text', 'by_expr', 'by_two']) t;
SELECT count(*) FROM pg_inherits WHERE inhparent IN ('by_hash'::regclass, 'by_text'::regclass);
-- NULL arguments (the helpers are STRICT): no rows, nothing done
SELECT count(*) FROM hlculid_drop_partitions('keep', NULL);
SELECT count(*) FROM hlculid_drop_partitions(NULL, '2100-01-01+00');
SELECT count(*) FROM hlculid_drop_partitions('keep', '2100-01-01+00', NULL);
SELECT count(*) FROM hlculid_create_partitions('keep', NULL, '2100-01-01+00');
SELECT count(*) FROM hlculid_create_partitions('keep', '2026-01-01+00', '2026-01-03+00', NULL);
-- every partition and row is still there
SELECT * FROM parts('keep');
-- an empty or reversed span creates nothing
SELECT count(*) FROM hlculid_create_partitions('keep', '2026-06-01+00', '2026-06-01+00', interval '1 day');
SELECT count(*) FROM hlculid_create_partitions('keep', '2026-06-02+00', '2026-06-01+00', interval '1 day');
-- and retention from 2026-11-20 drops exactly the two days before it
SELECT hlculid_drop_partitions('keep', '2026-11-20+00');
SELECT * FROM parts('keep');
-- the ends of the range: a period past the last millisecond an id holds ends at MAXVALUE
CREATE TABLE edge (id hlculid NOT NULL) PARTITION BY RANGE (id);
SELECT p FROM hlculid_create_partitions('edge', '10889-07-01+00', '10889-08-02 05:31:50.655+00', interval '1 month') p;
SELECT p FROM hlculid_create_partitions('edge', '1970-01-01+00', '1970-01-01 00:01+00', interval '1 minute') p;
SELECT * FROM parts('edge');
SELECT hlculid_drop_partitions('edge', '10889-08-02 05:31:50.655+00');

DROP TABLE wk, wk_p2026_11_19, qt, mn, old, hand, ev, ev_ref, ev_pk, "ééééééééééééééééééééééééééééééa",
    "ééééééééééééééééééééééééééééééb", ops.log, keep, edge, plain, by_hash, by_text, by_expr, by_two;
DROP SCHEMA ops;
DROP FUNCTION parts(regclass);
-- schemas whose names need quoting (0.3.0 quoted them twice: issue 24)
CREATE SCHEMA "user";
CREATE SCHEMA "My Schema";
CREATE TABLE "user".ev (id hlculid PRIMARY KEY) PARTITION BY RANGE (id);
CREATE TABLE "My Schema"."Ev Log" (id hlculid PRIMARY KEY) PARTITION BY RANGE (id);
CREATE TABLE "My Schema"."Ev Log default" PARTITION OF "My Schema"."Ev Log" DEFAULT;
INSERT INTO "My Schema"."Ev Log" VALUES (hlculid_min('2026-03-02 10:00+00'));
SELECT hlculid_create_partitions('"user".ev', '2026-03-01', '2026-03-03', '1 day');
SELECT hlculid_create_partitions('"My Schema"."Ev Log"', '2026-03-01', '2026-03-03', '1 day');
SELECT tableoid::regclass, hlculid_ts(id) FROM "My Schema"."Ev Log";
SELECT hlculid_drop_partitions('"user".ev', '2026-03-03');
SELECT hlculid_drop_partitions('"My Schema"."Ev Log"', '2026-03-03', detach_only => true);
DROP SCHEMA "user", "My Schema" CASCADE;
