import json

import pytest
from fixtures import make_tree

import release_steps
import versions


@pytest.fixture
def tree(tmp_path):
    t = make_tree(tmp_path)
    (t / "sql/src/upgrade").mkdir(parents=True)
    return t


def run(tree, *args):
    return release_steps.main(["--root", str(tree), *args])


def test_client_artifacts(tree, capsys):
    (tree / "clients/python/pyproject.toml").write_text('[project]\nname = "Hlculid.Client"\nversion = "1.2.3"\n')
    (tree / "clients/node/package.json").write_text(json.dumps({"name": "@acme/hlculid", "version": "1.2.3"}))
    assert run(tree, "client-artifacts", "1.2.3") == 0
    assert capsys.readouterr().out.splitlines() == [
        "the Python client (clients/python): hlculid_client-1.2.3-py3-none-any.whl (sdist: hlculid_client-1.2.3.tar.gz)",
        "the Node client (clients/node, npm pack): acme-hlculid-1.2.3.tgz",
    ]


def test_no_artifact_for_a_private_node_package(tree):
    (tree / "clients/node/package.json").write_text(json.dumps({"name": "hlculid", "private": True}))
    assert not any("Node" in line for line in release_steps.client_artifacts(tree, "1.2.3"))


def test_date(tree):
    assert run(tree, "date", "1.2.3", "2031-02-03") == 0
    changelog = (tree / "CHANGELOG.md").read_text()
    assert "## 1.2.3 (2031-02-03)" in changelog and "(unreleased)" not in changelog
    assert "## 0.1.0 (2020-01-01)" in changelog
    assert json.loads((tree / "META.json").read_text())["release_status"] == "stable"


def test_bump_sets_the_next_version_everywhere(tree):
    release_steps.date(tree, "1.2.3", "2031-02-03")
    assert run(tree, "bump", "1.1.0", "1.2.3", "1.3.0") == 0
    # every place tools/versions.py reads now names 1.3.0
    v, problems, _ = versions.check(tree)
    assert (v, problems) == ("1.3.0", [])
    assert 'name = "serde"\nversion = "1.0.0"' in (tree / "Cargo.lock").read_text()
    meta = json.loads((tree / "META.json").read_text())
    assert meta["release_status"] == "unstable" and meta["provides"]["hlculid"]["file"] == "sql/hlculid--1.3.0.sql"
    assert '"1.3"' in (tree / "core/README.md").read_text()
    readme = (tree / "README.md").read_text()
    assert "hlculid-1.3.0-pg17" in readme and "VERSION '0.1.0'" in readme and "sql/hlculid--0.1.0--0.2.0.sql" in readme
    assert "sql/released/hlculid--0.1.0.sql" in (tree / "docs/install.md").read_text()
    changelog = (tree / "CHANGELOG.md").read_text()
    assert changelog.index("## 1.3.0 (unreleased)") < changelog.index("## 1.2.3 (2031-02-03)")
    assert "`sql/hlculid--1.2.3--1.3.0.sql`" in changelog
    template = (tree / "sql/src/upgrade/1.2.3--1.3.0.sql.in").read_text()
    assert "\\echo Use \"ALTER EXTENSION hlculid UPDATE TO '1.3.0'\" to load this file. \\quit" in template
    assert template.rstrip().endswith("--@include skipsupport.sql")
    node = json.loads((tree / "clients/node/package-lock.json").read_text())
    assert node["version"] == node["packages"][""]["version"] == "1.3.0"


def test_bump_moves_a_python_dunder_version(tree):
    (tree / "clients/python/pyproject.toml").write_text('[project]\nname = "hlculid"\ndynamic = ["version"]\n')
    (tree / "clients/python/hlculid").mkdir()
    (tree / "clients/python/hlculid/__init__.py").write_text("__version__ = '1.2.3'\n")
    release_steps.bump(tree, "1.1.0", "1.2.3", "1.3.0")
    assert (tree / "clients/python/hlculid/__init__.py").read_text() == "__version__ = '1.3.0'\n"
    assert run(tree, "python-version-is", "1.3.0") == 0
    assert run(tree, "python-version-is", "1.2.3") == 1


def test_bump_refuses_a_tree_without_the_current_version(tree, capsys):
    (tree / "Cargo.toml").write_text('[package]\nversion = "0.0.1"\n')
    with pytest.raises(SystemExit, match="Cargo.toml: nothing matched"):
        run(tree, "bump", "1.1.0", "1.2.3", "1.3.0")


def test_docs_name(tree):
    (tree / "README.md").write_text("hlculid-0.0.1-pg15 and postgresql-15-hlculid_0.0.2-1_amd64.deb, VERSION '0.0.3'\n")
    assert run(tree, "docs-name", "1.2.3") == 0
    assert (tree / "README.md").read_text() == "hlculid-1.2.3-pg15 and postgresql-15-hlculid_1.2.3-1_amd64.deb, VERSION '0.0.3'\n"


def test_client_versions_fill_only_what_is_missing(tree):
    (tree / "clients/node/package.json").write_text(json.dumps({"name": "hlculid", "private": True}))
    (tree / "clients/node/package-lock.json").write_text(json.dumps({"name": "hlculid", "version": "0.9.0",
                                                                     "packages": {"": {}}}))
    assert run(tree, "client-versions", "1.2.3") == 0
    assert json.loads((tree / "clients/node/package.json").read_text())["version"] == "1.2.3"
    lock = json.loads((tree / "clients/node/package-lock.json").read_text())
    assert lock["version"] == "0.9.0" and lock["packages"][""]["version"] == "1.2.3"
