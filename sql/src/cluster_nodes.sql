-- The cluster horizon kept by a background worker (0.6.0, src/horizon/cluster_worker.rs): what it knows
-- of every node of the Citus cluster, publisher ids shared by two nodes among it. One source for
-- the install script (through src/horizon/cluster_worker.rs) and the 0.5.0 -> 0.6.0 upgrade script.

CREATE VIEW hlculid.hlculid_cluster_nodes AS
SELECT n.nodeid, n.nodename, n.nodeport, n.publisher_id, n.started, n.answered, n.error,
       n.shares_publisher_with, n.makes_ids
FROM pg_catalog.hlculid_cluster_nodes() n;

COMMENT ON FUNCTION hlculid_cluster_horizon(interval) IS 'on Citus: the cluster horizon its background worker keeps, the smallest horizon of every node once every distributed transaction that may still show an id below it has ended; NULL (08006 naming a node that does not answer) when the last one is older than max_wait; take it in one statement, read below it in the next';
COMMENT ON FUNCTION hlculid_cluster_nodes() IS 'on Citus: every node as the cluster horizon''s worker last read it: publisher id, start, last answer, error, a node sharing its publisher id, whether this node makes ids';
COMMENT ON VIEW hlculid.hlculid_cluster_nodes IS 'on Citus: every node as the cluster horizon''s worker last read it; two rows naming each other in shares_publisher_with share a publisher id, and the later of them makes no ids';
