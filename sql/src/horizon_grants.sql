-- Who may see what holds the horizon back (0.5.0): hlculid_horizon_holds() shows other sessions'
-- pids and prepared transactions' xids with the ids they may have made, so, as pg_buffercache
-- does, it is revoked from PUBLIC and granted to pg_monitor (which the holders view needs too:
-- a view's functions run with the caller's rights). One source: the install script takes it
-- through src/horizon/published.rs, the 0.4.0 -> 0.5.0 upgrade script includes it. docs/security.md has
-- the grant sets for readers and publishers.
REVOKE EXECUTE ON FUNCTION hlculid_horizon_holds() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION hlculid_horizon_holds() TO pg_monitor;
GRANT SELECT ON hlculid.hlculid_horizon_holders TO pg_monitor;
-- Who may write hlculid.hlculid_horizons (0.5.0): no one but through hlculid_advance_horizon, a
-- SECURITY DEFINER function that keeps a row within hlculid.max_clock_skew of the clock and never
-- lowers it. A role with UPDATE on the table could set a row to the largest id and freeze every
-- watermark through it for good. No role but the table's owner keeps INSERT, UPDATE, DELETE or
-- TRUNCATE on it, PUBLIC included, whatever granted them (a default privilege, or 0.4.0's
-- docs/security.md, which told publishers to take INSERT and UPDATE); the function is granted to
-- the publishing roles (docs/security.md), and to no one by default.
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON hlculid.hlculid_horizons FROM PUBLIC;
DO $writers$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT DISTINCT a.grantee
        FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a
        WHERE c.oid OPERATOR(pg_catalog.=) 'hlculid.hlculid_horizons'::pg_catalog.regclass
          AND a.grantee OPERATOR(pg_catalog.<>) c.relowner
          AND a.grantee OPERATOR(pg_catalog.<>) 0::pg_catalog.oid
          AND a.privilege_type OPERATOR(pg_catalog.=) ANY
              (ARRAY['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']::pg_catalog.text[])
    LOOP
        EXECUTE pg_catalog.format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON hlculid.hlculid_horizons FROM %I CASCADE',
                                  pg_catalog.pg_get_userbyid(r.grantee));
    END LOOP;
END
$writers$;
REVOKE EXECUTE ON FUNCTION hlculid_advance_horizon(int4, pg_catalog.hlculid) FROM PUBLIC;
