-- Citus (0.5.0): readers of tables that Citus spreads over many nodes. Each node's horizon covers
-- the ids its own clock made; the cluster horizon is the smallest of them, once every
-- distributed transaction that may still show an id below it has ended. Citus' functions are
-- called at run time only (they are in pg_catalog when Citus is installed); without Citus the
-- cluster horizon is an error and hlculid_citus_table() is false. One source for the install
-- script (through src/horizon/cluster.rs) and the upgrade scripts from 0.4.0 and 0.5.0 (hence
-- CREATE OR REPLACE, since 0.6.0).

-- Whether Citus manages the table (distributed, reference or Citus local).
CREATE OR REPLACE FUNCTION hlculid_citus_table(tbl regclass)
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
-- prepared transactions left on any node (a COMMIT PREPARED that failed, until recovery).
CREATE OR REPLACE FUNCTION hlculid_cluster_pending()
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
             $c$SELECT COALESCE(pg_catalog.string_agg(gid, ' '), '')
                FROM pg_catalog.pg_prepared_xacts WHERE gid OPERATOR(pg_catalog.~~) 'citus\_%'$c$) r;
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
             pg_catalog.unnest(pg_catalog.string_to_array(n.result, ' ')) g
        WHERE g <> '') s;
    RETURN coalesce(pending, '{}');
END
$fn$;

-- The cluster's horizon: below it, every id any node made, that any node will ever show, is
-- shown already. The smallest of the nodes' horizons (each node's idle clock first brought up to
-- the wall clock, as for hlculid_publish_horizon), returned once every distributed transaction
-- that was running or prepared when they were read has ended; NULL if that takes longer than
-- max_wait (a reader then reads nothing new, and asks again).
CREATE OR REPLACE FUNCTION hlculid_cluster_horizon(max_wait interval DEFAULT '10 s')
RETURNS pg_catalog.hlculid
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    nodes int4[];
    answers text[];
    unreachable text;
    shared text;
    h pg_catalog.hlculid;
    pending text[];
    deadline timestamptz;
BEGIN
    -- the one READ COMMITTED rule (0.6.0: READ UNCOMMITTED passes, as PostgreSQL runs it)
    PERFORM pg_catalog.hlculid_require_read_committed('hlculid_cluster_horizon');
    IF pg_catalog.to_regprocedure('pg_catalog.run_command_on_all_nodes(text,boolean,boolean)') IS NULL THEN
        RAISE EXCEPTION 'hlculid_cluster_horizon() needs Citus'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'On a server without Citus, read below hlculid_horizon().';
    END IF;
    IF $1 IS NULL OR $1 < interval '0' THEN
        RAISE EXCEPTION 'hlculid_cluster_horizon cannot wait %', coalesce($1::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'max_wait is an interval of 0 or more.';
    END IF;
    -- every node's horizon and publisher id, or which node could not answer
    SELECT pg_catalog.array_agg(r.nodeid), pg_catalog.array_agg(r.result),
           string_agg(r.nodeid || ': ' || r.result, '; ') FILTER (WHERE NOT r.success)
    INTO nodes, answers, unreachable
    FROM pg_catalog.run_command_on_all_nodes(
        $c$SELECT pg_catalog.hlculid_horizon_catch_up()::pg_catalog.text OPERATOR(pg_catalog.||) ' '
                  OPERATOR(pg_catalog.||) (SELECT c.publisher FROM pg_catalog.hlculid_clock() c)::pg_catalog.text$c$) r;
    IF unreachable IS NOT NULL OR nodes IS NULL THEN
        RAISE EXCEPTION 'hlculid_cluster_horizon() could not read the horizon of every node'
            USING ERRCODE = 'connection_failure', DETAIL = coalesce(unreachable, 'no node answered'),
                  HINT = 'Every node needs hlculid preloaded and reachable: an unreachable one may still show ids below the horizon.';
    END IF;
    SELECT pg_catalog.min(pg_catalog.split_part(a.answer, ' ', 1)::pg_catalog.hlculid) INTO h
    FROM pg_catalog.unnest(answers) a(answer);
    SELECT string_agg(pg_catalog.format('%s (nodes %s)', d.publisher, d.nodes), ', ') INTO shared
    FROM (SELECT pg_catalog.split_part(n.answer, ' ', 2) AS publisher,
                 string_agg(n.nodeid::text, ' and ' ORDER BY n.nodeid) AS nodes
          FROM unnest(nodes, answers) n(nodeid, answer)  -- ROWS FROM syntax: no qualified form
          GROUP BY 1 HAVING count(*) > 1) d;
    IF shared IS NOT NULL THEN
        RAISE EXCEPTION 'publisher id % is used by more than one node of the cluster', shared
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Two nodes with one publisher id can make the same id, and their ids do not say which node made them.',
                  HINT = 'Give each node its own hlculid.publisher_id in postgresql.conf, and restart it.';
    END IF;
    -- then wait for every distributed transaction that may still show an id below it
    deadline := pg_catalog.clock_timestamp() + $1;
    pending := pg_catalog.hlculid_cluster_pending();
    WHILE pg_catalog.cardinality(pending) > 0 LOOP
        IF pg_catalog.clock_timestamp() >= deadline THEN
            RETURN NULL;
        END IF;
        PERFORM pg_catalog.pg_sleep(0.005);
        pending := ARRAY(SELECT pg_catalog.unnest(pending)
                         INTERSECT SELECT pg_catalog.unnest(pg_catalog.hlculid_cluster_pending()));
    END LOOP;
    RETURN h;
END
$fn$;

COMMENT ON FUNCTION hlculid_citus_table(regclass) IS 'whether Citus manages the table (distributed, reference or Citus local); false without Citus';
COMMENT ON FUNCTION hlculid_cluster_pending() IS 'the distributed transactions running and the Citus prepared transactions on any node: what hlculid_cluster_horizon() waits for';
COMMENT ON FUNCTION hlculid_cluster_horizon(interval) IS 'on Citus: the smallest horizon of every node, once every distributed transaction that may still show an id below it has ended (NULL after max_wait); take it in one statement, read below it in the next';
