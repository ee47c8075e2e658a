SET timezone = 'UTC';
SET datestyle = 'ISO';
-- the clock's overflows so far: files of the suite before this one may have overflowed it
SELECT overflows AS overflows_before FROM hlculid_clock() \gset
-- ids from one statement strictly increase, carry this server's publisher (42) and the current time
-- (the current time: from the wall clock's millisecond before the statement to the one after it,
-- or ahead of it by no more than the clock's own run-ahead bound)
SELECT clock_timestamp() AS t0 \gset
CREATE TEMP TABLE g AS SELECT i, hlculid_generate() AS id FROM generate_series(1, 10000) i;
SELECT clock_timestamp() AS t1 \gset
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
       bool_and(hlculid_publisher(id) = 42) AS publisher_42,
       bool_and(hlculid_ts(id) >= date_trunc('milliseconds', :'t0'::timestamptz)) AS not_before_the_statement,
       bool_and(hlculid_ts(id) <= :'t1'::timestamptz
                + (SELECT max_run_ahead_ms FROM hlculid_clock_bound()) * interval '1 millisecond') AS not_after_it
FROM g;
SELECT count(*) AS out_of_order FROM (SELECT id, lag(id) OVER (ORDER BY i) AS prev FROM g) s WHERE prev >= id;
-- the clock is read at every call, not fixed per transaction like now()
BEGIN;
SELECT hlculid_generate() AS a \gset
SELECT pg_sleep(0.05);
SELECT hlculid_ts(hlculid_generate()) - hlculid_ts(:'a') >= interval '50 milliseconds' AS advanced;
COMMIT;
-- as a column default
CREATE TABLE events (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int);
INSERT INTO events (n) SELECT generate_series(1, 100);
SELECT count(*) AS in_order FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM events) s WHERE prev IS NULL OR prev < id;
-- volatility: generate is VOLATILE and PARALLEL SAFE
SELECT proname, provolatile, proparallel FROM pg_proc
WHERE proname IN ('hlculid_generate', 'hlculid_generate_at', 'hlculid_observe', 'hlculid_clock') ORDER BY 1;

-- observe: an id 300 ms ahead is accepted, and later ids sort after it
SELECT hlculid_from_parts(clock_timestamp() + interval '300 milliseconds', 9, 7, 0) AS remote \gset
SELECT hlculid_observe(:'remote');
SELECT hlculid_generate() > :'remote'::hlculid AS after_remote;
-- an id an hour ahead is rejected and the clock stays exactly where it was
SELECT logical_time AS before, counter AS before_counter FROM hlculid_clock() \gset
SELECT err(format('SELECT hlculid_observe(%L)',
  hlculid_from_parts(clock_timestamp() + interval '1 hour', 0, 7, 0))) ~ '^22023: hlculid [0-9A-F-]{35} is 3[56][0-9]{5} ms ahead of the local clock' AS rejected;
SELECT (logical_time, counter) = (:'before'::timestamptz, :before_counter) AS unchanged FROM hlculid_clock();
SELECT hlculid_generate() < hlculid_from_parts(clock_timestamp() + interval '1 minute', 0, 0, 0) AS not_poisoned;
-- observing an old id changes nothing (nothing else generates here)
SELECT logical_time AS lt, counter AS lc FROM hlculid_clock() \gset
SELECT hlculid_observe('017FC21C5E7A-0000-000A-AAA111111111');
SELECT (logical_time, counter) = (:'lt'::timestamptz, :lc) AS unchanged FROM hlculid_clock();

-- backfill: ids for one millisecond are ordered; another time starts afresh
SELECT hlculid_generate_at('2020-01-01 00:00:00.5+00') AS b1 \gset
SELECT hlculid_generate_at('2020-01-01 00:00:00.5+00') AS b2 \gset
SELECT :'b1'::hlculid < :'b2'::hlculid AS ordered, hlculid_counter(:'b1') AS c1, hlculid_counter(:'b2') AS c2,
       hlculid_ts(:'b1') AS ts, hlculid_publisher(:'b2') AS publisher;
SELECT count(DISTINCT id) AS distinct_ids, bool_and(hlculid_ts(id) = '2020-01-01+00') AS same_ms
FROM (SELECT hlculid_generate_at('2020-01-01+00') AS id FROM generate_series(1, 1000)) s;
SELECT count(*) AS out_of_order FROM (
  SELECT id, lag(id) OVER (ORDER BY i) AS prev FROM (SELECT i, hlculid_generate_at('2021-06-01+00') AS id FROM generate_series(1, 1000) i) s) t
WHERE prev >= id;
-- what the docs promise, exactly: a run for one millisecond increases; a call for another
-- millisecond in between starts the first one's counter over
SELECT hlculid_generate_at('2022-02-02 00:00:00.001+00') AS r1 \gset
SELECT hlculid_generate_at('2022-02-02 00:00:00.001+00') AS r2 \gset
SELECT hlculid_generate_at('2022-02-02 00:00:00.002+00') AS other \gset
SELECT hlculid_generate_at('2022-02-02 00:00:00.001+00') AS r3 \gset
SELECT :'r1'::hlculid < :'r2'::hlculid AS run_increases, hlculid_counter(:'r1') AS c1, hlculid_counter(:'r2') AS c2,
       hlculid_counter(:'other') AS c_other, hlculid_counter(:'r3') AS c3_starts_over;
SELECT err($$SELECT hlculid_generate_at('1969-01-01+00')$$);
SELECT err($$SELECT hlculid_generate_at('infinity')$$);

-- hlculid_generate_n: n ids from one step of the clock, increasing, above everything before
SELECT hlculid_generate() AS before_batch \gset
SELECT hlculid_generate_n(1000) AS batch \gset
SELECT cardinality(b) AS n, b[1] > :'before_batch'::hlculid AS above_before,
       (SELECT bool_and(x < y) FROM (SELECT x, lead(x) OVER (ORDER BY i) AS y
          FROM unnest(b) WITH ORDINALITY u(x, i)) s WHERE y IS NOT NULL) AS increasing,
       (SELECT count(DISTINCT hlculid_random(x)) FROM unnest(b) x) AS distinct_random,
       (SELECT array_agg(DISTINCT hlculid_publisher(x)) FROM unnest(b) x) AS publishers,
       hlculid_generate() > b[1000] AS next_above
FROM (SELECT :'batch'::hlculid[] AS b) s;
-- a second batch, as rows: above the first batch and every earlier row
INSERT INTO events (id, n) SELECT id, 1000 + i FROM unnest(hlculid_generate_n(100)) WITH ORDINALITY u(id, i);
SELECT count(*) AS inserted, bool_and(id > (:'batch'::hlculid[])[1000]) AS above_first_batch,
       min(id) > (SELECT max(id) FROM events WHERE n <= 100) AS above_earlier_rows
FROM events WHERE n > 1000;
SELECT logical_time AS lt, counter AS lc FROM hlculid_clock() \gset
SELECT err('SELECT hlculid_generate_n(0)');
SELECT err('SELECT hlculid_generate_n(65537)');
SELECT err('SELECT hlculid_generate_n(-5)');
SELECT (logical_time, counter) = (:'lt'::timestamptz, :lc) AS nothing_taken FROM hlculid_clock();
SELECT hlculid_generate_n(NULL) IS NULL AS strict;

-- hlculid_clock(): one row describing the clock
-- nothing else generates here, so the clock stands exactly at the last id generated
SELECT hlculid_generate() AS last_id \gset
SELECT publisher, publisher_source, abs(extract(epoch FROM wall_time - clock_timestamp())) < 5 AS wall_now,
       logical_time = hlculid_ts(:'last_id') AS logical_is_last_id, counter = hlculid_counter(:'last_id') AS counter_is_last_id,
       drift_ms BETWEEN -1000 AND 5000 AS drift_ok, high_water_mark > logical_time AS hwm_ahead,
       backward_jumps = 0 AS no_backward_jumps, overflows = :overflows_before AS no_overflows, observes >= 1 AS observed
FROM hlculid_clock();

-- settings: only the configuration file can change them
SHOW hlculid.publisher_id;
SHOW hlculid.max_clock_skew;
SELECT name, context, unit, min_val, max_val, boot_val FROM pg_settings WHERE name LIKE 'hlculid.%' ORDER BY name;
SELECT err('SET hlculid.publisher_id = 5');
SELECT err('SET hlculid.max_clock_skew = 100000');
CREATE ROLE hlculid_ordinary LOGIN;
GRANT ALL ON TABLE events TO hlculid_ordinary;
SET ROLE hlculid_ordinary;
-- an ordinary role generates ids
INSERT INTO events (n) VALUES (1000);
SELECT hlculid_publisher(hlculid_generate()) AS publisher;
-- and cannot move the clock settings
SELECT err('SET hlculid.publisher_id = 5');
SELECT err('SET hlculid.max_clock_skew = 100000');
\set VERBOSITY sqlstate
ALTER SYSTEM SET hlculid.publisher_id = 5;
\set VERBOSITY default
RESET ROLE;
DROP TABLE events;
DROP ROLE hlculid_ordinary;
-- the largest batch (last: it carries the clock ahead, which counts as an overflow)
SELECT cardinality(hlculid_generate_n(65536)) AS max_batch;
