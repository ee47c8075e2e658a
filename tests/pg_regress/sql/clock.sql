-- The run-ahead bound, observe of the server's own ids, recovery floors (0.3.0).
SET timezone = 'UTC';
-- the bound is hlculid.max_clock_skew (500 ms by default); nothing has waited at it
SELECT max_run_ahead_ms, waits FROM hlculid_clock_bound();
-- once the bound's time has passed with nothing generated, the clock cannot be ahead of the wall
-- clock: run_ahead_ms is exactly 0 (a value it clamps at 0 from below, so only this can fail),
-- and the clock's own times agree
SELECT pg_sleep(max_run_ahead_ms / 1000.0 + 0.1) FROM hlculid_clock_bound();
SELECT run_ahead_ms AS run_ahead_after_the_bound FROM hlculid_clock_bound();
SELECT logical_time <= wall_time AS logical_not_ahead, drift_ms <= 0 AS drift_not_ahead FROM hlculid_clock();
-- (the bound itself is tested with a frozen wall clock: tests/integration/test_clock_bound.py)
-- observing the server's own newest id always succeeds and changes nothing
SELECT hlculid_generate() AS own \gset
SELECT logical_time AS lt, counter AS lc FROM hlculid_clock() \gset
SELECT hlculid_observe(:'own');
SELECT (logical_time, counter) = (:'lt'::timestamptz, :lc) AS unchanged FROM hlculid_clock();
-- recovery refuses a floor further ahead than the skew bound, and leaves the clock alone (nothing
-- else generates here: not a millisecond or a counter value moves)
SELECT logical_time AS lt, counter AS lc FROM hlculid_clock() \gset
SELECT err(format('SELECT hlculid_clock_recover(%L)',
  hlculid_from_parts('3813-06-01 00:00:00+00', 0, 1, 0))) ~ '^22023: hlculid_clock_recover floor 34E8581AAC00-0000-0001-000000000000 is [0-9]+ ms ahead of the local clock\nDETAIL: A floor further ahead than hlculid.max_clock_skew \(500 ms\).*\nHINT: .*allow_future => true' AS refused;
SELECT err(format('SELECT hlculid_clock_recover(%L, false)',
  hlculid_from_parts('3813-06-01 00:00:00+00', 0, 1, 0))) ~ '^22023: ' AS refused_explicit_false;
SELECT (logical_time, counter) = (:'lt'::timestamptz, :lc) AS unchanged FROM hlculid_clock();
-- a plausible floor is taken by either form; both are superuser-only
SELECT hlculid_clock_recover(hlculid_generate()) > now() AS recovered;
SELECT hlculid_clock_recover(hlculid_generate(), allow_future => true) > now() AS recovered_allowing;
SELECT p.oid::regprocedure, has_function_privilege('public', p.oid, 'EXECUTE') AS public_may_execute
FROM pg_proc p WHERE proname = 'hlculid_clock_recover' ORDER BY 1::text;
-- hlculid_generate_at keeps this backend's state: not run in parallel workers
SELECT proname, proparallel FROM pg_proc WHERE proname IN ('hlculid_generate_at', 'hlculid_clock_bound') ORDER BY 1;
