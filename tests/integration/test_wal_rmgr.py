"""hlculid's custom WAL resource manager id (173, src/horizon/prepared/wal.rs): what PostgreSQL does when
another preloaded library registers the same id or the same name (docs/install.md, "The WAL
resource manager id"). A small C library (tests/c_rmgr/other_rmgr.c) stands for the other
extension; the server refuses to start, saying which two collided, whichever loads first."""

import subprocess
import uuid

import pytest

from pgcluster import RUN_ROOT, give_to_server, pg_config

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]
HLCULID_RMGR_ID = 173


def build_other(rmgr_id, name):
    """The other extension's library, registering rmgr_id as name; a path the server can load."""
    inc = subprocess.run([pg_config(), "--includedir-server"], check=True, capture_output=True,
                         text=True).stdout.strip()
    out = RUN_ROOT / f"other_rmgr-{rmgr_id}-{name}-{uuid.uuid4().hex[:6]}.so"
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cc", "-shared", "-fPIC", "-O0", f"-I{inc}", f"-DOTHER_RMGR_ID={rmgr_id}",
                    f'-DOTHER_RMGR_NAME="{name}"', "-o", str(out), str(ROOT / "tests/c_rmgr/other_rmgr.c")],
                   check=True, capture_output=True, text=True)
    give_to_server(out)
    return out


def start_with(make_cluster, libraries):
    """A server preloading these libraries, in this order: started, or its log if it refused."""
    c = make_cluster("rmgr", preload=False, conf=[f"shared_preload_libraries = '{', '.join(map(str, libraries))}'"])
    try:
        c.start()
    except subprocess.CalledProcessError:
        return None, c.log()
    return c, c.log()


def test_another_library_with_its_own_id_and_name_starts_beside_hlculid(make_cluster):
    """The control: the other library itself is fine (id 174, its own name)."""
    other = build_other(HLCULID_RMGR_ID + 1, "other")
    c, log = start_with(make_cluster, ["hlculid", other])
    assert c is not None, log
    assert f'registered custom resource manager "hlculid" with ID {HLCULID_RMGR_ID}' in log
    assert f'registered custom resource manager "other" with ID {HLCULID_RMGR_ID + 1}' in log
    c.sql("CREATE EXTENSION hlculid")
    assert c.one("SELECT hlculid_generate() IS NOT NULL")


@pytest.mark.parametrize("hlculid_first", [True, False], ids=["hlculid first", "other first"])
def test_two_libraries_registering_id_173_stop_the_server_from_starting(make_cluster, hlculid_first):
    other = build_other(HLCULID_RMGR_ID, "other")
    libs = ["hlculid", other] if hlculid_first else [other, "hlculid"]
    c, log = start_with(make_cluster, libs)
    assert c is None, "the server started with two resource managers of one id"
    second, first = ("other", "hlculid") if hlculid_first else ("hlculid", "other")
    assert (f'FATAL:  failed to register custom resource manager "{second}" with ID {HLCULID_RMGR_ID}'
            in log), log
    assert f'Custom resource manager "{first}" already registered with the same ID.' in log, log


def test_another_resource_manager_named_hlculid_stops_the_server_from_starting(make_cluster):
    other = build_other(HLCULID_RMGR_ID + 1, "hlculid")
    c, log = start_with(make_cluster, ["hlculid", other])
    assert c is None, "the server started with two resource managers named hlculid"
    assert (f'FATAL:  failed to register custom resource manager "hlculid" with ID {HLCULID_RMGR_ID + 1}'
            in log), log
    assert f"Existing resource manager with ID {HLCULID_RMGR_ID} has the same name." in log, log
