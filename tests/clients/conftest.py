"""One server with hlculid for the client recipes (scripts/clients.sh MAJOR), and the recipes'
module on the path."""

import shutil
import subprocess
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


@pytest.fixture(scope="session")
def packages(tmp_path_factory):
    """The Python wheel and the npm tarball, as make package writes them (package-clients.sh)."""
    out = tmp_path_factory.mktemp("packages")
    r = subprocess.run([str(ROOT / "scripts" / "package-clients.sh"), str(out)], capture_output=True, text=True)
    print(r.stdout, r.stderr)
    assert r.returncode == 0
    version = next(line.split('"')[1] for line in (ROOT / "Cargo.toml").read_text().splitlines()
                   if line.startswith("version = "))
    wheel, tarball = (Path(p) for p in r.stdout.split())
    assert wheel.name == f"hlculid-{version}-py3-none-any.whl" and tarball.name == f"hlculid-{version}.tgz"
    return wheel, tarball
