-- hlculid_backfill: NULL ids of an existing table filled from a time column (0.3.0)
SET timezone = 'UTC';
SET datestyle = 'ISO';
\set SHOW_CONTEXT never
-- a bigserial table with duplicate and out-of-order times, two rows already holding live ids
CREATE TABLE orders (old_id bigserial PRIMARY KEY, created_at timestamptz NOT NULL, note text);
INSERT INTO orders (created_at, note)
SELECT timestamptz '2024-05-01 12:00:00+00' + ((i * 37) % 11) * interval '1.5 ms', 'row ' || i
FROM generate_series(1, 40) i;
ALTER TABLE orders ADD COLUMN id hlculid;
ALTER TABLE orders ALTER COLUMN id SET DEFAULT hlculid_generate();
CREATE UNIQUE INDEX orders_id_key ON orders (id);
UPDATE orders SET id = hlculid_generate() WHERE old_id IN (5, 6);
CREATE TEMP TABLE live AS SELECT old_id, id FROM orders WHERE id IS NOT NULL;
CALL hlculid_backfill('orders', 'id', 'created_at', 65000, 7);
-- every row has an id, distinct even without the random bits; the live ones kept theirs; backfilled ones carry publisher
-- 65000 and their row's time (to the millisecond), in the order of (time, primary key)
SELECT count(*) AS n, count(id) AS with_id, count(DISTINCT id) AS distinct_ids, count(DISTINCT (hlculid_ts(id), hlculid_counter(id), hlculid_publisher(id))) AS distinct_fields FROM orders;
SELECT count(*) AS live_kept FROM orders o JOIN live l USING (old_id) WHERE o.id = l.id;
SELECT hlculid_publisher(id) AS publisher, count(*) FROM orders GROUP BY 1 ORDER BY 1;
SELECT bool_and(hlculid_ts(id) = date_trunc('milliseconds', created_at)) AS time_of_row
FROM orders WHERE hlculid_publisher(id) = 65000;
SELECT array_agg(old_id ORDER BY id) = array_agg(old_id ORDER BY created_at, old_id) AS id_order_is_time_order
FROM orders WHERE hlculid_publisher(id) = 65000;
-- counters count up within a millisecond
SELECT hlculid_ts(id) AS ms, array_agg(hlculid_counter(id) ORDER BY id) AS counters
FROM orders WHERE hlculid_publisher(id) = 65000 GROUP BY 1 ORDER BY 1 LIMIT 3;
-- nothing left to do: a second run changes nothing
CREATE TEMP TABLE before AS SELECT old_id, id FROM orders;
CALL hlculid_backfill('orders', 'id', 'created_at', 65000);
SELECT count(*) AS changed FROM orders o JOIN before b USING (old_id) WHERE o.id <> b.id;
-- a later run over rows of the same milliseconds continues their counters: no id repeats
INSERT INTO orders (created_at, note, id)
SELECT timestamptz '2024-05-01 12:00:00+00' + (i % 11) * interval '1.5 ms', 'late ' || i, NULL
FROM generate_series(1, 20) i;
CALL hlculid_backfill('orders', 'id', 'created_at', 65000, 6);
SELECT count(*) AS n, count(id) AS with_id, count(DISTINCT id) AS distinct_ids, count(DISTINCT (hlculid_ts(id), hlculid_counter(id), hlculid_publisher(id))) AS distinct_fields FROM orders;
SELECT count(*) AS changed FROM orders o JOIN before b USING (old_id) WHERE o.id <> b.id;
SELECT bool_and(hlculid_ts(id) = date_trunc('milliseconds', created_at)) AS time_of_row,
       array_agg(old_id ORDER BY id) = array_agg(old_id ORDER BY created_at, old_id) AS late_rows_in_time_order
FROM orders WHERE note LIKE 'late%';
-- each late row sorts after the first run's rows of its millisecond
SELECT count(*) AS late_before_earlier FROM orders l JOIN orders e
  ON hlculid_ts(l.id) = hlculid_ts(e.id) AND l.note LIKE 'late%' AND e.note LIKE 'row%'
WHERE hlculid_publisher(e.id) = 65000 AND l.id < e.id;
-- another publisher is another range of ids: a second backfill publisher never collides
UPDATE orders SET id = NULL WHERE note IN ('row 1', 'row 2', 'row 3');
CALL hlculid_backfill('orders', 'id', 'created_at', 65001);
SELECT note, hlculid_publisher(id) FROM orders WHERE note IN ('row 1', 'row 2', 'row 3') ORDER BY id;

-- more rows in one millisecond than the counter holds: the counter carries into the next
-- millisecond, as the clock's does, and a later run steps over everything already there
CREATE TABLE burst (k int PRIMARY KEY, at timestamptz NOT NULL, id hlculid);
CREATE INDEX ON burst (id);
INSERT INTO burst SELECT i, '2024-05-01 00:00:00.007+00', NULL FROM generate_series(1, 70000) i;
INSERT INTO burst VALUES (70001, '2024-05-01 00:00:00.008+00', NULL);
CALL hlculid_backfill('burst', 'id', 'at', 65002, 50000);
SELECT hlculid_ts(id) AS ms, count(*), min(hlculid_counter(id)) AS first_counter, max(hlculid_counter(id)) AS last_counter
FROM burst GROUP BY 1 ORDER BY 1;
SELECT count(DISTINCT id) AS distinct_ids, count(DISTINCT (hlculid_ts(id), hlculid_counter(id), hlculid_publisher(id))) AS distinct_fields, array_agg(k ORDER BY id) = array_agg(k ORDER BY at, k) AS in_order FROM burst;
SELECT hlculid_counter(id) AS counter_of_the_row_at_008 FROM burst WHERE k = 70001;
INSERT INTO burst VALUES (70002, '2024-05-01 00:00:00.007+00', NULL), (70003, '2024-05-01 00:00:00.008+00', NULL);
CALL hlculid_backfill('burst', 'id', 'at', 65002);
SELECT k, hlculid_ts(id), hlculid_counter(id) FROM burst WHERE k > 70000 ORDER BY id;
SELECT count(DISTINCT id) AS distinct_ids, count(DISTINCT (hlculid_ts(id), hlculid_counter(id), hlculid_publisher(id))) AS distinct_fields FROM burst;
-- the same without an index on the column (each batch reads its span of the table)
DROP INDEX burst_id_idx;
UPDATE burst SET id = NULL WHERE k > 70000;
CALL hlculid_backfill('burst', 'id', 'at', 65002);
SELECT k, hlculid_ts(id), hlculid_counter(id) FROM burst WHERE k > 70000 ORDER BY id;
SELECT count(DISTINCT id) AS distinct_ids, count(DISTINCT (hlculid_ts(id), hlculid_counter(id), hlculid_publisher(id))) AS distinct_fields FROM burst;
DROP TABLE burst;

-- no primary key: ties in time are ordered by the row's place (ctid); a partitioned table, whose
-- partitions each have their own ctids
CREATE TABLE nokey (at timestamp, id hlculid, tag text) PARTITION BY LIST (tag);
CREATE TABLE nokey_a PARTITION OF nokey FOR VALUES IN ('a');
CREATE TABLE nokey_b PARTITION OF nokey FOR VALUES IN ('b');
INSERT INTO nokey (at, tag) SELECT '2024-05-01 00:00:00', t FROM unnest(ARRAY['a', 'b', 'a', 'b']) t;
INSERT INTO nokey (at, tag) VALUES ('2024-04-30 23:59:59.999', 'b');
-- a timestamp without time zone is read as UTC, whatever the session's TimeZone
SET timezone = 'America/New_York';
CALL hlculid_backfill('nokey', 'id', 'at', 65003, 2);
SET timezone = 'UTC';
SELECT tag, at, hlculid_ts(id), hlculid_counter(id) FROM nokey ORDER BY id;
SELECT count(DISTINCT id) AS distinct_ids, count(DISTINCT (hlculid_ts(id), hlculid_counter(id), hlculid_publisher(id))) AS distinct_fields FROM nokey;
DROP TABLE nokey;

-- the extension's schema need not be on the search_path
SET search_path = pg_temp;
CREATE TABLE public.plain (at timestamptz, id pg_catalog.hlculid);
INSERT INTO public.plain VALUES ('2024-05-01 00:00:00+00', NULL), ('2024-05-01 00:00:01+00', NULL);
CALL pg_catalog.hlculid_backfill('public.plain', 'id', 'at', 65004);
SELECT pg_catalog.hlculid_ts(id), pg_catalog.hlculid_publisher(id) FROM public.plain ORDER BY at;
RESET search_path;
DROP TABLE plain;

-- refused before anything changes: every argument checked, then the rows' times
CREATE TABLE wrong (k int PRIMARY KEY, at timestamptz, d date, txt text, id hlculid, u uuid);
INSERT INTO wrong VALUES (1, '2024-05-01+00', '2024-05-01', 'x', NULL, NULL);
CREATE VIEW wrong_view AS SELECT * FROM wrong;
SELECT err($$CALL hlculid_backfill(NULL, 'id', 'at', 65000)$$);
SELECT err($$CALL hlculid_backfill('wrong', NULL, 'at', 65000)$$);
SELECT err($$CALL hlculid_backfill('wrong', 'id', NULL, 65000)$$);
SELECT err($$CALL hlculid_backfill('wrong', 'id', 'at', NULL)$$);
SELECT err($$CALL hlculid_backfill('wrong', 'id', 'at', 65000, NULL)$$);
SELECT err($$CALL hlculid_backfill('no_such_table', 'id', 'at', 65000)$$);
SELECT err($$CALL hlculid_backfill('wrong_view', 'id', 'at', 65000)$$);
SELECT err($$CALL hlculid_backfill('orders_id_key', 'id', 'at', 65000)$$);
SELECT err($$CALL hlculid_backfill('wrong', 'nope', 'at', 65000)$$);
SELECT err($$CALL hlculid_backfill('wrong', 'id', 'nope', 65000)$$);
SELECT err($$CALL hlculid_backfill('wrong', 'u', 'at', 65000)$$);
SELECT err($$CALL hlculid_backfill('wrong', 'ctid', 'at', 65000)$$);
SELECT err($$CALL hlculid_backfill('wrong', 'id', 'd', 65000)$$);
SELECT err($$CALL hlculid_backfill('wrong', 'id', 'txt', 65000)$$);
SELECT err($$CALL hlculid_backfill('wrong', 'id', 'at', -1)$$);
SELECT err($$CALL hlculid_backfill('wrong', 'id', 'at', 65536)$$);
SELECT err($$CALL hlculid_backfill('wrong', 'id', 'at', 65000, 0)$$);
-- rows whose time is NULL, or one an id cannot hold: all refused, with nothing changed
INSERT INTO wrong (k, at) VALUES (2, NULL), (3, NULL);
SELECT err($$CALL hlculid_backfill('wrong', 'id', 'at', 65000)$$);
DELETE FROM wrong WHERE k IN (2, 3);
INSERT INTO wrong (k, at) VALUES (2, '1969-12-31 23:59:59.999+00'), (3, 'infinity'), (4, '-infinity'),
  (5, '10889-08-02 05:31:50.656+00'), (6, '1900-01-01+00');
SELECT err($$CALL hlculid_backfill('wrong', 'id', 'at', 65000)$$);
DELETE FROM wrong WHERE k = 3;
SELECT err($$CALL hlculid_backfill('wrong', 'id', 'at', 65000)$$);
SELECT count(id) AS ids_made FROM wrong;
-- the first and the last millisecond an id holds are fine
DELETE FROM wrong WHERE k > 1;
INSERT INTO wrong (k, at) VALUES (2, '1970-01-01 00:00:00+00'), (3, '10889-08-02 05:31:50.655999+00');
CALL hlculid_backfill('wrong', 'id', 'at', 65000);
SELECT k, hlculid_ts(id), hlculid_counter(id) FROM wrong ORDER BY id;
-- no id left at the end of the range: the last millisecond's counter is full
INSERT INTO wrong (k, at, id) VALUES (4, '10889-08-02 05:31:50.655+00', hlculid_from_parts('10889-08-02 05:31:50.655+00', 65535, 65000, 0));
INSERT INTO wrong (k, at) VALUES (5, '10889-08-02 05:31:50.655+00');
CALL hlculid_backfill('wrong', 'id', 'at', 65000);
SELECT count(*) FILTER (WHERE id IS NULL) AS still_null FROM wrong;
-- a procedure that commits: CALLed inside a transaction block it fails (2D000), nothing changed
BEGIN;
CALL hlculid_backfill('orders', 'id', 'created_at', 65000);
ROLLBACK;
UPDATE orders SET id = NULL WHERE note = 'row 7';
BEGIN;
CALL hlculid_backfill('orders', 'id', 'created_at', 65000);
ROLLBACK;
SELECT count(*) AS still_null FROM orders WHERE id IS NULL;
-- and from a function (an atomic context)
CREATE FUNCTION pg_temp.backfill_orders() RETURNS void LANGUAGE plpgsql AS $$
BEGIN CALL hlculid_backfill('orders', 'id', 'created_at', 65000); END $$;
SELECT err('SELECT pg_temp.backfill_orders()');
SELECT count(*) AS still_null FROM orders WHERE id IS NULL;
-- a DO block at the top level may call it
DO $$ BEGIN CALL hlculid_backfill('orders', 'id', 'created_at', 65000); END $$;
SELECT count(*) AS still_null FROM orders WHERE id IS NULL;
-- the run's fixed search_path ends with it: the caller's transaction goes on with its own
-- path (0.3.0 left pg_catalog, pg_temp in force until the caller's transaction ended)
UPDATE orders SET id = NULL WHERE note = 'row 7';
SET search_path = public, pg_temp;
DO $$
DECLARE
    before text := current_setting('search_path');
BEGIN
    CALL hlculid_backfill('orders', 'id', 'created_at', 65000);
    RAISE NOTICE 'search_path unchanged within the transaction: %', current_setting('search_path') = before;
    -- unqualified names resolve as before the call
    PERFORM count(*) FROM orders;
END $$;
SHOW search_path;
RESET search_path;
SELECT count(*) AS still_null FROM orders WHERE id IS NULL;
DROP VIEW wrong_view;
DROP TABLE wrong;
DROP TABLE orders;
-- columns named like the pass's own output columns (c, r, ms, more) fill every row, in
-- (time, key) order (0.3.0 filled one row a run: issue 24)
CREATE TABLE kc (c bigint PRIMARY KEY, created_at timestamptz NOT NULL, hid hlculid);
INSERT INTO kc SELECT i, timestamptz '2024-05-01 12:00:00+00' + ((i * 37) % 101) * interval '1 ms', NULL
FROM generate_series(1, 1000) i;
CALL hlculid_backfill('kc', 'hid', 'created_at', 960);
CALL hlculid_backfill('kc', 'hid', 'created_at', 960, 100);
SELECT count(*) AS n, count(hid) AS filled,
       array_agg(c ORDER BY hid) = array_agg(c ORDER BY created_at, c) AS in_time_and_key_order FROM kc;
CREATE TABLE "order" (r int, "more" int, ms timestamptz NOT NULL, "user" hlculid, PRIMARY KEY (r, "more"));
INSERT INTO "order" SELECT i % 7, i, timestamptz '2024-05-01 12:00:00+00' + ((i * 13) % 50) * interval '1 ms'
FROM generate_series(1, 900) i;
CALL hlculid_backfill('"order"', 'user', 'ms', 961, 100);
SELECT count(*) AS n, count("user") AS filled,
       array_agg((r, "more") ORDER BY "user") = array_agg((r, "more") ORDER BY ms, r, "more") AS in_time_and_key_order
FROM "order";
DROP TABLE kc, "order";
-- hlculid_backfill_ids: the ids of one batch by the clock's rule, for times in ascending order:
-- the counter counts within a millisecond, starts at 0 in the next
SELECT hlculid_ts(i), hlculid_counter(i), hlculid_publisher(i)
FROM hlculid_backfill_ids(ARRAY['2024-01-01 00:00:00.001+00', '2024-01-01 00:00:00.0019+00',
                               '2024-01-01 00:00:00.003+00']::timestamptz[], 7) i;
-- above the largest held id of the same publisher in each millisecond (publisher 8's ignored)
SELECT hlculid_counter(i)
FROM hlculid_backfill_ids('{2024-01-01 00:00:00.001+00, 2024-01-01 00:00:00.001+00}', 7,
     ARRAY[hlculid_from_parts('2024-01-01 00:00:00.001+00', 9, 7, 0), hlculid_from_parts('2024-01-01 00:00:00.001+00', 3, 7, 0),
           hlculid_from_parts('2024-01-01 00:00:00.001+00', 20, 8, 0), NULL]) i;
-- a full counter carries into the next millisecond, past what is held there
SELECT hlculid_ts(i), hlculid_counter(i)
FROM hlculid_backfill_ids('{2024-01-01 00:00:00.001+00}', 7,
     ARRAY[hlculid_from_parts('2024-01-01 00:00:00.001+00', 65535, 7, 0), hlculid_from_parts('2024-01-01 00:00:00.002+00', 4, 7, 0)]) i;
-- no times, or a NULL argument (STRICT): no ids
SELECT (SELECT count(*) FROM hlculid_backfill_ids('{}', 7)) AS none,
       (SELECT count(*) FROM hlculid_backfill_ids(NULL, 7)) AS null_times,
       (SELECT count(*) FROM hlculid_backfill_ids('{2024-01-01+00}', NULL)) AS null_publisher,
       (SELECT count(*) FROM hlculid_backfill_ids('{2024-01-01+00}', 7, NULL)) AS null_held;
SELECT err($$SELECT hlculid_backfill_ids('{2024-01-01+00, NULL}', 7)$$);
SELECT err($$SELECT hlculid_backfill_ids('{2024-01-02+00, 2024-01-01+00}', 7)$$);
SELECT err($$SELECT hlculid_backfill_ids('{2024-01-01+00}', -1)$$);
SELECT err($$SELECT hlculid_backfill_ids('{2024-01-01+00}', 65536)$$);
SELECT err($$SELECT hlculid_backfill_ids('{infinity}', 7)$$);
SELECT err($$SELECT hlculid_backfill_ids('{1969-12-31 23:59:59+00}', 7)$$);
SELECT err($$SELECT hlculid_backfill_ids('{10889-08-02 05:31:50.655+00}', 7, ARRAY[hlculid_from_parts('10889-08-02 05:31:50.655+00', 65535, 7, 0)])$$);
