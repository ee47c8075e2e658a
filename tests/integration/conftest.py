"""pytest fixtures: servers made by tests/pgcluster.py, stopped and removed after each test."""

import shutil
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from pgcluster import Cluster, deselect_for_tier, register_tier_markers  # noqa: E402


def pytest_configure(config):
    register_tier_markers(config)


def pytest_collection_modifyitems(config, items):
    deselect_for_tier(config, items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A worker thread's uncaught exception fails its test (pytest itself would only warn): the
    exceptions of every thread are collected while the test runs and the first is raised here,
    in the main thread, once the test body returns."""
    raised = []
    previous = threading.excepthook

    def collect(args):
        raised.append(args)
        previous(args)

    threading.excepthook = collect
    try:
        result = yield
    finally:
        threading.excepthook = previous
    if raised:
        first = raised[0]
        name = first.thread.name if first.thread else "?"
        raise AssertionError(f"{len(raised)} worker thread(s) raised; the first, in {name}: "
                             f"{first.exc_type.__name__}: {first.exc_value}") from first.exc_value
    return result


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
