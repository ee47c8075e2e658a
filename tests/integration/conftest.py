"""pytest fixtures: servers made by tests/pgcluster.py, stopped and removed after each test."""

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from pgcluster import Cluster, deselect_for_tier, register_tier_markers  # noqa: E402


def pytest_configure(config):
    register_tier_markers(config)


def pytest_collection_modifyitems(config, items):
    deselect_for_tier(config, items)


@pytest.fixture
def make_cluster():
    made = []

    def make(name, **kw):
        c = Cluster(name, **kw)
        made.append(c)
        return c

    yield make
    for c in made:
        c.stop("immediate")
        shutil.rmtree(c.dir, ignore_errors=True)
