SELECT castsource::regtype, casttarget::regtype, castfunc::regproc, castcontext, castmethod
FROM pg_cast WHERE castsource = 'hlculid'::regtype OR casttarget = 'hlculid'::regtype ORDER BY 1::text, 2::text;
-- uuid: the same 16 bytes, in the same order
SELECT '017fc21c-5e7a-0000-000a-aaa111111111'::uuid::hlculid;
SELECT '017FC21C5E7A-0000-000A-AAA111111111'::hlculid::uuid;
SELECT count(*) FILTER (WHERE x::hlculid::uuid = x) AS round_trips FROM (SELECT gen_random_uuid() AS x FROM generate_series(1, 100)) s;
-- uuid -> hlculid is implicit, so comparing with a uuid works and keeps the hlculid side indexable
CREATE TABLE cu (id hlculid PRIMARY KEY);
INSERT INTO cu VALUES ('017FC21C5E7A-0000-000A-AAA111111111');
SELECT * FROM cu WHERE id = '017fc21c-5e7a-0000-000a-aaa111111111'::uuid;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM cu WHERE id = '017fc21c-5e7a-0000-000a-aaa111111111'::uuid;
RESET enable_seqscan;
-- hlculid -> uuid is for assignment, never for comparisons (no ambiguity)
CREATE TABLE cuu (u uuid);
INSERT INTO cuu SELECT id FROM cu;
SELECT u FROM cuu;
SELECT err($$SELECT uuid_extract_version('017FC21C5E7A-0000-000A-AAA111111111'::hlculid)$$) LIKE '42883:%' AS no_implicit_to_uuid;
-- bytea: exactly 16 bytes
SELECT '017FC21C5E7A-0000-000A-AAA111111111'::hlculid::bytea;
SELECT '\x017fc21c5e7a0000000aaaa111111111'::bytea::hlculid;
SELECT err($$SELECT '\x017fc21c5e7a0000000aaaa1111111'::bytea::hlculid$$);
SELECT err($$SELECT '\x017fc21c5e7a0000000aaaa11111111100'::bytea::hlculid$$);
SELECT err($$SELECT ''::bytea::hlculid$$);
-- text, both ways, through I/O
SELECT '017FC21C5E7A-0000-000A-AAA111111111'::hlculid::text, '01FZ11RQKT000002NAM48H248H'::text::hlculid;
-- timestamptz
SET timezone = 'UTC';
SET datestyle = 'ISO';
SELECT '017FC21C5E7A-0000-000A-AAA111111111'::hlculid::timestamptz;
DROP TABLE cu, cuu;
