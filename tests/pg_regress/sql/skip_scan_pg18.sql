-- PostgreSQL 18: skip support lets a btree skip scan step through the leading column
SELECT p.amprocnum, p.amproc::regproc
FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily
WHERE f.opfname = 'hlculid_ops' AND f.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'btree')
  AND p.amproclefttype = 'hlculid'::regtype AND p.amprocrighttype = 'hlculid'::regtype ORDER BY 1;
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'hlculid_ops' AND opcmethod = (SELECT oid FROM pg_am WHERE amname = 'btree');
CREATE TABLE sk (k hlculid, n int);
INSERT INTO sk SELECT hlculid_from_parts('2024-01-01+00', 0, 0, i % 4), i FROM generate_series(1, 40000) i;
CREATE INDEX sk_idx ON sk (k, n);
VACUUM ANALYZE sk;
SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k FROM sk WHERE n = 1234;
SELECT k, n FROM sk WHERE n = 1234;
-- a skip scan: a few index descents (one per distinct leading value, plus the ends), not a full index scan
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) SELECT k FROM sk WHERE n = 1234;
SELECT count(*) FROM sk WHERE n BETWEEN 100 AND 199;
-- stepping past the ends of the domain
SELECT count(*) FROM sk WHERE k > 'FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFE' AND n = 1;
SELECT count(*) FROM sk WHERE k < '000000000000-0000-0000-000000000001' AND n = 1;
RESET enable_seqscan; RESET enable_bitmapscan;
DROP TABLE sk;
