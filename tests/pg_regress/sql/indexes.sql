SET timezone = 'UTC';
SET datestyle = 'ISO';
-- opclasses and their support functions; amvalidate checks them the way PostgreSQL does
SELECT am.amname, opc.opcname, opc.opcdefault, amvalidate(opc.oid)
FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod
WHERE opc.opcintype = 'hlculid'::regtype ORDER BY 1, 2;
SELECT am.amname, p.amprocnum, p.amproc::regproc
FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily JOIN pg_am am ON am.oid = f.opfmethod
WHERE p.amproclefttype = 'hlculid'::regtype AND p.amprocnum <= 5 ORDER BY 1, 2;

-- An event table: 20,000 ids over 20,000 seconds from 2024-01-01, inserted in shuffled order.
CREATE TABLE ev (id hlculid, n int);
INSERT INTO ev
SELECT hlculid_from_parts('2024-01-01+00'::timestamptz + i * interval '1 second', 0, i % 3, i), i
FROM generate_series(1, 20000) i ORDER BY md5(i::text);
CREATE UNIQUE INDEX ev_btree ON ev (id);
CREATE INDEX ev_brin ON ev USING brin (id) WITH (pages_per_range = 8);
ANALYZE ev;

-- btree: equality, range and ordered scans are index scans
SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM ev WHERE id = '018CC251F400-0000-0000-000000000000';
EXPLAIN (COSTS OFF) SELECT n FROM ev
WHERE id >= hlculid_min('2024-01-01 01:00:00+00') AND id < hlculid_min('2024-01-01 02:00:00+00');
SELECT count(*), min(n), max(n) FROM ev
WHERE id >= hlculid_min('2024-01-01 01:00:00+00') AND id < hlculid_min('2024-01-01 02:00:00+00');
EXPLAIN (COSTS OFF) SELECT id FROM ev ORDER BY id DESC LIMIT 3;
SELECT id, n FROM ev ORDER BY id DESC LIMIT 3;
SELECT plan('SELECT min(id), max(id) FROM ev');
SELECT min(id), max(id) FROM ev;
-- the index and a sequential scan agree
SELECT count(*) FROM ev WHERE id < hlculid_min('2024-01-01 00:10:00+00');
RESET enable_seqscan; RESET enable_bitmapscan;
SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM ev WHERE id < hlculid_min('2024-01-01 00:10:00+00');
RESET enable_indexscan; RESET enable_bitmapscan;

-- hash index
SET enable_seqscan = off;
DROP INDEX ev_btree;
CREATE INDEX ev_hash ON ev USING hash (id);
EXPLAIN (COSTS OFF) SELECT n FROM ev WHERE id = hlculid_from_parts('2024-01-01 00:00:05+00', 0, 2, 5);
SELECT n FROM ev WHERE id = hlculid_from_parts('2024-01-01 00:00:05+00', 0, 2, 5);
DROP INDEX ev_hash;

-- BRIN on a time-ordered key answers a time window, and stays tiny
EXPLAIN (COSTS OFF) SELECT count(*) FROM ev
WHERE id >= hlculid_min('2024-01-01 01:00:00+00') AND id < hlculid_min('2024-01-01 02:00:00+00');
SELECT count(*) FROM ev
WHERE id >= hlculid_min('2024-01-01 01:00:00+00') AND id < hlculid_min('2024-01-01 02:00:00+00');
RESET enable_seqscan;

-- hash and uuid_hash agree (so hash partitions of uuid data map the same way)
SELECT count(*) FILTER (WHERE hlculid_hash(x) = uuid_hash(x::uuid)
                          AND hlculid_hash_extended(x, 0) = uuid_hash_extended(x::uuid, 0)
                          AND hlculid_hash_extended(x, 42) = uuid_hash_extended(x::uuid, 42)
                          AND (hlculid_hash_extended(x, 0) & x'FFFFFFFF'::bigint) = (hlculid_hash(x)::bigint & x'FFFFFFFF'::bigint))
FROM (SELECT uuid_send(gen_random_uuid())::hlculid AS x FROM generate_series(1, 1000)) s;

-- hash partitioning (needs extended hash)
CREATE TABLE evp (id hlculid PRIMARY KEY, n int) PARTITION BY HASH (id);
CREATE TABLE evp0 PARTITION OF evp FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE evp1 PARTITION OF evp FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO evp SELECT id, n FROM ev;
SELECT count(*) > 0 AND count(*) < 20000 AS split FROM evp0;
SELECT (SELECT count(*) FROM evp0) + (SELECT count(*) FROM evp1) AS total;
EXPLAIN (COSTS OFF) SELECT n FROM evp WHERE id = hlculid_from_parts('2024-01-01 00:00:05+00', 0, 2, 5);
SELECT n FROM evp WHERE id = hlculid_from_parts('2024-01-01 00:00:05+00', 0, 2, 5);

-- joins: merge join and hash join give the same answer
CREATE TABLE ev2 AS SELECT id, n * 2 AS m FROM ev WHERE n % 5 = 0;
ANALYZE ev2;
SET enable_hashjoin = off; SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ev JOIN ev2 USING (id);
SELECT count(*), sum(m - 2 * n) FROM ev JOIN ev2 USING (id);
RESET enable_hashjoin; SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ev JOIN ev2 USING (id);
SELECT count(*), sum(m - 2 * n) FROM ev JOIN ev2 USING (id);
RESET enable_mergejoin; RESET enable_nestloop;
-- hash aggregation and sort-based grouping
SET enable_hashagg = on;
SELECT count(*) FROM (SELECT DISTINCT id FROM (SELECT id FROM ev UNION ALL SELECT id FROM ev2) u) d;
SET enable_hashagg = off;
SELECT count(*) FROM (SELECT DISTINCT id FROM (SELECT id FROM ev UNION ALL SELECT id FROM ev2) u) d;
RESET enable_hashagg;

-- a large sort uses sortsupport and gives the same order as uuid
CREATE TABLE big AS SELECT uuid_send(gen_random_uuid())::hlculid AS id FROM generate_series(1, 50000);
SELECT count(*) AS agree FROM (
  SELECT id, lag(id) OVER (ORDER BY id) AS prev, lag(id::uuid) OVER (ORDER BY id::uuid) AS prev_uuid FROM big) s
WHERE prev IS NOT DISTINCT FROM uuid_send(prev_uuid)::hlculid;
DROP TABLE big, ev, ev2, evp;
