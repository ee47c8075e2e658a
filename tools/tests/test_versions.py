import json
import re

import pytest
from fixtures import make_tree

import versions


@pytest.fixture
def tree(tmp_path):
    return make_tree(tmp_path)


def problems(tree):
    return versions.check(tree)[1]


def test_a_consistent_tree(tree):
    v, found, checked = versions.check(tree)
    assert v == "1.2.3" and found == []
    # the artifact names in README.md and docs/ are read, prose about 0.1.0 is not
    assert "README.md:1" in checked and "docs/install.md:2" in checked
    assert not any("README.md:3" in c for c in checked)


@pytest.mark.parametrize("rel, old, new, expected", [
    ("core/Cargo.toml", 'version = "1.2.3"', 'version = "9.9.9"', "core/Cargo.toml version"),
    ("Cargo.lock", 'name = "hlculid-core"\nversion = "1.2.3"', 'name = "hlculid-core"\nversion = "9.9.9"',
     "Cargo.lock hlculid-core"),
    ("hlculid.control", "'@CARGO_VERSION@'", "'9.9.9'", "hlculid.control default_version"),
    ("CHANGELOG.md", "## 1.2.3 (unreleased)", "## 9.9.9 (unreleased)", "CHANGELOG.md newest section"),
    ("META.json", '"version": "1.2.3",', '"version": "9.9.9",', "META.json version"),
    ("core/README.md", '"1.2"', '"1.1"', "core/README.md: hlculid-core"),
    ("README.md", "hlculid_1.2.3-1", "hlculid_1.2.0-1", "README.md:1: Debian package"),
    ("README.md", "hlculid-1.2.3-pg17", "hlculid-0.3.9-pg17", "README.md:2: tarball"),
    ("docs/install.md", "hlculid-1.2.3.zip", "hlculid-0.1.0.zip", "PGXN zip"),
    ("docs/install.md", "hlculid-1.2.3.tgz", "hlculid-0.1.0.tgz", "client package"),
    ("docs/install.md", "hlculid-1.2.3-py3", "hlculid-0.1.0-py3", "client package"),
    ("docs/install.md", "hlculid-core-1.2.3.crate", "hlculid-core-0.1.0.crate", "crate"),
    ("docs/install.md", "sql/hlculid--1.2.3.sql", "sql/hlculid--0.1.0.sql", "install script"),
    ("clients/python/pyproject.toml", 'version = "1.2.3"', 'version = "9.9.9"', "pyproject.toml [project] version"),
    ("clients/python/pyproject.toml", 'version = "1.2.3"', "", "has no version"),
    ("clients/node/package.json", '"version": "1.2.3"', '"version": "9.9.9"', "package.json version"),
])
def test_each_place_is_named_when_it_disagrees(tree, rel, old, new, expected):
    f = tree / rel
    assert old in f.read_text()
    f.write_text(f.read_text().replace(old, new, 1))
    found = problems(tree)
    assert any(expected in p for p in found), found


def test_a_dynamic_python_version_reads_dunder_version(tree):
    (tree / "clients/python/pyproject.toml").write_text('[project]\nname = "hlculid"\ndynamic = ["version"]\n')
    assert any("no __version__" in p for p in problems(tree))
    (tree / "clients/python/hlculid").mkdir()
    (tree / "clients/python/hlculid/__init__.py").write_text('__version__ = "9.9.9"\n')
    assert any("__version__" in p and "9.9.9" in p for p in problems(tree))
    (tree / "clients/python/hlculid/__init__.py").write_text('__version__ = "1.2.3"\n')
    assert problems(tree) == []


def test_a_private_node_package_needs_no_version(tree):
    p = tree / "clients/node/package.json"
    p.write_text(json.dumps({"name": "hlculid", "private": True}))
    assert problems(tree) == []
    p.write_text(json.dumps({"name": "hlculid"}))
    assert any("without a version" in x for x in problems(tree))


def test_a_version_that_is_not_x_y_z(tree):
    (tree / "Cargo.toml").write_text('[package]\nversion = "1.2"\n')
    with pytest.raises(versions.VersionError):
        versions.check(tree)
    with pytest.raises(SystemExit, match="is not X.Y.Z"):
        versions.main([str(tree)])


def test_retarget_moves_artifact_names_only():
    text = ("postgresql-N-hlculid_1.2.3-1_amd64.deb hlculid-1.2.3-pg15 hlculid-1.2.3.zip hlculid-1.2.3.tgz "
            "hlculid-1.2.3.tar.gz hlculid-1.2.3-py3 hlculid-core-1.2.3.crate sql/hlculid--1.2.3.sql "
            "sql/hlculid--1.2.3--1.3.0.sql sql/released/hlculid--1.2.3.sql VERSION '1.2.3' xhlculid-1.2.3.zip")
    out = versions.retarget_artifacts(text, re.escape("1.2.3"), "1.3.0")
    assert out == ("postgresql-N-hlculid_1.3.0-1_amd64.deb hlculid-1.3.0-pg15 hlculid-1.3.0.zip hlculid-1.3.0.tgz "
                   "hlculid-1.3.0.tar.gz hlculid-1.3.0-py3 hlculid-core-1.3.0.crate sql/hlculid--1.3.0.sql "
                   "sql/hlculid--1.2.3--1.3.0.sql sql/released/hlculid--1.2.3.sql VERSION '1.2.3' xhlculid-1.2.3.zip")
    assert versions.retarget_artifacts("hlculid-0.0.7.zip", r"\d+\.\d+\.\d+", "2.0.0") == "hlculid-2.0.0.zip"


def test_main_prints_every_problem(tree, capsys):
    (tree / "core/Cargo.toml").write_text('[package]\nversion = "9.9.9"\n')
    assert versions.main([str(tree)]) == 1
    assert "1 place(s) disagree with Cargo.toml's version 1.2.3" in capsys.readouterr().out
