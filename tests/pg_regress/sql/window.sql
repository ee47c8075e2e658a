-- Time windows: id <@ tstzrange (0.3.0)
SET timezone = 'UTC';
SET datestyle = 'ISO';
-- semantics: an id's time is the start of its millisecond
SELECT r, hlculid_from_parts('2026-10-15 12:00:00.000+00', 0, 1, 0) <@ r::tstzrange AS at_noon,
       hlculid_from_parts('2026-10-15 12:59:59.999+00', 65535, 1, 0) <@ r::tstzrange AS last_ms,
       hlculid_from_parts('2026-10-15 13:00:00.000+00', 0, 1, 0) <@ r::tstzrange AS at_one
FROM (VALUES ('[2026-10-15 12:00, 2026-10-15 13:00)'), ('(2026-10-15 12:00, 2026-10-15 13:00]'),
             ('[2026-10-15 12:00, 2026-10-15 13:00]'), ('(2026-10-15 12:00, 2026-10-15 13:00)'),
             ('[2026-10-15 11:59:59.9995, 2026-10-15 12:59:59.9995)'), ('empty'),
             ('(,2026-10-15 12:00]'), ('[2026-10-15 13:00,)'), ('(,)'),
             ('[-infinity, infinity]'), ('[infinity, infinity]'), ('[-infinity, -infinity]'),
             ('[1900-01-01, 1970-01-01)'), ('[10889-08-03, 20000-01-01)')) v(r);
SELECT hlculid_from_parts('1970-01-01 00:00:00+00', 0, 0, 0) <@ '[1900-01-01, 1970-01-01]'::tstzrange AS epoch_in;
SELECT NULL::hlculid <@ '(,)'::tstzrange AS null_id, hlculid_generate() <@ NULL::tstzrange AS null_range;
-- the bounds the index conditions use
SELECT hlculid_range_min('[2026-10-15 12:00, 2026-10-15 13:00)'), hlculid_range_max('[2026-10-15 12:00, 2026-10-15 13:00)');
SELECT hlculid_range_min('(2026-10-15 12:00, 2026-10-15 13:00]'), hlculid_range_max('(2026-10-15 12:00, 2026-10-15 13:00]');
SELECT hlculid_range_min('empty'), hlculid_range_max('empty');
SELECT hlculid_range_min('(,)'), hlculid_range_max('(,)');
-- a bad range is PostgreSQL's own input error, nothing of ours
SELECT err('SELECT hlculid_generate() <@ ''[2026-01-02, 2026-01-01)''::tstzrange', false);

-- 30 days of events, one every 26 seconds: 100,000 rows
CREATE TABLE win (id hlculid PRIMARY KEY, ts timestamptz NOT NULL, n int);
INSERT INTO win SELECT hlculid_from_parts(t, 0, 1, i), t, i
FROM (SELECT i, timestamptz '2026-10-01 00:00+00' + i * interval '25.92 seconds' AS t FROM generate_series(0, 99999) i) s;
CREATE INDEX win_ts ON win (ts);
CREATE INDEX win_brin ON win USING brin (id);
ANALYZE win;
-- estimates within 2x of the actual rows for windows from a minute to a week, on the key through
-- <@ (the same windows through the explicit bounds are estimated by PostgreSQL's built-in
-- estimators: see the README)
CREATE FUNCTION est(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
  RETURN (j->0->'Plan'->>'Plan Rows')::float8;
END $$;
SELECT w, actual, est(format('SELECT * FROM win WHERE id <@ tstzrange(%L, %L)', lo, lo + w)) / actual BETWEEN 0.5 AND 2 AS id_within_2x,
       est(format('SELECT * FROM win WHERE ts >= %L AND ts < %L', lo, lo + w)) / actual BETWEEN 0.5 AND 2 AS ts_within_2x
FROM (VALUES (interval '1 minute'), (interval '10 minutes'), (interval '1 hour'), (interval '1 day'), (interval '7 days')) v(w),
     LATERAL (SELECT timestamptz '2026-10-15 12:00:17+00' AS lo) l,
     LATERAL (SELECT count(*) AS actual FROM win WHERE ts >= lo AND ts < lo + w) a;
-- nothing in the window, NULL fraction, a window outside the data
SELECT est('SELECT * FROM win WHERE id <@ ''empty''::tstzrange') AS empty_rows,
       est('SELECT * FROM win WHERE id <@ ''[2030-01-01, 2030-02-01)''::tstzrange') AS outside_rows;
-- the window becomes index conditions on the key: btree, BRIN, constant and now()-relative
SET enable_seqscan = off;
SELECT * FROM plan('SELECT n FROM win WHERE id <@ tstzrange(''2026-10-15 12:00'', ''2026-10-15 13:00'')');
SELECT * FROM plan('SELECT n FROM win WHERE id <@ tstzrange(now() - interval ''1 hour'', now())');
SELECT * FROM plan('SELECT n FROM win WHERE id <@ ''[2026-10-15 12:00, 2026-10-15 13:00]''::tstzrange ORDER BY id');
-- the commutator (0.5.0): tstzrange @> id is the same test, estimated and indexed the same way
SELECT * FROM plan('SELECT n FROM win WHERE tstzrange(''2026-10-15 12:00'', ''2026-10-15 13:00'') @> id');
SELECT * FROM plan('SELECT n FROM win WHERE tstzrange(now() - interval ''1 hour'', now()) @> id');
SELECT w, est(format('SELECT * FROM win WHERE tstzrange(%L, %L) @> id', lo, lo + w))
        = est(format('SELECT * FROM win WHERE id <@ tstzrange(%L, %L)', lo, lo + w)) AS same_estimate,
       (SELECT count(*) FROM win WHERE tstzrange(lo, lo + w) @> id)
        = (SELECT count(*) FROM win WHERE id <@ tstzrange(lo, lo + w)) AS same_rows
FROM (VALUES (interval '1 minute'), (interval '1 day')) v(w),
     LATERAL (SELECT timestamptz '2026-10-15 12:00:17+00' AS lo) l;
SELECT o.oprname, c.oprname AS commutator FROM pg_operator o JOIN pg_operator c ON c.oid = o.oprcom
WHERE o.oprright = 'hlculid'::regtype AND o.oprleft = 'tstzrange'::regtype
   OR o.oprleft = 'hlculid'::regtype AND o.oprright = 'tstzrange'::regtype ORDER BY 1;
SELECT '[2026-10-15 12:00, 2026-10-15 13:00)'::tstzrange @> hlculid_from_parts('2026-10-15 12:59:59.999+00', 65535, 1, 0) AS inside,
       '[2026-10-15 12:00, 2026-10-15 13:00)'::tstzrange @> hlculid_from_parts('2026-10-15 13:00:00+00', 0, 1, 0) AS outside,
       NULL::tstzrange @> hlculid_generate() AS null_range;
SET enable_indexscan = off;
SET enable_bitmapscan = on;

ALTER TABLE win DROP CONSTRAINT win_pkey;
SELECT * FROM plan('SELECT n FROM win WHERE id <@ tstzrange(''2026-10-15 12:00'', ''2026-10-15 13:00'')');
RESET enable_indexscan;
RESET enable_bitmapscan;
RESET enable_seqscan;
-- and the same rows either way
SELECT (SELECT count(*) FROM win WHERE id <@ tstzrange('2026-10-15 12:00', '2026-10-15 13:00'))
     = (SELECT count(*) FROM win WHERE ts >= '2026-10-15 12:00' AND ts < '2026-10-15 13:00') AS same_rows;
DROP TABLE win;
DROP FUNCTION est(text);
-- partition pruning uses the partition key's own operators: a partitioned table is pruned by the
-- explicit bounds; with both, the window is pruned and estimated right
CREATE TABLE pwin (id hlculid PRIMARY KEY, n int) PARTITION BY RANGE (id);
SELECT count(*) AS partitions FROM hlculid_create_partitions('pwin', '2026-10-01', '2026-10-04', '1 day');
SELECT * FROM plan('SELECT n FROM pwin WHERE id <@ tstzrange(''2026-10-02 12:00'', ''2026-10-02 13:00'')
  AND id >= hlculid_min(''2026-10-02 12:00'') AND id < hlculid_min(''2026-10-02 13:00'')');
SELECT count(*) FILTER (WHERE p ~ 'pwin_p') AS scanned_with_window_only
FROM plan('SELECT n FROM pwin WHERE id <@ tstzrange(''2026-10-02 12:00'', ''2026-10-02 13:00'')') p;
DROP TABLE pwin;
-- An error evaluating the range while planning (the estimator folds now() as PostgreSQL's own
-- range estimator does, which raises the same error for a timestamptz column) is PostgreSQL's
-- error as PostgreSQL raised it, with nothing of Rust: no panic text, no backtrace in DETAIL,
-- though this server runs with RUST_BACKTRACE=1 (SQLsmith; scripts/regress.sh). On a partitioned
-- table, a plain one with an index on the id (the planner support function too), both operators.
CREATE TABLE perr (id hlculid, ts timestamptz) PARTITION BY RANGE (id);
SELECT count(*) AS partitions FROM hlculid_create_partitions('perr', '2026-10-01', '2026-10-03', '1 day');
CREATE TABLE werr (id hlculid PRIMARY KEY, ts timestamptz);
SELECT * FROM perr WHERE id <@ tstzrange(NULL, now(), NULL::text);
SELECT * FROM werr WHERE id <@ tstzrange(NULL, now(), NULL::text);
SELECT * FROM werr WHERE tstzrange(NULL, now(), NULL::text) @> id;
EXPLAIN (COSTS OFF) SELECT * FROM werr WHERE id <@ tstzrange(NULL, now(), NULL::text);
SELECT * FROM werr WHERE ts <@ tstzrange(NULL, now(), NULL::text);
SELECT err('SELECT * FROM perr WHERE id <@ tstzrange(NULL, now(), NULL::text)');
SELECT err('SELECT * FROM werr WHERE id <@ tstzrange(NULL, now(), NULL::text)');
SELECT err('SELECT * FROM werr WHERE ts <@ tstzrange(NULL, now(), NULL::text)');
-- a range PostgreSQL can build is fine
SELECT count(*) FROM perr WHERE id <@ tstzrange(NULL, now(), '[)');
SELECT count(*) FROM werr WHERE id <@ tstzrange(NULL, now(), '[)');
DROP TABLE perr, werr;
