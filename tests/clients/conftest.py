"""One server with hlculid for the client recipes (scripts/clients.sh MAJOR), and the recipes'
module on the path."""

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "clients" / "python" / "src"))
from pgcluster import Cluster, deselect_for_tier, register_tier_markers  # noqa: E402

N = 10_000


def pytest_configure(config):
    register_tier_markers(config)


def pytest_collection_modifyitems(config, items):
    deselect_for_tier(config, items)


@pytest.fixture(scope="session")
def server():
    c = Cluster("clients", conf=["hlculid.publisher_id = 50"]).start()
    c.sql("CREATE EXTENSION hlculid")
    yield c
    c.stop("immediate")
    shutil.rmtree(c.dir, ignore_errors=True)


@pytest.fixture
def dsn(server):
    return f"host={server.dir} port={server.port} user=postgres dbname=postgres"
