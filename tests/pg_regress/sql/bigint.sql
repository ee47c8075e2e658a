-- bigint ids: [0][42-bit ms][11-bit counter][10-bit publisher] from the server's clock (0.3.0)
SET timezone = 'UTC';
SET datestyle = 'ISO';
-- increasing, positive, this server's publisher (42), the current time
CREATE TEMP TABLE b AS SELECT i, hlculid_generate_bigint() AS id FROM generate_series(1, 10000) i;
SELECT count(DISTINCT id) AS distinct_ids, bool_and(id > 0) AS positive,
       bool_and(hlculid_bigint_publisher(id) = 42) AS publisher_42,
       bool_and(hlculid_bigint_counter(id) BETWEEN 0 AND 2047) AS counter_fits,
       bool_and(abs(extract(epoch FROM hlculid_bigint_ts(id) - clock_timestamp())) < 60) AS time_now
FROM b;
SELECT count(*) AS out_of_order FROM (SELECT id, lag(id) OVER (ORDER BY i) AS prev FROM b) s WHERE prev >= id;
-- one clock for both widths: a bigint id sorts between the 128-bit ids made before and after it
SELECT hlculid_generate() AS w1 \gset
SELECT hlculid_generate_bigint() AS b1 \gset
SELECT hlculid_generate() AS w2 \gset
SELECT :'w1'::hlculid < hlculid_from_bigint(:b1) AND hlculid_from_bigint(:b1) < :'w2'::hlculid AS ordered_with_wide_ids;
-- batches: 5000 ids span three milliseconds' counters, increasing
SELECT count(*) AS n, count(DISTINCT x) AS distinct_ids, max(hlculid_bigint_counter(x)) <= 2047 AS counter_fits,
       bool_and(x > :b1) AS above_earlier
FROM unnest(hlculid_generate_bigint_n(5000)) x;
SELECT a = (SELECT array_agg(x ORDER BY x) FROM unnest(a) x) AS sorted
FROM (SELECT hlculid_generate_bigint_n(3000) a) s;
-- the one batch limit, enforced by the clock itself (its BadBatch refusal, 22023), for both
-- widths: refused with nothing taken; the largest batch is made
SELECT logical_time AS lt, counter AS lc FROM hlculid_clock() \gset
SELECT err('SELECT hlculid_generate_bigint_n(0)');
SELECT err('SELECT hlculid_generate_bigint_n(65537)');
SELECT err('SELECT hlculid_generate_bigint_n(-1)');
SELECT (logical_time, counter) = (:'lt'::timestamptz, :lc) AS nothing_taken FROM hlculid_clock();
SELECT cardinality(hlculid_generate_bigint_n(65536)) AS largest_bigint_batch, cardinality(hlculid_generate_n(65536)) AS largest_batch;
-- fields of a known id: 2022-03-25 17:25:13.466, counter 5, publisher 10
SELECT (x'017FC21C5E7A'::int8 << 21) | (5 << 10) | 10 AS known \gset
SELECT :known AS known, hlculid_bigint_ts(:known), hlculid_bigint_counter(:known), hlculid_bigint_publisher(:known);
SELECT (hlculid_bigint_decode(:known)).*;
SELECT * FROM hlculid_bigint_decode(:known);
SELECT hlculid_bigint_decode(NULL), * FROM hlculid_bigint_decode(NULL);
SELECT err('SELECT hlculid_bigint_decode(-1)');
SELECT count(*) AS rows,
       count(*) FILTER (WHERE d = (hlculid_bigint_ts(x), hlculid_bigint_counter(x), hlculid_bigint_publisher(x))) AS same_as_extractors
FROM (SELECT (i::bigint * 2305843009213693) % 9223372036854775807 x FROM generate_series(0, 2999) i) s,
     LATERAL hlculid_bigint_decode(x) d;
SELECT hlculid_from_bigint(:known), hlculid_to_bigint(hlculid_from_bigint(:known)) = :known AS round_trip;
-- bounds of a millisecond, for range scans; the last millisecond a bigint id holds
SELECT hlculid_bigint_min('2022-03-25 17:25:13.466+00') <= :known AND :known <= hlculid_bigint_max('2022-03-25 17:25:13.466+00') AS within,
       hlculid_bigint_max('2022-03-25 17:25:13.465+00') < :known AS before_is_below;
SELECT hlculid_bigint_min('1970-01-01 00:00:00+00'), hlculid_bigint_max('2109-05-15 07:35:11.103+00');
-- what does not fit
SELECT err('SELECT hlculid_bigint_min(''2109-05-15 07:35:11.104+00'')');
SELECT err('SELECT hlculid_bigint_max(''infinity'')');
SELECT err('SELECT hlculid_bigint_min(''1969-12-31 23:59:59.999+00'')');
SELECT err('SELECT hlculid_bigint_ts(-1)');
SELECT err('SELECT hlculid_from_bigint(-9223372036854775808)');
SELECT err('SELECT hlculid_to_bigint(''017FC21C5E7A-0800-000A-AAA111111111'')');
SELECT err('SELECT hlculid_to_bigint(''017FC21C5E7A-0000-0400-AAA111111111'')');
SELECT err('SELECT hlculid_to_bigint(hlculid_min(''2200-01-01''))');
-- the random bits are dropped one way
SELECT hlculid_to_bigint('017FC21C5E7A-0005-000A-AAA111111111') = :known AS random_dropped;
-- untyped literals still resolve to the 128-bit functions
SELECT hlculid_ts('017FC21C5E7A-0000-000A-AAA111111111');
-- a time window on a bigint key is an index range scan, estimated by the built-in estimators
-- (the end a second ahead: earlier tests' batches ran the clock a few milliseconds ahead)
CREATE TABLE bev (id bigint PRIMARY KEY DEFAULT hlculid_generate_bigint(), n int);
INSERT INTO bev (n) SELECT generate_series(1, 1000);
SELECT count(*) = 1000 AS all_in_window FROM bev
WHERE id >= hlculid_bigint_min(now() - interval '1 hour') AND id <= hlculid_bigint_max(clock_timestamp() + interval '1 second');
SET enable_seqscan = off;
SELECT * FROM plan('SELECT n FROM bev WHERE id >= hlculid_bigint_min(''2026-01-01'') AND id < hlculid_bigint_min(''2026-01-02'')');
RESET enable_seqscan;
DROP TABLE bev;
