-- The type is a fixed 16-byte value laid out like uuid.
SELECT typname, typlen, typbyval, typalign, typstorage, typcategory
FROM pg_type WHERE typname IN ('hlculid', 'uuid') ORDER BY typname;
SELECT pg_column_size('017FC21C5E7A-0000-000A-AAA111111111'::hlculid) AS size;
CREATE TABLE t_size (h hlculid, u uuid);
INSERT INTO t_size SELECT uuid_send(x)::hlculid, x FROM (SELECT gen_random_uuid() AS x FROM generate_series(1, 1000)) s;
SELECT pg_column_size(h) AS h_size, pg_column_size(u) AS u_size FROM t_size LIMIT 1;
SELECT sum(pg_column_size(h)) = sum(pg_column_size(u)) AS same_total FROM t_size;
-- arrays and composites work
SELECT ARRAY['017FC21C5E7A-0000-000A-AAA111111111', '017FC21C5E7B-0000-000A-AAA222222222']::hlculid[];
SELECT ROW('017FC21C5E7A-0000-000A-AAA111111111'::hlculid, 1);
DROP TABLE t_size;
