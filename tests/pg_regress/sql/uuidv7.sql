-- The RFC 9562 version 7 uuid form of an id (0.3.0): [48-bit ms][ver 7][counter >> 4][var 10]
-- [counter & 0xF][publisher][top 42 random bits]
SET timezone = 'UTC';
SET datestyle = 'ISO';
-- known values (ms 0x017FC21C5E7A = 2022-03-25 17:25:13.466, counter 1, publisher 10), the ends
-- of the range, and one whose counter straddles the version and variant
SELECT id, hlculid_to_uuidv7(id) AS v7,
       substr(hlculid_to_uuidv7(id)::text, 15, 1) AS version,
       substr(hlculid_to_uuidv7(id)::text, 20, 1) IN ('8', '9', 'a', 'b') AS rfc_variant
FROM unnest(ARRAY['017FC21C5E7A-0001-000A-AAA333333333', '000000000001-ABCD-1234-FFFFFFFFFFFF',
                  '000000000000-0000-0000-000000000000', 'FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF']::hlculid[]) id;
-- back: time, counter and publisher exactly, the random bits without the lowest 6
SELECT v7, (hlculid_decode(hlculid_from_uuidv7(v7))).*, hlculid_from_uuidv7(v7)
FROM unnest(ARRAY['017fc21c-5e7a-7000-8400-2aaa8ccccccc', '00000000-0001-7abc-b448-d3ffffffffff']::uuid[]) v7;
-- NULL in, NULL out
SELECT hlculid_to_uuidv7(NULL) IS NULL AS to_null, hlculid_from_uuidv7(NULL) IS NULL AS from_null;
-- a uuid of another version or variant is refused
SELECT err('SELECT hlculid_from_uuidv7(''8f3c1f0e-6b1d-4a2b-9c3d-5e6f70819203'')');  -- random, version 4
SELECT err('SELECT hlculid_from_uuidv7(''8f3c1f0e-6b1d-11ef-9c3d-5e6f70819203'')');  -- version 1
SELECT err('SELECT hlculid_from_uuidv7(''018f3c1f-0e6b-7d4a-cc3d-5e6f70819203'')');  -- version 7, Microsoft variant
SELECT err('SELECT hlculid_from_uuidv7(''00000000-0000-0000-0000-000000000000'')');  -- nil
SELECT err('SELECT hlculid_from_uuidv7(''ffffffff-ffff-ffff-ffff-ffffffffffff'')');  -- max
-- an id's own bytes in a uuid column: the hint names the cast
SELECT err('SELECT hlculid_from_uuidv7(''017FC21C5E7A-0001-000A-AAA333333333''::hlculid::uuid)');
-- properties and volatility
SELECT proname, provolatile, proparallel, proisstrict, pg_get_function_arguments(oid) AS args,
       pg_get_function_result(oid) AS result
FROM pg_proc WHERE proname IN ('hlculid_to_uuidv7', 'hlculid_from_uuidv7') ORDER BY 1;
-- order over 1M generated ids: in the order of the ids, each uuid is above the one before (so
-- sorting the uuids gives the order of the ids), every one a version 7 uuid, and each reads back
-- as its id without the lowest 6 random bits
CREATE TEMP TABLE g AS SELECT hlculid_generate() AS id FROM generate_series(1, 1000000);
SELECT count(*) AS ids, count(*) FILTER (WHERE u <= prev) AS out_of_order,
       count(*) FILTER (WHERE substr(u::text, 15, 1) <> '7') AS not_version_7,
       count(*) FILTER (WHERE hlculid_from_uuidv7(u) <> hlculid_from_parts(hlculid_ts(id),
           hlculid_counter(id), hlculid_publisher(id), hlculid_random(id) & ~63::int8)) AS not_read_back
FROM (SELECT id, u, lag(u) OVER (ORDER BY id) AS prev
      FROM (SELECT id, hlculid_to_uuidv7(id) AS u FROM g) s) t;
DROP TABLE g;
-- ids with every field varying over few values (many ties): sorted by id, the uuids never go
-- down, and two are equal only where the ids differ in the 6 dropped random bits alone
CREATE TEMP TABLE f AS
SELECT hlculid_from_parts('2024-01-01+00'::timestamptz + (i % 3) * interval '1 ms', (i / 3) % 20,
                          (i / 60) % 3, ((i * 7919) % 300)::int8) AS id
FROM generate_series(1, 20000) i;
SELECT count(*) FILTER (WHERE u < prev) AS out_of_order,
       count(*) FILTER (WHERE u = prev AND id <> prev_id) AS ties,
       count(*) FILTER (WHERE u = prev AND (hlculid_ts(id), hlculid_counter(id), hlculid_publisher(id),
           hlculid_random(id) >> 6) IS DISTINCT FROM (hlculid_ts(prev_id), hlculid_counter(prev_id),
           hlculid_publisher(prev_id), hlculid_random(prev_id) >> 6)) AS wrong_ties
FROM (SELECT id, u, lag(u) OVER w AS prev, lag(id) OVER w AS prev_id
      FROM (SELECT id, hlculid_to_uuidv7(id) AS u FROM f) s WINDOW w AS (ORDER BY id)) t;
DROP TABLE f;
-- any version 7 uuid reads as an id, in the uuids' order, and makes the same uuid again: random
-- bytes given version 7 (the RFC variant is already there)
CREATE TEMP TABLE v AS
SELECT encode(set_byte(b, 6, (get_byte(b, 6) & 15) | 112), 'hex')::uuid AS u
FROM (SELECT uuid_send(gen_random_uuid()) AS b FROM generate_series(1, 100000)) s;
SELECT count(*) AS uuids, count(*) FILTER (WHERE id <= prev) AS out_of_order,
       count(*) FILTER (WHERE hlculid_to_uuidv7(id) <> u) AS not_the_same_uuid,
       count(*) FILTER (WHERE hlculid_ts(id) <> to_timestamp(ms / 1000) + (ms % 1000) * interval '1 ms') AS other_time
FROM (SELECT u, id, ms, lag(id) OVER (ORDER BY u) AS prev
      FROM (SELECT u, hlculid_from_uuidv7(u) AS id,
                   ('x' || substr(replace(u::text, '-', ''), 1, 12))::bit(48)::int8 AS ms FROM v) s) t;
DROP TABLE v;
