"""A three-node Citus cluster for the Citus tests: a coordinator and two workers, each a server
made by tests/pgcluster.py (its own directory, port and socket directory, run as 'postgres'),
with `shared_preload_libraries = 'citus,hlculid'` and publisher ids 41 (coordinator), 42 and 43
(workers). One cluster serves the whole session; each test makes its own tables.

The suite skips, saying why, on a major Citus does not support (15) or where Citus is not
installed (scripts/setup-citus.sh builds it from a vendored source tarball during make setup, and
says so when the tarball is absent)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import pgcluster  # noqa: E402
from pgcluster import Cluster, deselect_for_tier, register_tier_markers  # noqa: E402

CITUS_MAJORS = ("16", "17", "18")
PUBLISHERS = {"coordinator": 41, "worker1": 42, "worker2": 43}


def pytest_configure(config):
    register_tier_markers(config)


def pytest_collection_modifyitems(config, items):
    deselect_for_tier(config, items)
    why = citus_missing()
    if why:
        for item in items:
            item.add_marker(pytest.mark.skip(reason=why))


def citus_missing():
    """Why the suite cannot run on the major under test, or None."""
    major = pgcluster.PG
    if major not in CITUS_MAJORS:
        return f"Citus 14 supports PostgreSQL {', '.join(CITUS_MAJORS)}, not {major}"
    cfg = pgcluster.pg_config(major)
    share = subprocess.run([cfg, "--sharedir"], check=True, capture_output=True, text=True).stdout.strip()
    lib = subprocess.run([cfg, "--pkglibdir"], check=True, capture_output=True, text=True).stdout.strip()
    if not (Path(share) / "extension/citus.control").exists() or not (Path(lib) / "citus.so").exists():
        why = os.environ.get("HLCULID_CITUS_MISSING") or "run make setup (scripts/setup-citus.sh)"
        return f"Citus is not installed for PostgreSQL {major} ({cfg}): {why}"
    return None


def node_conf(publisher):
    return [
        "shared_preload_libraries = 'citus,hlculid'",  # citus first: it says so at start otherwise
        f"hlculid.publisher_id = {publisher}",
        "listen_addresses = 'localhost'",  # the nodes reach each other over TCP, trust on localhost
        "max_prepared_transactions = 50",  # Citus commits multi-shard writes with 2PC
        "wal_level = logical",  # shard moves copy shards by logical replication
        "max_connections = 200",
        "citus.node_conninfo = 'sslmode=prefer'",
        "TimeZone = 'UTC'",
    ]


def shard_tables(node, like):
    """Names of the shards on a node whose names match a LIKE pattern (Citus hides shards from
    pg_class unless citus.override_table_visibility is off)."""
    with node.connect() as c:
        c.execute("SET citus.override_table_visibility = off")
        return sorted(r[0] for r in c.execute(
            "SELECT relname::text FROM pg_class WHERE relname LIKE %s AND relkind IN ('r', 'p')", (like,)))


class CitusCluster:
    def __init__(self, coordinator, workers):
        self.coordinator = coordinator
        self.workers = workers

    @property
    def nodes(self):
        return [self.coordinator, *self.workers]


@pytest.fixture(scope="session")
def citus():
    made = []
    try:
        for name, publisher in PUBLISHERS.items():
            c = Cluster(f"citus-{name}", preload=False, conf=node_conf(publisher), fsync=False)
            made.append(c)
            c.start()
        coordinator, *workers = made
        for c in made:
            c.sql("CREATE EXTENSION citus")
        coordinator.sql("SELECT citus_set_coordinator_host('localhost', %s)", (coordinator.port,))
        for w in workers:
            coordinator.sql("SELECT citus_add_node('localhost', %s)", (w.port,))
        # created on the coordinator after the workers joined: Citus creates it on every node
        coordinator.sql("CREATE EXTENSION hlculid")
        yield CitusCluster(coordinator, workers)
    finally:
        for c in made:
            c.stop("immediate")
        for c in made:
            shutil.rmtree(c.dir, ignore_errors=True)
