"""Every client install command the docs give, run as written, each in a fresh environment: the
lines of docs/clients.md, docs/install.md, clients/python/README.md, clients/node/README.md and
core/README.md that start with `pip install`, `npm install` or `cargo add`, such commands in
inline code (a table's cell, a sentence), and every `hlculid-core = { ... }` dependency line. `/path/to/hlculid` is a copy of the checkout's clients
and crate; a package file (`./hlculid-X.Y.Z...`) is the one make package writes. A line this test
does not know how to run fails it, so a command added to the docs is run or the test says so (a
registry form such as `pip install hlculid` before the package is published, for one).

Cheap forms (the package alone, a path dependency resolved offline) are quick; the Python extras
(they download their frameworks) and compiling the crate from the documented `cargo add` are
marked full."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["docs/clients.md", "docs/install.md", "clients/python/README.md", "clients/node/README.md",
         "core/README.md"]
COMMAND = re.compile(r"^\s*((?:pip install|npm install|cargo add)\s.*?)\s*(?:#.*)?$")
INLINE = re.compile(r"`((?:pip install|npm install|cargo add)\s[^`]*)`")
DEPENDENCY = re.compile(r"^\s*(hlculid-core = \{.*\})\s*(?:#.*)?$")
PLACEHOLDER = "/path/to/hlculid"
VERSION = next(line.split('"')[1] for line in (ROOT / "Cargo.toml").read_text().splitlines()
               if line.startswith("version = "))
QUIET_NPM = {"npm_config_audit": "false", "npm_config_fund": "false", "npm_config_update_notifier": "false",
             "npm_config_loglevel": "error"}


def documented():
    """(page:line, kind, text) of every install command and dependency line of the pages."""
    found = []
    for page in PAGES:
        for n, line in enumerate((ROOT / page).read_text().splitlines(), 1):
            if m := COMMAND.match(line):
                found.append((f"{page}:{n}", m.group(1).split()[0], m.group(1)))
            elif m := DEPENDENCY.match(line):
                found.append((f"{page}:{n}", "dependency", m.group(1)))
            else:
                found += [(f"{page}:{n}", c.split()[0], c) for c in INLINE.findall(line)]
    return found


DOCUMENTED = documented()


def kind_of(kind, text):
    """Which runner takes the line, or None: a form this test does not know."""
    if kind == "pip" and re.fullmatch(r'pip install "?\./clients/python(\[\w+\])?"?', text):
        return "pip-checkout-extra" if "[" in text else "pip-checkout"
    if kind == "pip" and text == f"pip install ./hlculid-{VERSION}-py3-none-any.whl":
        return "pip-wheel"
    if kind == "npm" and text == f"npm install --install-links {PLACEHOLDER}/clients/node":
        return "npm-checkout"
    if kind == "npm" and text == f"npm install ./hlculid-{VERSION}.tgz":
        return "npm-tarball"
    if kind == "cargo" and re.fullmatch(rf"cargo add hlculid-core --path {PLACEHOLDER}/core( --features [\w,]+)?", text):
        return "cargo-add"
    if kind == "dependency" and f'path = "{PLACEHOLDER}/core"' in text:
        return "dependency"
    return None


def run(args, **kw):
    r = subprocess.run(args, capture_output=True, text=True, **kw)
    print(args, r.returncode, r.stdout[-3000:], r.stderr[-3000:])
    return r


def shell(text, cwd, env):
    return run(["bash", "-euo", "pipefail", "-c", text], cwd=cwd, env={**os.environ, **env})


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """The parts of the checkout the commands install from, copied (pip builds in the source
    tree, which must stay clean)."""
    root = tmp_path_factory.mktemp("checkout") / "hlculid"
    ignore = shutil.ignore_patterns("node_modules", "build", "dist", "*.egg-info", "__pycache__", "target")
    for part in ["clients/python", "clients/node", "core"]:
        shutil.copytree(ROOT / part, root / part, ignore=ignore, symlinks=False)
    shutil.copy(ROOT / "LICENSE", root / "LICENSE")
    return root


def fresh_venv(where):
    assert run([sys.executable, "-m", "venv", str(where)]).returncode == 0
    return {"PATH": f"{where / 'bin'}:{os.environ['PATH']}", "VIRTUAL_ENV": str(where), "PIP_QUIET": "1"}


def python_uses_hlculid(env, cwd, extra=None):
    check = ("import hlculid, pathlib, sys; "
             "assert pathlib.Path(hlculid.__file__).is_relative_to(pathlib.Path(sys.prefix)), hlculid.__file__; "
             f"assert hlculid.__version__ == '{VERSION}'; "
             "print(hlculid.Generator(7).generate().publisher)")
    if extra:
        module = {"psycopg": "psycopg", "asyncpg": "asyncpg", "sqlalchemy": "hlculid.sqlalchemy",
                  "django": "hlculid.django"}[extra]
        check += f"; import importlib; importlib.import_module('{module}')"
    r = shell(f"python -c \"{check}\"", cwd, env)
    assert r.returncode == 0 and r.stdout.split()[0] == "7", r.stderr


def test_every_documented_install_line_is_one_this_test_runs():
    assert len(DOCUMENTED) >= 8, DOCUMENTED
    unknown = [f"{where}: {text}" for where, kind, text in DOCUMENTED if kind_of(kind, text) is None]
    assert not unknown, "install lines the docs give that this test cannot run (unpublished names?):\n" + \
        "\n".join(unknown)
    for k in ["pip-checkout", "pip-wheel", "npm-checkout", "npm-tarball", "cargo-add", "dependency"]:
        assert any(kind_of(kind, t) == k for _, kind, t in DOCUMENTED), f"no documented line of kind {k}"


def lines(k):
    """(page:line, text) of the documented lines of kind `k`, each text once (its first place)."""
    first = {}
    for where, kind, text in DOCUMENTED:
        if kind_of(kind, text) == k:
            first.setdefault(text, where)
    return [(where, text) for text, where in first.items()]


def test_pip_install_from_the_checkout_as_written(checkout, tmp_path):
    for n, (where, text) in enumerate(lines("pip-checkout")):
        env = fresh_venv(tmp_path / f"venv-{n}")
        r = shell(text, checkout, env)
        assert r.returncode == 0, f"{where}: {text}: {r.stderr}"
        python_uses_hlculid(env, tmp_path)


@pytest.mark.full
def test_pip_install_of_each_extra_from_the_checkout_as_written(checkout, tmp_path):
    for n, (where, text) in enumerate(lines("pip-checkout-extra")):
        env = fresh_venv(tmp_path / f"venv-{n}")
        r = shell(text, checkout, env)
        assert r.returncode == 0, f"{where}: {text}: {r.stderr}"
        python_uses_hlculid(env, tmp_path, extra=re.search(r"\[(\w+)\]", text).group(1))


def test_the_package_files_install_as_written(packages, tmp_path):
    wheel, tarball = packages
    for where, text in lines("pip-wheel"):
        d = tmp_path / "wheel-dir"
        d.mkdir(exist_ok=True)
        shutil.copy(wheel, d / wheel.name)
        env = fresh_venv(tmp_path / "venv-wheel")
        r = shell(text, d, {**env, "PIP_NO_INDEX": "1"})
        assert r.returncode == 0, f"{where}: {text}: {r.stderr}"
        python_uses_hlculid(env, tmp_path)
    for where, text in lines("npm-tarball"):
        project = tmp_path / "npm-tarball"
        project.mkdir(exist_ok=True)
        (project / "package.json").write_text('{"name": "use-hlculid", "private": true}\n')
        shutil.copy(tarball, project / tarball.name)
        r = shell(text, project, {**QUIET_NPM, "npm_config_offline": "true"})
        assert r.returncode == 0, f"{where}: {text}: {r.stderr}"
        node_uses_hlculid(project)


def node_uses_hlculid(project):
    installed = project / "node_modules" / "hlculid"
    assert not installed.is_symlink(), "the package is a link to where it was installed from"
    assert json.loads((installed / "package.json").read_text())["version"] == VERSION
    r = run(["node", "-e", "const { Generator } = require('hlculid'); console.log(new Generator(7).generate());"],
            cwd=project)
    assert r.returncode == 0 and re.fullmatch(r"[0-9A-F]{12}-[0-9A-F]{4}-0007-[0-9A-F]{12}", r.stdout.strip())


def test_npm_install_from_the_checkout_as_written(checkout, tmp_path):
    for n, (where, text) in enumerate(lines("npm-checkout")):
        project = tmp_path / f"npm-{n}"
        project.mkdir()
        (project / "package.json").write_text('{"name": "use-hlculid", "private": true}\n')
        r = shell(text.replace(PLACEHOLDER, str(checkout)), project, {**QUIET_NPM, "npm_config_offline": "true"})
        assert r.returncode == 0, f"{where}: {text}: {r.stderr}"
        node_uses_hlculid(project)


def cargo_project(where, name):
    r = run(["cargo", "new", "--quiet", "--vcs", "none", "--name", name, str(where)])
    assert r.returncode == 0
    return where


CARGO_ENV = {"CARGO_NET_OFFLINE": "true"}


def test_the_crate_as_a_path_dependency_resolves_as_written(checkout, tmp_path):
    """Each documented dependency line and `cargo add` resolves offline (registry dependencies
    from the machine's cache): the path, the version requirement against the crate's version,
    the features."""
    for n, (where, text) in enumerate(lines("dependency")):
        project = cargo_project(tmp_path / f"dep-{n}", "use_hlculid")
        manifest = project / "Cargo.toml"
        manifest.write_text(manifest.read_text().replace("[dependencies]", "[dependencies]\n" + text.replace(
            PLACEHOLDER, str(checkout))))
        r = run(["cargo", "metadata", "--offline", "--format-version", "1"], cwd=project, env={**os.environ, **CARGO_ENV})
        assert r.returncode == 0, f"{where}: {text}: {r.stderr}"
        got = [p for p in json.loads(r.stdout)["packages"] if p["name"] == "hlculid-core"]
        assert [p["version"] for p in got] == [VERSION]
    for n, (where, text) in enumerate(lines("cargo-add")):
        project = cargo_project(tmp_path / f"add-{n}", "use_hlculid")
        r = shell(text.replace(PLACEHOLDER, str(checkout)), project, CARGO_ENV)
        assert r.returncode == 0, f"{where}: {text}: {r.stderr}"
        dep = re.search(r"^hlculid-core = (.*)$", (project / "Cargo.toml").read_text(), re.M).group(1)
        path = re.search(r'path = "([^"]+)"', dep)
        assert path and (project / path.group(1)).resolve() == checkout / "core", dep
        assert f'version = "{VERSION}"' in dep, "cargo add writes the version beside the path: " + dep


@pytest.mark.full
def test_the_crate_added_as_written_builds_and_makes_an_id(checkout, tmp_path):
    where, text = lines("cargo-add")[0]
    project = cargo_project(tmp_path / "build", "use_hlculid")
    assert shell(text.replace(PLACEHOLDER, str(checkout)), project, CARGO_ENV).returncode == 0
    (project / "src" / "main.rs").write_text(
        "fn main() {\n"
        "    let ids = hlculid_core::Generator::builder(7).build().expect(\"a generator\");\n"
        "    println!(\"{}\", ids.generate().expect(\"an id\").publisher());\n"
        "}\n")
    r = run(["cargo", "run", "--quiet", "--offline"], cwd=project,
            env={**os.environ, **CARGO_ENV, "CARGO_TARGET_DIR": str(tmp_path / "target")}, timeout=900)
    assert r.returncode == 0 and r.stdout.strip() == "7", f"{where}: {r.stderr}"
