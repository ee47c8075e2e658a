"""pytest fixtures: servers made by tests/pgcluster.py, stopped and removed after each test."""

import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from pgcluster import RUN_ROOT, Cluster, deselect_for_tier, read_as_server, register_tier_markers  # noqa: E402


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


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Each phase's report on the item (item.rep_call ...), for the fixtures' teardown."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


def keep_server_logs(request, clusters):
    """A failed test's server logs outlive its clusters: copied to RUN_ROOT/failed-servers/."""
    rep = getattr(request.node, "rep_call", None)
    if rep is None or not rep.failed:
        return
    dest = RUN_ROOT / "failed-servers"
    dest.mkdir(parents=True, exist_ok=True)
    for c in clusters:
        try:  # read as the server's user: root follows no link in the server's directory
            text = read_as_server(c.dir / "server.log")
        except (OSError, subprocess.CalledProcessError):
            continue
        kept = dest / f"{request.node.name[:80]}-{c.dir.name}.log"
        kept.write_text(text)
        print(f"server log of {c.dir.name} kept: {kept}")


@pytest.fixture
def make_cluster(request):
    made = []

    def make(name, **kw):
        c = Cluster(name, **kw)
        made.append(c)
        return c

    yield make
    for c in made:
        c.stop("immediate")
    keep_server_logs(request, made)
    for c in made:
        shutil.rmtree(c.dir, ignore_errors=True)
