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

-- What on this node may still show an id below a horizon read before it (0.6.0; the cluster
-- horizon's worker runs it on every node each round, hlculid_cluster_pending() on every node
-- once): one row for each backend here in a distributed transaction (Citus keeps a
-- transaction's number on its initiator until every node answered its COMMIT PREPARED), then
-- one for each Citus prepared transaction here (its part prepared, the rows hidden until COMMIT
-- PREPARED or recovery). Read in that order: a part that prepares between the two reads is
-- found by the second. Both keyed by the distributed transaction's number, which Citus' gids
-- carry, so that a part listed while it runs and then while it is prepared is one item (numbers
-- of two initiators may merge: waited for longer, never less). Every distributed transaction
-- counts, one that only reads too: a part on another node that made ids may have ended early
-- (killed, timed out) while its initiator goes on to write them elsewhere, and only the
-- initiator's row is left to show it. A gid is text any role picks: only gids of the exact form
-- Citus gives its own (citus_<group>_<pid>_<transaction>_<connection>) count. item NULL: a
-- transaction hidden from the caller (without pg_monitor); gid: the prepared transaction's.
CREATE OR REPLACE FUNCTION pg_catalog.hlculid_cluster_pending_here(OUT item text, OUT gid text)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF pg_catalog.to_regprocedure('pg_catalog.get_all_active_transactions()') IS NULL THEN
        RAISE EXCEPTION 'hlculid_cluster_pending_here() needs Citus'
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    -- static: PL/pgSQL keeps its plan for the session (the worker's connections run it every
    -- round), and resolves Citus' function only when it runs
    -- this database's only: another database's transactions write none of its tables, and
    -- any role may prepare a transaction with a Citus-like gid there
    RETURN QUERY
        SELECT t.transaction_number::pg_catalog.text, NULL::pg_catalog.text
          FROM pg_catalog.get_all_active_transactions() t
         WHERE t.transaction_number IS NULL
            OR (t.transaction_number OPERATOR(pg_catalog.<>) 0
                AND (t.datid IS NULL
                     OR t.datid OPERATOR(pg_catalog.=) (SELECT d.oid FROM pg_catalog.pg_database d
                                                         WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())))
        UNION ALL
        -- the number: the gid's fourth part (no backslash in any literal here: a session with
        -- standard_conforming_strings off, which a database owner may set, reads them otherwise)
        SELECT pg_catalog.split_part(p.gid, '_', 4), p.gid
          FROM pg_catalog.pg_prepared_xacts p
         WHERE p.gid OPERATOR(pg_catalog.~) '^citus_[0-9]+_[0-9]+_[0-9]+_[0-9]+$'
           AND p.database OPERATOR(pg_catalog.=) pg_catalog.current_database();
END
$fn$;

-- hlculid_cluster_pending_here() of every node, live: what a cluster horizon taken now would
-- wait for, as 'transaction NUMBER' and 'prepared NODE:GID' (each node's items come back as an
-- array, never a string split again at spaces: a gid may hold any text).
CREATE OR REPLACE FUNCTION pg_catalog.hlculid_cluster_pending()
RETURNS text[]
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    own_number int8;
    nodes int4[];
    results text[];
    unreachable text;
    pending text[];
BEGIN
    IF pg_catalog.to_regprocedure('pg_catalog.run_command_on_all_nodes(text,boolean,boolean)') IS NULL THEN
        RAISE EXCEPTION 'hlculid_cluster_pending() needs Citus'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Without Citus no distributed transaction is pending: hlculid.hlculid_horizon_holders shows what holds this server''s horizon.';
    END IF;
    SELECT c.transaction_number INTO own_number FROM pg_catalog.get_current_transaction_id() c;
    SELECT pg_catalog.array_agg(r.nodeid), pg_catalog.array_agg(r.result),
           string_agg(r.nodeid || ': ' || r.result, '; ') FILTER (WHERE NOT r.success)
    INTO nodes, results, unreachable
    FROM pg_catalog.run_command_on_all_nodes(
             $c$SELECT COALESCE(pg_catalog.array_agg(CASE WHEN p.item IS NULL THEN 'hidden'
                                                          WHEN p.gid IS NULL THEN 'transaction ' OPERATOR(pg_catalog.||) p.item
                                                          ELSE 'prepared ' OPERATOR(pg_catalog.||) p.gid END), '{}')::pg_catalog.text
                FROM pg_catalog.hlculid_cluster_pending_here() p$c$) r;
    IF unreachable IS NOT NULL THEN
        RAISE EXCEPTION 'hlculid_cluster_horizon() could not reach every node'
            USING ERRCODE = 'connection_failure', DETAIL = unreachable,
                  HINT = 'The cluster horizon needs every node: an unreachable one may still show ids below it.';
    END IF;
    SELECT pg_catalog.array_agg(DISTINCT x ORDER BY x) INTO pending FROM (
        SELECT CASE WHEN i LIKE 'prepared %' THEN 'prepared ' || n.nodeid || ':' || substr(i, 10) ELSE i END AS x
        FROM unnest(nodes, results) n(nodeid, result),  -- ROWS FROM syntax: no qualified form
             pg_catalog.unnest(n.result::pg_catalog.text[]) i
        WHERE i IS DISTINCT FROM 'transaction ' || own_number) s;
    IF 'hidden' = ANY (pending) THEN
        RAISE EXCEPTION 'hlculid_cluster_horizon() cannot see other roles'' distributed transactions'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Grant pg_monitor to the reading role (on every node), as for hlculid.hlculid_horizon_holders.';
    END IF;
    RETURN coalesce(pending, '{}');
END
$fn$;

COMMENT ON FUNCTION pg_catalog.hlculid_citus_table(pg_catalog.regclass) IS 'whether Citus manages the table (distributed, reference or Citus local); false without Citus';
COMMENT ON FUNCTION pg_catalog.hlculid_cluster_pending() IS 'the distributed transactions running and the Citus prepared transactions on any node: what hlculid_cluster_horizon() waits for';
COMMENT ON FUNCTION pg_catalog.hlculid_cluster_pending_here() IS 'on Citus: what on this node may still show an id below a horizon read before (distributed transactions running here, Citus prepared transactions), keyed by distributed transaction number; the cluster horizon''s worker reads it on every node each round';
