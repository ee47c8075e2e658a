-- hlculid_publish_horizon (0.4.0): this server's row, its publisher id and its horizon, the clock
-- first brought up to the wall clock (an idle publisher's horizon moves with time). Its own source,
-- as CREATE OR REPLACE, so that the install script (through src/horizon/published.rs) and the 0.4.0 -> 0.5.0
-- upgrade script (which moves it to pg_catalog and rewrites its body) share one text.
CREATE OR REPLACE FUNCTION hlculid_publish_horizon()
RETURNS pg_catalog.hlculid
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
    SELECT pg_catalog.hlculid_advance_horizon(c.publisher, pg_catalog.hlculid_horizon_catch_up())
    FROM pg_catalog.hlculid_clock() c;
$fn$;
