-- PostgreSQL 18 reads the version 7 form with its own functions, and its uuidv7() values read as
-- ids in their order (0.3.0)
SET timezone = 'UTC';
-- 100k ids: 50k generated now, 50k anywhere in the 48-bit range of times (with the ends); each
-- one's form is version 7 to uuid_extract_version, with the id's time to uuid_extract_timestamp
CREATE TEMP TABLE i AS
SELECT hlculid_generate() AS id FROM generate_series(1, 50000)
UNION ALL
SELECT hlculid_from_parts('1970-01-01+00'::timestamptz + (random() * 281474976710655)::int8 * interval '1 ms',
                          (random() * 65535)::int, (random() * 65535)::int, (random() * 281474976710655)::int8)
FROM generate_series(1, 49998)
UNION ALL
SELECT unnest(ARRAY['000000000000-0000-0000-000000000000', 'FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF']::hlculid[]);
SELECT count(*) AS ids,
       count(*) FILTER (WHERE uuid_extract_version(hlculid_to_uuidv7(id)) IS DISTINCT FROM 7) AS not_version_7,
       count(*) FILTER (WHERE uuid_extract_timestamp(hlculid_to_uuidv7(id)) IS DISTINCT FROM hlculid_ts(id)) AS other_time
FROM i;
DROP TABLE i;
-- 100k uuidv7() values (one backend's, increasing; and shifted back and forth by up to 50 years)
-- read as ids in the same order, with the uuids' time, and make the same uuids again
CREATE TEMP TABLE v AS
SELECT uuidv7() AS u FROM generate_series(1, 50000)
UNION ALL
SELECT uuidv7((random() - 0.5) * interval '100 years') FROM generate_series(1, 50000);
SELECT count(*) AS uuids, count(*) FILTER (WHERE id <= prev) AS out_of_order,
       count(*) FILTER (WHERE hlculid_ts(id) <> uuid_extract_timestamp(u)) AS other_time,
       count(*) FILTER (WHERE hlculid_to_uuidv7(id) <> u) AS not_the_same_uuid
FROM (SELECT u, id, lag(id) OVER (ORDER BY u) AS prev
      FROM (SELECT u, hlculid_from_uuidv7(u) AS id FROM v) s) t;
DROP TABLE v;
