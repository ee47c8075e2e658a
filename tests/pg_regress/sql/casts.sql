SELECT castsource::regtype, casttarget::regtype, castfunc::regproc, castcontext, castmethod
FROM pg_cast WHERE castsource = 'hlculid'::regtype OR casttarget = 'hlculid'::regtype ORDER BY 1::text, 2::text;
-- uuid: the same 16 bytes, in the same order
SELECT '017fc21c-5e7a-0000-000a-aaa111111111'::uuid::hlculid;
SELECT '017FC21C5E7A-0000-000A-AAA111111111'::hlculid::uuid;
-- hlculid -> uuid -> hlculid keeps the value: 65536 consecutive ids of this server (publisher
-- 42: every counter value), and ids of explicit publishers below 32768 at every counter
SELECT count(*) FILTER (WHERE id::uuid::hlculid = id) AS round_trips, count(DISTINCT hlculid_counter(id)) AS counters
FROM unnest(hlculid_generate_n(65536)) id;
SELECT count(*) FILTER (WHERE id::uuid::hlculid = id) AS round_trips, count(*)
FROM (SELECT hlculid_from_parts('2026-01-01', c, p, 123456789) AS id
      FROM generate_series(0, 65535, 7) c, unnest(ARRAY[0, 1, 12345, 32767]) p) s;
-- A random uuid (version 4 with the RFC 9562 variant) is refused: read as an hlculid its time is
-- random, mostly centuries ahead, and it would become max(id)
CREATE FUNCTION cast_result(u uuid) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN u::hlculid::text;
EXCEPTION WHEN invalid_parameter_value THEN
  RETURN 'refused';
END $$;
SELECT cast_result(gen_random_uuid()) AS result, count(*) FROM generate_series(1, 1000) GROUP BY 1;
CREATE TABLE events (id hlculid PRIMARY KEY, note text);
SELECT err($$INSERT INTO events (id) VALUES ('8f3c1f0e-6b1d-4a2b-9c3d-5e6f70819203'::uuid)$$);
SELECT split_part(e, E'\n', 1) AS error, split_part(e, E'\n', 3) AS hint
FROM err($$INSERT INTO events (id) VALUES (gen_random_uuid())$$) e;
-- every way a uuid value reaches an hlculid: a default, INSERT ... SELECT, UPDATE, a parameter,
-- an explicit cast, a column's type change (with and without USING), a comparison
CREATE TABLE uuids (u uuid);
INSERT INTO uuids SELECT gen_random_uuid() FROM generate_series(1, 100);
CREATE TABLE events_d (id hlculid PRIMARY KEY DEFAULT gen_random_uuid(), note text);
PREPARE ins(uuid) AS INSERT INTO events (id) VALUES ($1);
SELECT split_part(err(q), E'\n', 1) AS error, q FROM unnest(ARRAY[
  $$INSERT INTO events_d (note) VALUES ('default')$$,
  $$INSERT INTO events (id) SELECT u FROM uuids$$,
  $$INSERT INTO events SELECT '017FC21C5E7A-0000-000A-AAA111111111'; UPDATE events SET id = (SELECT u FROM uuids LIMIT 1)$$,
  $$EXECUTE ins('8f3c1f0e-6b1d-4a2b-9c3d-5e6f70819203')$$,
  $$SELECT gen_random_uuid()::hlculid$$,
  $$ALTER TABLE uuids ALTER COLUMN u TYPE hlculid$$,
  $$ALTER TABLE uuids ALTER COLUMN u TYPE hlculid USING u::hlculid$$,
  $$SELECT count(*) FROM events WHERE id = '8f3c1f0e-6b1d-4a2b-9c3d-5e6f70819203'::uuid$$
]) q;
SELECT (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM events_d) AS events_d,
       (SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'uuids'::regclass AND attname = 'u') AS uuids_u;
-- exactly version 4 with the RFC variant: as an hlculid, counter 0x4000-0x4FFF (16384-20479)
-- with publisher 0x8000-0xBFFF (32768-49151); the neighbours on each side convert
SELECT p AS publisher, string_agg(format('%s:%s', c, cast_result(hlculid_from_parts('2026-01-01', c, p, 0)::uuid)), ' ' ORDER BY c) AS "counter:result"
FROM unnest(ARRAY[32767, 32768, 40000, 49151, 49152, 65535]) p, unnest(ARRAY[16383, 16384, 20479, 20480]) c
GROUP BY p ORDER BY p;
-- uuids of the other versions and variants keep converting (their bytes as they are)
SELECT v AS kind, cast_result(u::uuid) AS result FROM (VALUES
  ('nil', '00000000-0000-0000-0000-000000000000'),
  ('max', 'ffffffff-ffff-ffff-ffff-ffffffffffff'),
  ('version 1', 'c232ab00-9414-11ec-b3c8-9f6bdeced846'),
  ('version 3', '5df41881-3aed-3515-88a7-2f4a814cf09e'),
  ('version 5', '2ed6657d-e927-568b-95e1-2665a8aea6a2'),
  ('version 6', '1ec9414c-232a-6b00-b3c8-9f6bdeced846'),
  ('version 7', '017f22e2-79b0-7cc3-98c4-dc0c0c07398f'),
  ('version 8', '2489e9ad-2ee2-8e00-8ec9-32d5f69181c0'),
  ('version 4, NCS variant', '8f3c1f0e-6b1d-4a2b-7c3d-5e6f70819203'),
  ('version 4, Microsoft variant', '8f3c1f0e-6b1d-4a2b-cc3d-5e6f70819203'),
  ('version 4, RFC variant', '8f3c1f0e-6b1d-4a2b-9c3d-5e6f70819203')
) t(v, u);
-- the bytes of a random uuid on purpose (test data): through bytea, which reads any value, or
-- in hlculid's own text forms; the uuid's own spelling is refused like the cast (0.4.0), COPY
-- and pg_input_is_valid included
SELECT uuid_send('8f3c1f0e-6b1d-4a2b-9c3d-5e6f70819203')::hlculid AS via_bytea,
       replace('8f3c1f0e-6b1d-4a2b-9c3d-5e6f70819203', '-', '')::hlculid AS via_hex_text;
SELECT err($$SELECT '8f3c1f0e-6b1d-4a2b-9c3d-5e6f70819203'::hlculid$$);
SELECT err($$SELECT gen_random_uuid()::text::hlculid$$, false) ~ '^22023: cannot read a random uuid' AS text_of_gen_random_uuid;
CREATE TEMP TABLE copied (id hlculid);
SELECT err($$COPY copied FROM PROGRAM 'echo 8f3c1f0e-6b1d-4a2b-9c3d-5e6f70819203'$$, false) ~ '^22023' AS copy_refuses;
SELECT '8f3c1f0e-6b1d-4a2b-cc3d-5e6f70819203'::hlculid AS version_4_other_variant;
-- uuid -> hlculid is implicit, so comparing with a uuid works and keeps the hlculid side indexable
CREATE TABLE cu (id hlculid PRIMARY KEY);
INSERT INTO cu VALUES ('017FC21C5E7A-0000-000A-AAA111111111');
SELECT * FROM cu WHERE id = '017fc21c-5e7a-0000-000a-aaa111111111'::uuid;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM cu WHERE id = '017fc21c-5e7a-0000-000a-aaa111111111'::uuid;
-- a uuid parameter in a generic plan, and a join with a uuid column, use the index too
PREPARE by_uuid(uuid) AS SELECT * FROM cu WHERE id = $1;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE by_uuid('017fc21c-5e7a-0000-000a-aaa111111111');
EXECUTE by_uuid('017fc21c-5e7a-0000-000a-aaa111111111');
RESET plan_cache_mode;
CREATE TABLE cu_refs (u uuid);
INSERT INTO cu_refs VALUES ('017fc21c-5e7a-0000-000a-aaa111111111');
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT p AS plan FROM plan($$SELECT cu.id FROM cu_refs JOIN cu ON cu.id = cu_refs.u$$) p WHERE p !~ 'Disabled'; -- PG18 marks disabled nodes
SELECT cu.id FROM cu_refs JOIN cu ON cu.id = cu_refs.u;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_seqscan;
DEALLOCATE by_uuid;
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
-- string-typed parameters (what pgjdbc's setString and many ORMs send) insert and update
CREATE TABLE cs (id hlculid PRIMARY KEY, note text);
PREPARE ins_varchar(varchar, text) AS INSERT INTO cs VALUES ($1, $2);
PREPARE ins_text(text, text) AS INSERT INTO cs VALUES ($1, $2);
EXECUTE ins_varchar('017FC21C5E7A-0000-000A-AAA111111111', 'canonical, varchar');
EXECUTE ins_text(lower(hlculid_to_ulid('017FC21C5E7A-0003-000A-AAA111111111')), 'ULID, text');
EXECUTE ins_text('017fc21c5e7a0001000aaaa111111111', '32 hex digits, text');
PREPARE upd(text, text) AS UPDATE cs SET id = $1 WHERE note = $2;
EXECUTE upd('017fc21c-5e7a-0002-000a-aaa111111111', '32 hex digits, text');
SELECT id, note FROM cs ORDER BY id;
-- a bad string parameter fails as the input function does (22P02), and inserts nothing
SELECT err($$EXECUTE ins_varchar('not-an-id', 'bad')$$);
SELECT err($$EXECUTE ins_text('017FC21C5E7A-0000-000A-AAA11111111Z', 'bad')$$);
SELECT count(*) AS rows_after_bad_parameters FROM cs;
-- comparisons stay unambiguous: an unknown literal is an hlculid, a typed one says which
SELECT note FROM cs WHERE id = '017FC21C5E7A-0000-000A-AAA111111111';
PREPARE find(hlculid) AS SELECT note FROM cs WHERE id = $1;
EXECUTE find('017FC21C5E7A-0000-000A-AAA111111111');
SELECT note FROM cs WHERE id = $$01FZ11RQKT000002NAM48H248H$$::text::hlculid;
SELECT note FROM cs WHERE '01FZ11RQKT000002NAM48H248H' = id OR id IN ('017FC21C5E7A-0002-000A-AAA111111111', 'ffffffffffffffffffffffffffffffff') ORDER BY id;
SET enable_seqscan = off;
SELECT * FROM plan($$SELECT note FROM cs WHERE id = '017FC21C5E7A-0000-000A-AAA111111111'$$);
RESET enable_seqscan;
-- text is not cast implicitly: comparing with a text value is an error, not a guess
SELECT err($$SELECT 1 FROM cs WHERE id = 'x'::text$$) LIKE '42883:%' AS no_implicit_from_text;
SELECT err($$SELECT 1 FROM cs WHERE id = 'x'::varchar$$) LIKE '42883:%' AS no_implicit_from_varchar;
DEALLOCATE ins_varchar; DEALLOCATE ins_text; DEALLOCATE upd; DEALLOCATE find;
DEALLOCATE ins;
DROP TABLE cu, cuu, cs, cu_refs, events, events_d, uuids;
DROP FUNCTION cast_result(uuid);
-- uuid -> hlculid is assignment-only (0.4.0): queries on plain uuid columns resolve as they do
-- without the extension (no max(uuid): 42883, as in a database without hlculid), while an
-- hlculid column compared with a uuid keeps its index through the cross-type operators
CREATE TEMP TABLE plain_uuids (u uuid);
INSERT INTO plain_uuids VALUES ('8f3c1f0e-6b1d-4a2b-9c3d-5e6f70819203'), ('017fc21c-5e7a-0000-000a-aaa111111111');
SELECT err('SELECT max(u) FROM plain_uuids', false);
SELECT err('SELECT min(u) FROM plain_uuids', false);
SELECT err('SELECT coalesce(u, hlculid_generate()) FROM plain_uuids', false);
SELECT err('SELECT u FROM plain_uuids UNION ALL SELECT hlculid_generate()', false);
SELECT err('SELECT CASE WHEN true THEN u ELSE hlculid_generate() END FROM plain_uuids', false);
-- comparisons across the two types are the bytes' order, either way round, and never raise
SELECT count(*) FILTER (WHERE u = '017FC21C5E7A-0000-000A-AAA111111111'::hlculid) AS eq,
       count(*) FILTER (WHERE '017FC21C5E7A-0000-000A-AAA111111111'::hlculid = u) AS eq_commuted,
       count(*) FILTER (WHERE u < '017FC21C5E7A-0000-000A-AAA111111112'::hlculid) AS lt,
       count(*) FILTER (WHERE '017FC21C5E7A-0000-000A-AAA111111112'::hlculid > u) AS gt_commuted,
       count(*) FILTER (WHERE u <> '017FC21C5E7A-0000-000A-AAA111111111'::hlculid) AS ne
FROM plain_uuids;
SELECT count(*) AS in_subquery FROM plain_uuids WHERE u IN (SELECT '017FC21C5E7A-0000-000A-AAA111111111'::hlculid);
SELECT bool_and((a::hlculid < b::hlculid) = (a < b::hlculid) AND (a::hlculid <= b::hlculid) = (a <= b::hlculid)
                AND (a::hlculid = b::hlculid) = (a = b::hlculid) AND (a::hlculid >= b::hlculid) = (a >= b::hlculid)
                AND (a::hlculid > b::hlculid) = (a > b::hlculid) AND (a::hlculid <> b::hlculid) = (a <> b::hlculid)
                AND sign(hlculid_uuid_cmp(a::hlculid, b)) = sign(uuid_hlculid_cmp(b, a::hlculid)) * -1)
       AS cross_type_agrees
FROM (SELECT ('0' || lpad(to_hex(i % 7), 7, '0') || '-0000-0000-0000-000000000000')::uuid a,
             ('0' || lpad(to_hex(i % 5), 7, '0') || '-0000-0000-0000-000000000000')::uuid b
      FROM generate_series(1, 50) i) s;
-- assignment: an insert of a uuid still converts (and refuses a random one)
CREATE TEMP TABLE from_uuid (id hlculid);
INSERT INTO from_uuid SELECT u FROM plain_uuids WHERE u::text LIKE '017f%';
SELECT id FROM from_uuid;
SELECT err('INSERT INTO from_uuid SELECT u FROM plain_uuids', false);
