"""A three-node Citus cluster for the Citus tests: a coordinator and two workers, each a server
made by tests/pgcluster.py (its own directory, port and socket directory, run as 'postgres'),
with `shared_preload_libraries = 'citus,hlculid'` and publisher ids 41 (coordinator), 42 and 43
(workers). One cluster serves the whole session; each test makes its own tables.

The suite skips, saying why, on a major Citus does not support (15) or where Citus is not
installed (scripts/setup-citus.sh builds it from a vendored source tarball during make setup, and
says so when the tarball is absent)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from pgcluster import (CITUS_PUBLISHERS, CitusCluster, citus_missing, deselect_for_tier,  # noqa: E402
                       register_tier_markers)

PUBLISHERS = CITUS_PUBLISHERS


def pytest_configure(config):
    register_tier_markers(config)


def pytest_collection_modifyitems(config, items):
    deselect_for_tier(config, items)
    why = citus_missing()
    if why:
        for item in items:
            item.add_marker(pytest.mark.skip(reason=why))


def shard_tables(node, like):
    """Names of the shards on a node whose names match a LIKE pattern (Citus hides shards from
    pg_class unless citus.override_table_visibility is off)."""
    with node.connect() as c:
        c.execute("SET citus.override_table_visibility = off")
        return sorted(r[0] for r in c.execute(
            "SELECT relname::text FROM pg_class WHERE relname LIKE %s AND relkind IN ('r', 'p')", (like,)))


@pytest.fixture(scope="session")
def citus():
    cluster = CitusCluster()
    try:
        yield cluster
    finally:
        cluster.stop()
