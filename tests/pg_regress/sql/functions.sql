SET timezone = 'UTC';
SET datestyle = 'ISO';
SELECT hlculid_ts(x), hlculid_counter(x), hlculid_publisher(x), hlculid_random(x), to_hex(hlculid_random(x))
FROM (VALUES ('017FC21C5E7A-0001-000A-AAA333333333'::hlculid)) t(x);
SELECT (hlculid_decode('017FC21C5E7A-0001-000A-AAA333333333')).*;
SELECT * FROM hlculid_decode('FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF');
SELECT * FROM hlculid_decode('000000000000-0000-0000-000000000000');
-- decode is native (0.4.0): the same record in every calling form, NULL for NULL, and equal to
-- the extractors on many rows of one call site (its record template is reused)
SELECT hlculid_decode(NULL), (hlculid_decode(NULL)).ts IS NULL AS null_field;
SELECT * FROM hlculid_decode(NULL);
SELECT x, d.* FROM (VALUES ('017FC21C5E7A-0001-000A-AAA333333333'::hlculid), (NULL),
    ('FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF')) t(x) LEFT JOIN LATERAL hlculid_decode(x) d ON true;
SELECT hlculid_decode('017FC21C5E7A-0001-000A-AAA333333333'),
       pg_typeof(hlculid_decode('017FC21C5E7A-0001-000A-AAA333333333'));
SELECT count(*) AS rows,
       count(*) FILTER (WHERE d = (hlculid_ts(x), hlculid_counter(x), hlculid_publisher(x), hlculid_random(x))) AS same_as_extractors,
       count(*) FILTER (WHERE (hlculid_decode(x)).random = hlculid_random(x)) AS same_in_select_list
FROM (SELECT hlculid_from_parts('2001-01-01+00'::timestamptz + i * interval '1 day 1.001 s', i % 65536, (i * 7) % 65536,
        (i::bigint * 104729) % 281474976710656) x FROM generate_series(0, 2999) i) s, LATERAL hlculid_decode(x) d;
SELECT proname, l.lanname, prosrc FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE proname IN ('hlculid_decode', 'hlculid_bigint_decode') ORDER BY 1;
-- hlculid_ts is IMMUTABLE and the same instant whatever the session time zone
SELECT provolatile FROM pg_proc WHERE proname = 'hlculid_ts';
SET timezone = 'America/New_York';
SELECT hlculid_ts('017FC21C5E7A-0001-000A-AAA333333333'),
       hlculid_ts('017FC21C5E7A-0001-000A-AAA333333333') = '2022-03-25 17:25:13.466+00' AS same_instant;
SET timezone = 'UTC';
-- from_parts builds exactly the fields given, truncating the time to the millisecond
SELECT hlculid_from_parts('2022-03-25 17:25:13.466789+00', 1, 10, x'AAA333333333'::bigint);
SELECT hlculid_from_parts('1970-01-01 00:00:00+00', 0, 0, 0);
SELECT hlculid_from_parts('10889-08-02 05:31:50.655+00', 65535, 65535, 281474976710655);
SELECT hlculid_decode(hlculid_from_parts(ts, c, p, r)) = (date_trunc('milliseconds', ts), c, p, r) AS round_trip
FROM (VALUES ('2001-02-03 04:05:06.789+00'::timestamptz, 7, 65535, 0::bigint), (now(), 0, 1, 12345)) t(ts, c, p, r);
-- each part out of range: 22003 naming the part
SELECT err('SELECT hlculid_from_parts(now(), 65536, 0, 0)');
SELECT err('SELECT hlculid_from_parts(now(), -1, 0, 0)');
SELECT err('SELECT hlculid_from_parts(now(), 0, 65536, 0)');
SELECT err('SELECT hlculid_from_parts(now(), 0, -5, 0)');
SELECT err('SELECT hlculid_from_parts(now(), 0, 0, 281474976710656)');
SELECT err('SELECT hlculid_from_parts(now(), 0, 0, -1)');
SELECT err($$SELECT hlculid_from_parts('1969-12-31 23:59:59.999+00', 0, 0, 0)$$);
SELECT err($$SELECT hlculid_from_parts('10889-08-02 05:31:50.656+00', 0, 0, 0)$$);
SELECT err($$SELECT hlculid_from_parts('infinity', 0, 0, 0)$$);
-- min/max of a millisecond
SELECT hlculid_min('2022-03-25 17:25:13.466+00'), hlculid_max('2022-03-25 17:25:13.466999+00');
SELECT hlculid_min('1970-01-01+00'), hlculid_max('10889-08-02 05:31:50.655+00');
SELECT hlculid_max(t) < hlculid_min(t + interval '1 millisecond') AS adjacent,
       hlculid_min(t) <= hlculid_from_parts(t, 5, 5, 5) AND hlculid_from_parts(t, 5, 5, 5) <= hlculid_max(t) AS inside
FROM (VALUES ('2024-06-01 12:00:00.123+00'::timestamptz)) v(t);
SELECT err($$SELECT hlculid_min('1969-12-31 23:59:59+00')$$);
SELECT err($$SELECT hlculid_max('20000-01-01+00')$$);
SELECT err($$SELECT hlculid_min('-infinity')$$);
-- NULL in, NULL out
SELECT hlculid_ts(NULL), hlculid_publisher(NULL), hlculid_min(NULL), hlculid_from_parts(NULL, 0, 0, 0);
-- every function is marked as it behaves
SELECT proname, provolatile, proparallel, proisstrict
FROM pg_proc WHERE proname LIKE 'hlculid%' AND proname NOT IN ('hlculid_in', 'hlculid_out', 'hlculid_recv', 'hlculid_send', 'hlculid_skipsupport')
ORDER BY proname;
