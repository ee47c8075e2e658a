"""The Node.js recipe with node-postgres (tests/clients/node_roundtrip.js) against this server."""

import os
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_node_pg_recipe(server):
    r = subprocess.run(["node", str(HERE / "node_roundtrip.js")],
                       env={**os.environ, "HLCULID_TEST_HOST": str(server.dir), "HLCULID_TEST_PORT": str(server.port)},
                       capture_output=True, text=True)
    print(r.stdout, r.stderr)
    assert r.returncode == 0
    assert "node recipe: ok" in r.stdout
