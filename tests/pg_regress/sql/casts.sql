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
DROP TABLE cu, cuu, cs;
