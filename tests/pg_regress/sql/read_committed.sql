-- One READ COMMITTED rule (0.6.0): the functions that take a horizon or a watermark, and the
-- readers that read below one, run one check (hlculid_require_read_committed): under REPEATABLE
-- READ or SERIALIZABLE one error, 0A000, naming the function called; READ UNCOMMITTED is READ
-- COMMITTED, as PostgreSQL runs it.
CREATE TABLE rc_events (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int);
INSERT INTO rc_events (n) VALUES (1), (2);
CREATE TEMP TABLE rc_calls (call text);
INSERT INTO rc_calls VALUES
  ('SELECT hlculid_horizon()'),
  ('SELECT hlculid_horizon_bigint()'),
  ('SELECT hlculid_horizon_catch_up()'),
  ('SELECT hlculid_watermark()'),
  ('SELECT hlculid_watermark(ARRAY[1])'),
  ('SELECT count(*) FROM hlculid_read(NULL::rc_events, NULL)'),
  ('SELECT count(*) FROM hlculid_read_watermark(NULL::rc_events, NULL)'),
  ('SELECT hlculid_cluster_horizon()'),
  ('SELECT hlculid_require_read_committed(''my_reader'')');
-- the error in full, once
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT err('SELECT hlculid_require_read_committed(''hlculid_read'')');
ROLLBACK;
-- every function: the same message and SQLSTATE, naming it
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT call, split_part(err(call), E'\n', 1) AS outcome FROM rc_calls;
ROLLBACK;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT call, split_part(err(call), E'\n', 1) AS outcome FROM rc_calls;
ROLLBACK;
-- READ UNCOMMITTED and READ COMMITTED: no isolation error (without Citus, the cluster horizon
-- says it needs Citus)
BEGIN ISOLATION LEVEL READ UNCOMMITTED;
SELECT current_setting('transaction_isolation');
SELECT call, split_part(err(call), E'\n', 1) AS outcome FROM rc_calls;
ROLLBACK;
BEGIN ISOLATION LEVEL READ COMMITTED;
SELECT call, split_part(err(call), E'\n', 1) AS outcome FROM rc_calls;
ROLLBACK;
-- the session's default counts as the transaction's level
SET default_transaction_isolation = 'repeatable read';
SELECT split_part(err('SELECT hlculid_watermark()'), E'\n', 1);
SET default_transaction_isolation = 'read uncommitted';
SELECT split_part(err('SELECT hlculid_watermark()'), E'\n', 1);
RESET default_transaction_isolation;
-- a NULL name still checks
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT split_part(err('SELECT hlculid_require_read_committed(NULL)'), E'\n', 1);
ROLLBACK;
SELECT err('SELECT hlculid_require_read_committed(NULL)') AS at_read_committed;
DROP TABLE rc_events;
