"""pytest fixtures: servers made by tests/pgcluster.py, stopped and removed after each test."""

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from pgcluster import Cluster  # noqa: E402


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
