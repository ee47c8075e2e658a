-- the horizon and watermarks (0.4.0): hlculid_horizon(), hlculid_horizon_bigint(), the holders,
-- hlculid.hlculid_horizons with hlculid_advance_horizon / hlculid_publish_horizon / hlculid_watermark,
-- and hlculid_read. Concurrency, prepared transactions and restarts: tests/integration/test_horizon.py.
SET timezone = 'UTC';
-- files of the suite before this one may have carried the clock ahead of the wall clock (generate's
-- largest batch): the horizon is back at the wall clock within milliseconds
DO $$ BEGIN
  FOR i IN 1..500 LOOP
    EXIT WHEN hlculid_ts(hlculid_horizon()) <= clock_timestamp();
    PERFORM pg_sleep(0.01);
  END LOOP;
END $$;
CREATE TEMP TABLE seen (label text, v hlculid);
-- exclusive: a clock value with the low 64 bits zero, and never going back between calls
INSERT INTO seen SELECT 'h1', hlculid_horizon();
INSERT INTO seen SELECT 'h2', hlculid_horizon();
SELECT hlculid_publisher(v) = 0 AND hlculid_random(v) = 0 AS exclusive,
       hlculid_ts(v) <= clock_timestamp() AS not_ahead
FROM seen WHERE label = 'h2';
SELECT (SELECT v FROM seen WHERE label = 'h1') <= (SELECT v FROM seen WHERE label = 'h2') AS monotone;
-- no transaction runs: every id made before is below the horizon
INSERT INTO seen SELECT 'id', hlculid_generate();
INSERT INTO seen SELECT 'h3', hlculid_horizon();
SELECT (SELECT v FROM seen WHERE label = 'id') < (SELECT v FROM seen WHERE label = 'h3') AS committed_id_below;
-- a transaction that made ids holds the horizon at or below its first id until it ends, savepoints
-- rolled back included; a transaction that made none holds nothing
BEGIN;
SELECT count(*) AS holders_before FROM hlculid.hlculid_horizon_holders WHERE pid = pg_backend_pid();
SAVEPOINT s;
SELECT hlculid_generate() AS in_tx \gset
ROLLBACK TO SAVEPOINT s;
INSERT INTO seen SELECT 'in_tx2', (hlculid_generate_n(3))[3];
INSERT INTO seen SELECT 'h_in_tx', hlculid_horizon();
SELECT h.v <= :'in_tx' AS held_below_first_id,
       h.v >= (SELECT v FROM seen WHERE label = 'h3') AS still_monotone
FROM seen h WHERE h.label = 'h_in_tx';
SELECT count(*) AS holders, bool_and(holds_at <= :'in_tx') AS holds_below,
       bool_and(prepared_xid IS NULL) AS not_prepared, bool_and(state = 'active') AS active,
       bool_and(lag >= interval '0') AS lag_known,
       bool_and(since >= xact_start AND since <= clock_timestamp()) AS since_first_id
FROM hlculid.hlculid_horizon_holders WHERE pid = pg_backend_pid();
COMMIT;
SELECT count(*) AS holders_after FROM hlculid.hlculid_horizon_holders WHERE pid = pg_backend_pid();
INSERT INTO seen SELECT 'h4', hlculid_horizon();
SELECT (SELECT v FROM seen WHERE label = 'in_tx2') < (SELECT v FROM seen WHERE label = 'h4') AS released_after_commit;
-- the other generators hold it too: bigint ids and transaction groups
BEGIN;
INSERT INTO seen SELECT 'big', hlculid_from_bigint(hlculid_generate_bigint());
SELECT hlculid_horizon_bigint() <= hlculid_to_bigint(v) AS held_for_bigint FROM seen WHERE label = 'big';
COMMIT;
SELECT hlculid_horizon_bigint() > hlculid_to_bigint(v) AS bigint_released FROM seen WHERE label = 'big';
BEGIN;
INSERT INTO seen SELECT 'tx', hlculid_generate_tx();
SELECT hlculid_horizon() <= v AS held_for_tx FROM seen WHERE label = 'tx';
COMMIT;
SELECT hlculid_horizon() > v AS tx_released FROM seen WHERE label = 'tx';
-- the bigint horizon is the 128-bit one in bigint form: every bigint id made before is below it
CREATE TEMP TABLE big AS SELECT unnest(hlculid_generate_bigint_n(100)) AS b;
SELECT max(b) < hlculid_horizon_bigint() AS bigint_ids_below FROM big;
SELECT hlculid_bigint_ts(hlculid_horizon_bigint()) = hlculid_ts(hlculid_horizon()) AS same_millisecond;
-- REPEATABLE READ and SERIALIZABLE: the snapshot predates the horizon
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT err('SELECT hlculid_horizon()');
SELECT err('SELECT hlculid_horizon_bigint()', false);
ROLLBACK;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT err('SELECT hlculid_horizon()', false);
ROLLBACK;
-- hlculid_read: the next rows after an id, below the horizon, in id order
CREATE TABLE hz_events (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int);
INSERT INTO hz_events (n) SELECT g FROM generate_series(1, 10) g;
SELECT n FROM hlculid_read(NULL::hz_events, NULL, 3);
SELECT n FROM hlculid_read(NULL::hz_events, (SELECT id FROM hz_events WHERE n = 3));
SELECT count(*) FROM hlculid_read(NULL::hz_events, (SELECT max(id) FROM hz_events));
CREATE TABLE hz_other (key hlculid UNIQUE, "ORDER" int, v int);
INSERT INTO hz_other (key, "ORDER", v) SELECT hlculid_generate(), g, g FROM generate_series(1, 3) g;
SELECT "ORDER" FROM hlculid_read(NULL::hz_other, NULL, 10, 'key');
SELECT err('SELECT hlculid_read(1, NULL)');
SELECT err('SELECT hlculid_read(NULL::hz_events, NULL, 0)');
SELECT err('SELECT hlculid_read(NULL::hz_events, NULL, NULL)');
SELECT err('SELECT hlculid_read(NULL::hz_events, NULL, 5, ''n'')');
SELECT err('SELECT hlculid_read(NULL::hz_events, NULL, 5, ''nope'')');
SELECT err('SELECT hlculid_read(NULL::hz_other, NULL, 5)');
-- the id column must be unique by itself (0.5.0): pages go by id > the last id read, so rows
-- sharing an id with a page's last row would be passed
CREATE TABLE hz_composite (id hlculid, recipient int, PRIMARY KEY (id, recipient));
INSERT INTO hz_composite SELECT i.id, r FROM (SELECT hlculid_generate() AS id FROM generate_series(1, 2)) i, generate_series(1, 2) r;
SELECT err('SELECT hlculid_read(NULL::hz_composite, NULL, 1)');
SELECT err('SELECT hlculid_read_below(NULL::hz_composite, NULL, hlculid_horizon(), 1)', false);
SELECT err('SELECT hlculid_read_watermark(NULL::hz_composite, NULL, NULL, 1)', false);
CREATE UNIQUE INDEX ON hz_composite (id) WHERE recipient = 1;  -- partial: not unique over the table
SELECT err('SELECT hlculid_read(NULL::hz_composite, NULL, 1)', false);
CREATE UNIQUE INDEX ON hz_composite ((id::text || recipient)); -- an expression: not the column
SELECT err('SELECT hlculid_read(NULL::hz_composite, NULL, 1)', false);
CREATE TABLE hz_unindexed (id hlculid DEFAULT hlculid_generate(), n int);
INSERT INTO hz_unindexed (n) VALUES (1);
SELECT err('SELECT hlculid_read(NULL::hz_unindexed, NULL)', false);
-- a unique index with INCLUDE columns has the id as its only key column: read
CREATE UNIQUE INDEX ON hz_unindexed (id) INCLUDE (n);
SELECT n FROM hlculid_read(NULL::hz_unindexed, NULL);
-- a partitioned table: the parent's unique index
CREATE TABLE hz_parts (id hlculid, n int) PARTITION BY RANGE (id);
CREATE TABLE hz_parts_all PARTITION OF hz_parts DEFAULT;
INSERT INTO hz_parts SELECT hlculid_generate(), g FROM generate_series(1, 3) g;
CREATE UNIQUE INDEX ON hz_parts_all (id);                        -- a partition's: not the parent's
SELECT err('SELECT hlculid_read(NULL::hz_parts, NULL)', false);
ALTER TABLE hz_parts ADD PRIMARY KEY (id);
SELECT n FROM hlculid_read(NULL::hz_parts, NULL, 2);
-- a domain over hlculid (and a domain over that) reads as an hlculid (0.5.0; was 42804)
CREATE DOMAIN hz_event_id AS hlculid NOT NULL;
CREATE DOMAIN hz_order_id AS hz_event_id;
CREATE TABLE hz_dom (id hz_order_id PRIMARY KEY DEFAULT hlculid_generate(), n int);
INSERT INTO hz_dom (n) SELECT g FROM generate_series(1, 4) g;
SELECT n FROM hlculid_read(NULL::hz_dom, NULL, 2);
SELECT n FROM hlculid_read(NULL::hz_dom, (SELECT id FROM hz_dom WHERE n = 2), 10);
SELECT n FROM hlculid_read_below(NULL::hz_dom, NULL, hlculid_horizon(), 10);
CREATE DOMAIN hz_text_id AS text;
CREATE TABLE hz_dom_text (id hz_text_id PRIMARY KEY);
SELECT err('SELECT hlculid_read(NULL::hz_dom_text, NULL)');
-- hlculid.hlculid_horizons: one row per publisher, raised and never lowered
SELECT hlculid_advance_horizon(5, '017FC21C5E7A-0001-0000-000000000000') AS first;
SELECT hlculid_advance_horizon(5, '017FC21C5E7A-0000-0000-000000000000') AS not_lowered;
SELECT hlculid_advance_horizon(5, '017FC21C5E7B-0000-0000-000000000000') AS raised;
SELECT publisher, horizon FROM hlculid.hlculid_horizons ORDER BY publisher;
SELECT err('SELECT hlculid_advance_horizon(NULL, hlculid_generate())');
SELECT err('SELECT hlculid_advance_horizon(5, NULL)');
SELECT err('SELECT hlculid_advance_horizon(65536, hlculid_generate())', false);
SELECT err('SELECT hlculid_advance_horizon(-1, hlculid_generate())', false);
SELECT err('INSERT INTO hlculid.hlculid_horizons VALUES (70000, ''017FC21C5E7A-0001-0000-000000000000'', ''2022-03-25'')', false);
-- this server's own row (publisher 42), from its horizon, the clock brought up to the wall clock
SELECT hlculid_publish_horizon() <= hlculid_horizon() AS published_at_or_below_live;
-- (an idle clock is brought up to the wall clock, so the row's time is now)
SELECT publisher, hlculid_publisher(horizon) = 0 AS exclusive,
       abs(extract(epoch FROM hlculid_ts(horizon) - clock_timestamp())) < 5 AS near_now
FROM hlculid.hlculid_horizons WHERE publisher = 42;
-- the watermark: the smallest horizon of the publishers named; NULL (never too high) while one
-- has no row; with no names, every row and this server's own live horizon
SELECT hlculid_watermark(ARRAY[5]) = '017FC21C5E7B-0000-0000-000000000000' AS one;
SELECT hlculid_watermark(ARRAY[5, 42]) = '017FC21C5E7B-0000-0000-000000000000' AS smallest;
SELECT hlculid_watermark(ARRAY[42]) <= hlculid_horizon() AS own_live;
SELECT hlculid_watermark(ARRAY[5, 6]) IS NULL AS no_row_no_watermark;
SELECT hlculid_watermark(ARRAY[]::int4[]) IS NULL AS none_named;
SELECT hlculid_watermark() = '017FC21C5E7B-0000-0000-000000000000' AS every_row;
SELECT err('SELECT hlculid_watermark(ARRAY[5, NULL])', false);
SELECT err('SELECT hlculid_watermark(ARRAY[65536])', false);
-- publishers is a list (0.5.0: array_position's 0A000 before)
SELECT err('SELECT hlculid_watermark(ARRAY[[1, 2], [3, 4]])');
SELECT err('SELECT * FROM hlculid_read_watermark(NULL::hz_events, NULL, ARRAY[[5]])', false);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT err('SELECT hlculid_watermark(''{{{5}}}'')', false);  -- the shape before anything else
ROLLBACK;
DELETE FROM hlculid.hlculid_horizons WHERE publisher = 5;
SELECT hlculid_watermark() <= hlculid_horizon() AS own_only;
-- an idle clock does not hold the watermark back (0.5.0): this server's own part is its horizon
-- with the clock brought up to the wall clock first, as hlculid_publish_horizon() writes it
SELECT hlculid_horizon() AS idle \gset
SELECT pg_sleep(0.05);
SELECT hlculid_advance_horizon(5, hlculid_min(clock_timestamp() - interval '10 ms')) IS NOT NULL AS arrived;
SELECT hlculid_watermark(ARRAY[5, 42]) = (SELECT horizon FROM hlculid.hlculid_horizons WHERE publisher = 5) AS not_held_back,
       hlculid_watermark(ARRAY[42]) > :'idle' AS own_part_moved;
DELETE FROM hlculid.hlculid_horizons WHERE publisher = 5;
DROP TABLE hz_events, hz_other, hz_composite, hz_unindexed, hz_parts, hz_dom, hz_dom_text;
DROP DOMAIN hz_order_id, hz_event_id, hz_text_id;
DELETE FROM hlculid.hlculid_horizons;
