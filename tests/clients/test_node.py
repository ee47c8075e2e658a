"""The Node.js recipe with node-postgres (tests/clients/node_roundtrip.js, and its bigint ids:
tests/clients/node_bigint.js) and with Drizzle ORM (tests/clients/node_drizzle.js) against this
server."""

import os
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("script, done", [pytest.param("node_roundtrip.js", "node recipe: ok", marks=pytest.mark.smoke),
                                          ("node_bigint.js", "node bigint: ok"),
                                          ("node_drizzle.js", "node drizzle: ok")])
def test_node_pg_recipe(server, script, done):
    r = subprocess.run(["node", str(HERE / script)],
                       env={**os.environ, "HLCULID_TEST_HOST": str(server.dir), "HLCULID_TEST_PORT": str(server.port)},
                       capture_output=True, text=True)
    print(r.stdout, r.stderr)
    assert r.returncode == 0
    assert done in r.stdout
