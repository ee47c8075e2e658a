"""The client packages as a user gets them (scripts/package-clients.sh, which make package runs):
the Python wheel installed into a fresh virtual environment, and the npm tarball installed into a
fresh project, each used from outside the repository: import and require, the generator, the
extras' modules, and the TypeScript declarations checked by tsc against a typed use file."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NODE = ROOT / "clients" / "node"
VERSION = next(line.split('"')[1] for line in (ROOT / "Cargo.toml").read_text().splitlines()
               if line.startswith("version = "))


def run(args, **kw):
    r = subprocess.run(args, capture_output=True, text=True, **kw)
    print(r.stdout, r.stderr)
    return r


# `packages` (the wheel and the tarball package-clients.sh writes): conftest.py, shared with
# test_install_docs.py.


def test_the_packages_build_in_a_fresh_checkout_without_the_venv(tmp_path):
    """make package on a fresh clone (the README's install path), before any make setup: no .venv."""
    checkout = tmp_path / "checkout"
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    for f in (f.decode() for f in files if f):
        src = ROOT / f
        if src.is_file() and not f.startswith(".venv/"):
            (checkout / f).parent.mkdir(parents=True, exist_ok=True)
            (checkout / f).write_bytes(src.read_bytes())
            (checkout / f).chmod(src.stat().st_mode)
    assert not (checkout / ".venv").exists()
    r = run([str(checkout / "scripts" / "package-clients.sh"), str(tmp_path / "out")])
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == \
        [f"hlculid-{VERSION}-py3-none-any.whl", f"hlculid-{VERSION}.tgz"]


def test_the_wheel_installs_into_a_fresh_venv_and_works(packages, tmp_path):
    wheel, _ = packages
    venv = tmp_path / "venv"
    assert run([sys.executable, "-m", "venv", str(venv)]).returncode == 0
    py = venv / "bin" / "python"
    assert run([str(py), "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)]).returncode == 0
    use = textwrap.dedent(f"""
        import importlib.metadata, importlib.util, json, pathlib, sys, uuid
        import hlculid
        from hlculid import BigId, Generator, Hlculid, Mask, RandomUuid, TooFarAhead
        assert pathlib.Path(hlculid.__file__).is_relative_to(pathlib.Path(sys.prefix)), hlculid.__file__
        assert importlib.metadata.version("hlculid") == hlculid.__version__ == "{VERSION}"
        assert (pathlib.Path(hlculid.__file__).parent / "py.typed").exists()
        g = Generator(7)
        a, b = g.generate(), g.generate_bigint()
        assert type(a) is Hlculid and a.publisher == 7 and Hlculid(str(a)) == a
        assert isinstance(b, BigId) and b.to_hlculid() > a
        m = Mask("000102030405060708090a0b0c0d0e0f")
        assert m.unmask(m.mask(a)) == a and m.unmask_bigint(m.mask_bigint(b)) == b
        try:
            g.observe(uuid.uuid4())
            raise SystemExit("a random uuid was observed")
        except RandomUuid:
            pass
        try:
            g.observe(Hlculid(int=(a.ms + 10_000) << 80))
            raise SystemExit("an id 10 s ahead was observed")
        except TooFarAhead as e:
            assert e.ahead_ms >= 9_000
        # the integrations ship as modules whose frameworks come with the extras
        for module, needs in (("hlculid.sqlalchemy", "sqlalchemy"), ("hlculid.django", "django")):
            assert importlib.util.find_spec(module) is not None
            try:
                __import__(module)
                raise SystemExit(module + " imported without " + needs)
            except ModuleNotFoundError as e:
                assert e.name == needs, e
        meta = importlib.metadata.metadata("hlculid")
        print(json.dumps(sorted(meta.get_all("Provides-Extra"))))
    """)
    r = run([str(py), "-c", use], cwd=tmp_path)
    assert r.returncode == 0
    assert json.loads(r.stdout.splitlines()[-1]) == ["asyncpg", "django", "psycopg", "sqlalchemy"]


@pytest.fixture(scope="module")
def node_project(packages, tmp_path_factory):
    """A fresh project with the tarball installed (and drizzle-orm, the optional peer, from the
    test's node_modules)."""
    _, tarball = packages
    project = tmp_path_factory.mktemp("node-project")
    (project / "package.json").write_text('{"name": "use-hlculid", "private": true}\n')
    r = run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", str(tarball),
             str(NODE / "node_modules" / "drizzle-orm")], cwd=project)
    assert r.returncode == 0
    installed = project / "node_modules" / "hlculid"
    assert json.loads((installed / "package.json").read_text())["version"] == VERSION
    assert not installed.is_symlink()
    return project


USE_JS = """
const assert = require('assert');
module.exports = function check(hl, drizzle, pgCore, dialect) {
  const g = new hl.Generator(7);
  const a = g.generate();
  assert.match(a, /^[0-9A-F]{12}-[0-9A-F]{4}-0007-[0-9A-F]{12}$/);
  assert.ok(hl.bigintToHlculid(g.generateBigint()) > a);
  const m = new hl.Mask('000102030405060708090a0b0c0d0e0f');
  assert.strictEqual(m.unmask(m.mask(a)), a);
  assert.strictEqual(m.mask('000000000000-0000-0000-000000000000'), 'bf6e6a26-7796-47c3-7f1f-d97cc0b2657e');
  assert.throws(() => g.observe('6e9f0e1c5b3a4d2e9f8a1b2c3d4e5f60'), (e) => e instanceof hl.HlculidError && e.code === 'RandomUuid');
  const events = pgCore.pgTable('events', { id: drizzle.hlculid('id').primaryKey() });
  const q = new dialect().sqlToQuery(drizzle.inRange(events.id, new Date(0), new Date(1000)));
  assert.match(q.sql, /"events"\\."id" <@ tstzrange\\(\\$1::timestamptz, \\$2::timestamptz, \\$3\\)/);
  return 'ok';
};
"""


def test_the_npm_tarball_installs_and_works_with_require_and_import(node_project):
    (node_project / "check.cjs").write_text(USE_JS)
    cjs = """
        const hl = require('hlculid');
        const drizzle = require('hlculid/drizzle');
        console.log('cjs', require('./check.cjs')(hl, drizzle, require('drizzle-orm/pg-core'), require('drizzle-orm/pg-core').PgDialect));
        console.log(require.resolve('hlculid'));
    """
    esm = """
        import { createRequire } from 'module';
        import * as hl from 'hlculid';
        import def from 'hlculid';
        import * as drizzle from 'hlculid/drizzle';
        import * as pgCore from 'drizzle-orm/pg-core';
        const check = createRequire(import.meta.url)('./check.cjs');
        if (def.Generator !== hl.Generator) throw new Error('the default export and the named ones differ');
        console.log('esm', check(hl, drizzle, pgCore, pgCore.PgDialect));
    """
    r = run(["node", "-e", cjs], cwd=node_project)
    assert r.returncode == 0 and "cjs ok" in r.stdout
    assert str(node_project / "node_modules" / "hlculid" / "hlculid.js") in r.stdout
    r = run(["node", "--input-type=module", "-e", esm], cwd=node_project)
    assert r.returncode == 0 and "esm ok" in r.stdout


def test_the_typescript_declarations_check_a_typed_use_and_catch_a_wrong_one(node_project):
    assert (NODE / "hlculid-drizzle.d.ts").read_text() == (NODE / "hlculid-drizzle.d.mts").read_text()
    tsc = NODE / "node_modules" / ".bin" / "tsc"
    use = (HERE / "node_types" / "use.ts").read_text()
    (node_project / "use.ts").write_text(use)  # a CommonJS module of the project
    (node_project / "use.mts").write_text(use)  # an ES module
    config = json.loads((HERE / "node_types" / "tsconfig.json").read_text())
    config["files"] = ["use.ts", "use.mts"]
    (node_project / "tsconfig.json").write_text(json.dumps(config))
    r = run([str(tsc), "-p", "tsconfig.json"], cwd=node_project)
    assert r.returncode == 0
    (node_project / "wrong.ts").write_text("import { Generator } from 'hlculid';\n"
                                           "const n: number = new Generator(1).generate();\n"
                                           "new Generator(1).observe(5);\n")
    config["files"] = ["wrong.ts"]
    (node_project / "tsconfig.json").write_text(json.dumps(config))
    r = run([str(tsc), "-p", "tsconfig.json"], cwd=node_project)
    assert r.returncode != 0
    assert "wrong.ts(2," in r.stdout and "wrong.ts(3," in r.stdout
