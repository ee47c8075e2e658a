-- The design's worked example: publishers A (10) and B (11), six events arriving out of order.
SET timezone = 'UTC';
SET datestyle = 'ISO';
CREATE TABLE example (name text, id hlculid PRIMARY KEY);
INSERT INTO example VALUES  -- arrival order: A3, B1, A1, A2, B2, A4
  ('A3', '017FC21C5E7B-0001-000A-AAA333333333'),
  ('B1', '017FC21C5E7B-0000-000B-BBB444444444'),
  ('A1', '017FC21C5E7A-0000-000A-AAA111111111'),
  ('A2', '017FC21C5E7B-0000-000A-AAA222222222'),
  ('B2', '017FC21C5E7C-0000-000B-BBB555555555'),
  ('A4', '017FC21C5E7D-0000-000A-AAA666666666');
SELECT name, id, (hlculid_decode(id)).* FROM example ORDER BY id;
SELECT string_agg(name, ' ' ORDER BY id) AS true_order FROM example;
SELECT name FROM example WHERE hlculid_publisher(id) = 10 ORDER BY id;
SELECT hlculid_ts(id) FROM example WHERE name = 'A1';
-- a time window as an index range scan
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT name FROM example
WHERE id >= hlculid_min('2022-03-25 17:25:13.467+00') AND id < hlculid_min('2022-03-25 17:25:13.469+00');
SELECT name FROM example
WHERE id >= hlculid_min('2022-03-25 17:25:13.467+00') AND id < hlculid_min('2022-03-25 17:25:13.469+00') ORDER BY id;
RESET enable_seqscan;
DROP TABLE example;
