-- transaction-grouped ids: hlculid_generate_tx(), hlculid_tx(id), hlculid_tx_offset(id) (0.3.0)
SET timezone = 'UTC';
SET datestyle = 'ISO';
CREATE TEMP TABLE made (seq serial, grp text, id hlculid);
-- one transaction: one clock value (time and counter), this server's publisher, the same 16
-- random bits, offsets 1, 2, 3 ... in the order the ids were made, across statements
BEGIN;
INSERT INTO made (grp, id) VALUES ('a', hlculid_generate_tx());
INSERT INTO made (grp, id) SELECT 'a', hlculid_generate_tx() FROM generate_series(1, 999);
INSERT INTO made (grp, id) VALUES ('a', hlculid_generate_tx());
COMMIT;
SELECT count(*) AS n, count(DISTINCT id) AS distinct_ids,
       count(DISTINCT hlculid_tx(id)) AS groups,
       count(DISTINCT (hlculid_ts(id), hlculid_counter(id))) AS clock_values,
       bool_and(hlculid_publisher(id) = 42) AS publisher_42,
       count(DISTINCT hlculid_random(id) >> 32) AS random_parts,
       bool_and(hlculid_tx_offset(id) = seq) AS offset_is_position,
       bool_and(abs(extract(epoch FROM hlculid_ts(id) - clock_timestamp())) < 60) AS time_now
FROM made WHERE grp = 'a';
SELECT count(*) AS out_of_order FROM (SELECT id, lag(id) OVER (ORDER BY seq) AS prev FROM made) s WHERE prev >= id;
-- the transaction's own id: offset 0, just below its first id
SELECT bool_and(hlculid_tx(id) < id) AS tx_below_every_id,
       min(id) > (SELECT hlculid_tx(min(id)) FROM made WHERE grp = 'a') AS first_id_above_tx,
       bool_and(hlculid_tx_offset(hlculid_tx(id)) = 0) AS tx_offset_0
FROM made WHERE grp = 'a';
-- the next transaction is a new group, sorting after the whole first one; outside an explicit
-- transaction block every statement is a transaction of its own
INSERT INTO made (grp, id) VALUES ('b', hlculid_generate_tx());
INSERT INTO made (grp, id) VALUES ('c', hlculid_generate_tx()), ('c', hlculid_generate_tx());
SELECT grp, count(*) AS n, min(hlculid_tx_offset(id)) AS first_offset, max(hlculid_tx_offset(id)) AS last_offset,
       count(DISTINCT hlculid_tx(id)) AS groups
FROM made GROUP BY grp ORDER BY grp;
SELECT (SELECT max(id) FROM made WHERE grp = 'a') < (SELECT hlculid_tx(min(id)) FROM made WHERE grp = 'b') AS b_after_a,
       (SELECT max(id) FROM made WHERE grp = 'b') < (SELECT hlculid_tx(min(id)) FROM made WHERE grp = 'c') AS c_after_b;
-- savepoints: a rolled-back savepoint keeps the group and the count (offset 2 is never issued
-- again), a released one too
TRUNCATE made;
BEGIN;
INSERT INTO made (grp, id) VALUES ('s', hlculid_generate_tx());
SAVEPOINT one;
INSERT INTO made (grp, id) VALUES ('s', hlculid_generate_tx());
ROLLBACK TO SAVEPOINT one;
INSERT INTO made (grp, id) VALUES ('s', hlculid_generate_tx());
SAVEPOINT two;
INSERT INTO made (grp, id) VALUES ('s', hlculid_generate_tx());
RELEASE SAVEPOINT two;
SAVEPOINT three;
SELECT 1 / 0;
ROLLBACK TO SAVEPOINT three;
INSERT INTO made (grp, id) VALUES ('s', hlculid_generate_tx());
COMMIT;
SELECT array_agg(hlculid_tx_offset(id) ORDER BY seq) AS offsets, count(DISTINCT hlculid_tx(id)) AS groups
FROM made;
-- a savepoint rolled back before the first id was kept: the group begun inside it stays
TRUNCATE made;
BEGIN;
SAVEPOINT one;
INSERT INTO made (grp, id) VALUES ('f', hlculid_generate_tx());
ROLLBACK TO SAVEPOINT one;
INSERT INTO made (grp, id) VALUES ('f', hlculid_generate_tx());
SELECT hlculid_generate_tx() AS in_block \gset
COMMIT;
SELECT hlculid_tx_offset(id) AS offset, hlculid_tx(id) = hlculid_tx(:'in_block') AS same_group,
       hlculid_tx_offset(:'in_block') AS offset_of_next
FROM made;
-- abort: the next transaction starts a new group, after the aborted one's ids
TRUNCATE made;
BEGIN;
SELECT hlculid_generate_tx() AS aborted \gset
ROLLBACK;
BEGIN;
SELECT hlculid_generate_tx() AS failed \gset
SELECT 1 / 0;
ROLLBACK;
SELECT hlculid_generate_tx() AS next \gset
SELECT hlculid_tx_offset(:'next') AS next_offset,
       hlculid_tx(:'next') > :'failed'::hlculid AND :'failed'::hlculid > :'aborted'::hlculid AS new_groups_in_order;
-- groups are placed by their first id: an id hlculid_generate() makes in between sorts after
-- every later id of the group, and the next group after it
BEGIN;
SELECT hlculid_generate_tx() AS g1 \gset
SELECT hlculid_generate() AS plain \gset
SELECT hlculid_generate_tx() AS g2 \gset
COMMIT;
SELECT hlculid_generate_tx() AS g3 \gset
SELECT :'g1'::hlculid < :'g2'::hlculid AS g1_g2, :'g2'::hlculid < :'plain'::hlculid AS group_before_plain,
       :'plain'::hlculid < :'g3'::hlculid AS next_group_after_plain;
-- a function running many statements in one transaction
CREATE FUNCTION pg_temp.three() RETURNS hlculid[] LANGUAGE plpgsql AS $$
DECLARE r hlculid[];
BEGIN
  r := r || hlculid_generate_tx();
  r := r || hlculid_generate_tx();
  r := r || hlculid_generate_tx();
  RETURN r;
END $$;
SELECT array_agg(hlculid_tx_offset(x)) AS offsets, count(DISTINCT hlculid_tx(x)) AS groups
FROM unnest(pg_temp.three()) x;
-- any id: hlculid_tx clears its low 32 bits, hlculid_tx_offset reads them (for an id not made by
-- hlculid_generate_tx they are random bits, and the result means nothing)
SELECT hlculid_tx('017FC21C5E7A-0000-000A-AAA111111111'), hlculid_tx_offset('017FC21C5E7A-0000-000A-AAA111111111');
SELECT hlculid_tx('FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF'), hlculid_tx_offset('FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF');
SELECT hlculid_tx('000000000000-0000-0000-000000000000'), hlculid_tx_offset('000000000000-0000-0000-000000000000');
SELECT hlculid_tx(NULL) IS NULL AS tx_null, hlculid_tx_offset(NULL) IS NULL AS offset_null;
-- reading a group: by its transaction id, or as the range [tx, the next transaction id)
CREATE TEMP TABLE outbox (id hlculid PRIMARY KEY DEFAULT hlculid_generate_tx(), n int);
BEGIN;
INSERT INTO outbox (n) SELECT generate_series(1, 3);
COMMIT;
BEGIN;
INSERT INTO outbox (n) SELECT generate_series(4, 5);
COMMIT;
SELECT min(hlculid_tx(id)) AS first_tx FROM outbox \gset
SELECT array_agg(n ORDER BY id) AS by_tx FROM outbox WHERE hlculid_tx(id) = :'first_tx';
SELECT array_agg(n ORDER BY id) AS by_range FROM outbox
WHERE id >= :'first_tx' AND id < (SELECT min(hlculid_tx(id)) FROM outbox WHERE hlculid_tx(id) > :'first_tx');
SELECT array_agg(n ORDER BY id) AS relay_order FROM outbox;
-- PARALLEL RESTRICTED (the group is the backend's), VOLATILE; the readers IMMUTABLE
SELECT proname, provolatile, proparallel FROM pg_proc
WHERE proname IN ('hlculid_generate_tx', 'hlculid_tx', 'hlculid_tx_offset') ORDER BY proname;
