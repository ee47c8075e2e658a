-- named consumers and the waits (0.6.0): the SQL surface one session sees, the messages and
-- SQLSTATEs of bad input. Concurrency (writers committing out of order, two sessions of one
-- consumer, wake-ups, cancels, other roles): tests/integration/test_consumers.py.
SET timezone = 'UTC';
\set VERBOSITY default
CREATE TABLE c_ev (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int);
CREATE TABLE c_other (id hlculid PRIMARY KEY DEFAULT hlculid_generate());
CREATE TABLE c_nokey (id hlculid);
INSERT INTO c_ev (n) SELECT g FROM generate_series(1, 5) g;
-- a consumer unknown so far starts at the start of the table; the position moves with the
-- transaction: a rollback gives the rows again
BEGIN;
SELECT n FROM hlculid_consume('c1', NULL::c_ev, 2);
ROLLBACK;
SELECT count(*) AS consumers FROM hlculid.hlculid_consumer_positions WHERE consumer = 'c1';
SELECT n FROM hlculid_consume('c1', NULL::c_ev, 2);
SELECT n FROM hlculid_consume('c1', NULL::c_ev);
SELECT n FROM hlculid_consume('c1', NULL::c_ev);
SELECT position = (SELECT max(id) FROM c_ev) AS at_the_end, relation, id_column, owner = current_user::regrole AS mine,
       max_attempts
FROM hlculid.hlculid_consumer_positions WHERE consumer = 'c1';
-- retries: due at once with a zero delay, first in the next call; the last attempt parks it
SELECT hlculid_consumer_create('c2', 'c_ev', max_attempts => 2);
SELECT n FROM hlculid_consume('c2', NULL::c_ev, 1);
SELECT hlculid_consume_retry('c2', (SELECT id FROM c_ev WHERE n = 1), '0 s', 'first failure') AS retried;
SELECT n FROM hlculid_consume('c2', NULL::c_ev, 2);
SELECT hlculid_consume_retry('c2', (SELECT id FROM c_ev WHERE n = 1), '0 s', 'second failure') AS retried;
SELECT consumer, relation, attempts, last_error FROM hlculid.hlculid_dead_letters;
SELECT consumer, pending_retries, dead_letters, lag >= '0' AS lag_known FROM hlculid.hlculid_consumers ORDER BY 1;
SELECT hlculid_dead_letter_requeue('c2') AS requeued;
SELECT n FROM hlculid_consume('c2', NULL::c_ev, 1);
SELECT hlculid_consumer_wait('c2', '0 s') AS more_waiting, hlculid_wait(NULL::c_ev, NULL, '0 s') AS any_row;
SELECT hlculid_wait(NULL::c_ev, (SELECT max(id) FROM c_ev), '10 ms') AS after_the_last;
-- starts: after an id, from a time, reset
SELECT hlculid_consumer_create('c3', 'c_ev', start_after => (SELECT id FROM c_ev WHERE n = 3));
SELECT n FROM hlculid_consume('c3', NULL::c_ev);
SELECT hlculid_consumer_create('c4', 'c_ev', start_at => now());
SELECT count(*) FROM hlculid_consume('c4', NULL::c_ev);
SELECT hlculid_consumer_reset('c4');
SELECT count(*) FROM hlculid_consume('c4', NULL::c_ev);
SELECT hlculid_consumer_drop('c4') AS dropped, hlculid_consumer_drop('c4') AS again;
-- bad input
SELECT err($q$SELECT hlculid_consumer_create('c1', 'c_ev')$q$);
SELECT err($q$SELECT hlculid_consumer_create('c5', 'c_ev', hlculid_min(now()), now())$q$);
SELECT err($q$SELECT hlculid_consumer_create('c5', 'c_ev', max_attempts => 0)$q$);
SELECT err($q$SELECT hlculid_consumer_create(NULL, 'c_ev')$q$);
SELECT err($q$SELECT hlculid_consumer_create('c5', 'c_nokey')$q$);
SELECT err($q$SELECT * FROM hlculid_consume('c1', NULL::c_other)$q$);
SELECT err($q$SELECT * FROM hlculid_consume('c1', 42)$q$);
SELECT err($q$SELECT * FROM hlculid_consume('c1', NULL::c_ev, 0)$q$);
SELECT err($q$SELECT * FROM hlculid_consume(NULL, NULL::c_ev)$q$);
SELECT err($q$SELECT hlculid_consume_retry('c1', NULL)$q$);
SELECT err($q$SELECT hlculid_consume_retry('c1', hlculid_min(now()), '-1 s')$q$);
SELECT err($q$SELECT hlculid_consume_retry('nobody', hlculid_min(now()))$q$);
SELECT err($q$SELECT hlculid_consumer_wait('nobody', '0 s')$q$);
SELECT err($q$SELECT hlculid_consumer_wait(NULL)$q$);
SELECT err($q$SELECT hlculid_consumer_wait('c1', NULL)$q$);
SELECT err($q$SELECT hlculid_wait(NULL::c_ev, NULL, '-1 s')$q$);
SELECT err($q$SELECT hlculid_wait(42, NULL, '0 s')$q$);
SELECT err($q$SELECT hlculid_wait(NULL::c_nokey, NULL, '0 s')$q$);
SELECT err($q$SELECT hlculid_consumer_reset('nobody')$q$);
SELECT err($q$SELECT hlculid_dead_letter_requeue('nobody')$q$);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT err($q$SELECT * FROM hlculid_consume('c1', NULL::c_ev)$q$);
ROLLBACK;
SELECT hlculid_consumer_drop('c1'), hlculid_consumer_drop('c2'), hlculid_consumer_drop('c3');
DROP TABLE c_ev, c_other, c_nokey;
