-- Who may see what holds the horizon back (0.5.0): hlculid_horizon_holds() shows other sessions'
-- pids and prepared transactions' xids with the ids they may have made, so, as pg_buffercache
-- does, it is revoked from PUBLIC and granted to pg_monitor (which the holders view needs too:
-- a view's functions run with the caller's rights). One source: the install script takes it
-- through src/horizons.rs, the 0.4.0 -> 0.5.0 upgrade script includes it. docs/security.md has
-- the grant sets for readers and publishers.
REVOKE EXECUTE ON FUNCTION hlculid_horizon_holds() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION hlculid_horizon_holds() TO pg_monitor;
GRANT SELECT ON hlculid.hlculid_horizon_holders TO pg_monitor;
