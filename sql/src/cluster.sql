-- Citus (0.5.0): readers of tables that Citus spreads over many nodes. Each node's horizon covers
-- the ids its own clock made; the cluster horizon is the smallest of them, once every
-- distributed transaction that may still show an id below it has ended: kept by a background
-- worker since 0.6.0 (src/horizon/cluster_worker.rs), what it waits for listed here, live. Citus'
-- functions are called at run time only (they are in pg_catalog when Citus is installed);
-- without Citus hlculid_cluster_pending() is an error and hlculid_citus_table() is false. One
-- source for the install script (through src/horizon/cluster.rs) and the upgrade scripts from
-- 0.4.0 and 0.5.0 (hence CREATE OR REPLACE, since 0.6.0).

-- Whether Citus manages the table (distributed, reference or Citus local).
CREATE OR REPLACE FUNCTION pg_catalog.hlculid_citus_table(tbl regclass)
RETURNS bool
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    managed bool := false;
BEGIN
    IF pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
        EXECUTE 'SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition WHERE logicalrelid OPERATOR(pg_catalog.=) $1)'
            INTO managed USING $1;
    END IF;
    RETURN managed;
END
$fn$;

-- What may still show an id on some node: the distributed transactions running on any node
-- (Citus keeps a transaction's id until every node answered its COMMIT PREPARED) and the Citus
-- prepared transactions left on any node (a COMMIT PREPARED that failed, until recovery). A gid
-- is text any role picks: only gids of the exact form Citus gives its own count, and each node's
-- come back as an array, never a string split again at spaces (0.6.0).
CREATE OR REPLACE FUNCTION pg_catalog.hlculid_cluster_pending()
RETURNS text[]
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    own_node int4;
    own_number int8;
    hidden int8;
    running text[];
    nodes int4[];
    gids text[];
    unreachable text;
    pending text[];
BEGIN
    IF pg_catalog.to_regprocedure('pg_catalog.run_command_on_all_nodes(text,boolean,boolean)') IS NULL THEN
        RAISE EXCEPTION 'hlculid_cluster_pending() needs Citus'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Without Citus no distributed transaction is pending: hlculid.hlculid_horizon_holders shows what holds this server''s horizon.';
    END IF;
    SELECT c.initiator_node_identifier, c.transaction_number INTO own_node, own_number
    FROM pg_catalog.get_current_transaction_id() c;
    -- the distributed transactions of every node, in one round trip
    SELECT count(*) FILTER (WHERE t.transaction_number IS NULL),
           pg_catalog.array_agg('transaction ' || t.initiator_node_identifier || ':' || t.transaction_number)
               FILTER (WHERE t.transaction_number <> 0
                         AND (t.initiator_node_identifier, t.transaction_number) IS DISTINCT FROM (own_node, own_number))
    INTO hidden, running
    FROM pg_catalog.get_global_active_transactions() t;
    IF hidden > 0 THEN
        RAISE EXCEPTION 'hlculid_cluster_horizon() cannot see other roles'' distributed transactions'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Grant pg_monitor to the reading role (on every node), as for hlculid.hlculid_horizon_holders.';
    END IF;
    SELECT pg_catalog.array_agg(r.nodeid), pg_catalog.array_agg(r.result),
           string_agg(r.nodeid || ': ' || r.result, '; ') FILTER (WHERE NOT r.success)
    INTO nodes, gids, unreachable
    FROM pg_catalog.run_command_on_all_nodes(
             $c$SELECT COALESCE(pg_catalog.array_agg(gid), '{}')::pg_catalog.text
                FROM pg_catalog.pg_prepared_xacts
               WHERE gid OPERATOR(pg_catalog.~) '^citus_[0-9]+_[0-9]+_[0-9]+_[0-9]+$'$c$) r;
    IF unreachable IS NOT NULL THEN
        RAISE EXCEPTION 'hlculid_cluster_horizon() could not reach every node'
            USING ERRCODE = 'connection_failure', DETAIL = unreachable,
                  HINT = 'The cluster horizon needs every node: an unreachable one may still show ids below it.';
    END IF;
    SELECT pg_catalog.array_agg(DISTINCT x ORDER BY x) INTO pending FROM (
        SELECT pg_catalog.unnest(running) AS x
        UNION ALL
        SELECT 'prepared ' || n.nodeid || ':' || g
        FROM unnest(nodes, gids) n(nodeid, result),  -- ROWS FROM syntax: no qualified form
             pg_catalog.unnest(n.result::pg_catalog.text[]) g) s;
    RETURN coalesce(pending, '{}');
END
$fn$;

COMMENT ON FUNCTION pg_catalog.hlculid_citus_table(pg_catalog.regclass) IS 'whether Citus manages the table (distributed, reference or Citus local); false without Citus';
COMMENT ON FUNCTION pg_catalog.hlculid_cluster_pending() IS 'the distributed transactions running and the Citus prepared transactions on any node: what hlculid_cluster_horizon() waits for';
