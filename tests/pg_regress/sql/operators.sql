CREATE TABLE ops (a hlculid, b hlculid);
INSERT INTO ops VALUES
  ('017FC21C5E7A-0000-000A-AAA111111111', '017FC21C5E7A-0000-000A-AAA111111111'),
  ('017FC21C5E7A-0000-000A-AAA111111111', '017FC21C5E7B-0000-000A-AAA222222222'),
  ('017FC21C5E7B-0000-000B-BBB444444444', '017FC21C5E7B-0000-000A-AAA222222222'),
  ('000000000000-0000-0000-000000000000', 'FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF');
SELECT a, b, a = b AS eq, a <> b AS ne, a < b AS lt, a <= b AS le, a > b AS gt, a >= b AS ge,
       hlculid_cmp(a, b) AS cmp, hlculid_smaller(a, b), hlculid_larger(a, b)
FROM ops;
-- operators carry commutators, negators, estimators, HASHES and MERGES
SELECT oprname, oprcom::regoperator, oprnegate::regoperator, oprrest, oprjoin, oprcanhash, oprcanmerge
FROM pg_operator WHERE oprleft = 'hlculid'::regtype ORDER BY oprname;
-- min and max aggregates
SELECT min(a), max(b) FROM ops;
SELECT min(x), max(x) FROM (VALUES (NULL::hlculid)) t(x);
-- order is field order: time, then counter, then publisher, then random
SELECT x FROM (VALUES
  ('017FC21C5E7B-0000-000B-000000000000'::hlculid),
  ('017FC21C5E7B-0001-0000-000000000000'),
  ('017FC21C5E7B-0000-000A-FFFFFFFFFFFF'),
  ('017FC21C5E7A-FFFF-FFFF-FFFFFFFFFFFF'),
  ('017FC21C5E7B-0000-000B-000000000001')) t(x)
ORDER BY x;
-- value order equals uuid order and canonical-text order for random values
SELECT count(*) AS agree FROM (
  SELECT row_number() OVER (ORDER BY x) AS by_id,
         row_number() OVER (ORDER BY x::uuid) AS by_uuid,
         row_number() OVER (ORDER BY x::text COLLATE "C") AS by_text
  FROM (SELECT uuid_send(gen_random_uuid())::hlculid AS x FROM generate_series(1, 2000)) s) r
WHERE by_id = by_uuid AND by_id = by_text;
DROP TABLE ops;
