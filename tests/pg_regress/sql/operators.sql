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
FROM pg_operator WHERE oprleft = 'hlculid'::regtype ORDER BY oprname, oprright::regtype::text;
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
-- LEAKPROOF comparisons (0.4.0): under row-level security a user's `id = $1` or window on the key
-- is an index condition, as on a uuid key
SELECT p.oid::regprocedure AS function FROM pg_proc p
WHERE (p.proname ~ '^hlculid_(eq|ne|lt|le|gt|ge|cmp)$' OR p.proname ~ '_uuid$|^uuid_.*_hlculid$|_uuid_cmp$|^uuid_hlculid_cmp$')
  AND NOT p.proleakproof AND EXISTS (SELECT FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
    WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e' AND e.extname = 'hlculid');
CREATE TABLE rls_events (id hlculid PRIMARY KEY, tenant name NOT NULL DEFAULT current_user, body text);
INSERT INTO rls_events (id, tenant, body)
SELECT hlculid_from_parts('2026-01-01'::timestamptz + g * interval '1 second', 0, 1, g), 'someone_else', 'x'
FROM generate_series(1, 5000) g;
ANALYZE rls_events;
ALTER TABLE rls_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON rls_events USING (tenant = current_user);
CREATE ROLE hlculid_rls_reader;
GRANT SELECT ON rls_events TO hlculid_rls_reader;
SET ROLE hlculid_rls_reader;
SELECT plan($$SELECT * FROM rls_events WHERE id = '01A20D2C2A00-0000-0001-000000000064'$$);
SELECT plan($$SELECT * FROM rls_events WHERE id >= hlculid_min('2026-01-01 00:10+00') AND id < hlculid_min('2026-01-01 00:11+00')$$);
SELECT plan($$SELECT * FROM rls_events WHERE id = '01a20d2c-2a00-0000-0001-000000000064'::uuid$$);
SELECT plan($$SELECT * FROM rls_events WHERE id <@ tstzrange('2026-01-01 00:10+00', '2026-01-01 00:11+00')$$);
RESET ROLE;
DROP TABLE rls_events;
DROP ROLE hlculid_rls_reader;
