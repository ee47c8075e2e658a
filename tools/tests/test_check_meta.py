import json

import pytest

import check_meta


META = {
    "name": "hlculid", "abstract": "ids", "version": "1.2.3", "maintainer": "someone <a@b.c>",
    "license": "postgresql",
    "provides": {"hlculid": {"abstract": "ids", "file": "sql/hlculid--1.2.3.sql", "docfile": "README.md",
                             "version": "1.2.3"}},
    "prereqs": {"runtime": {"requires": {"PostgreSQL": "15.0.0"}}},
    "resources": {"homepage": "https://example.invalid/h", "bugtracker": {"web": "https://example.invalid/h/i"},
                  "repository": {"url": "https://example.invalid/h.git", "web": "https://example.invalid/h",
                                 "type": "git"}},
    "tags": ["id"], "release_status": "unstable",
    "meta-spec": {"version": "1.0.0", "url": "https://pgxn.org/meta/spec.txt"},
}


@pytest.fixture
def tree(tmp_path):
    """A distribution's top: a valid META.json with the files it names."""
    files = {"hlculid.control": "default_version = '@CARGO_VERSION@'\n", "README.md": "# hlculid\n",
             "sql/hlculid--1.2.3.sql": "-- sql\n",
             "core/Cargo.toml": '[package]\nname = "hlculid-core"\nrepository = "https://example.invalid/h"\n'
                                'homepage = "https://example.invalid/h"\n'}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "META.json").write_text(json.dumps(META))
    return tmp_path


def edit(tree, change):
    meta = json.loads((tree / "META.json").read_text())
    change(meta)
    (tree / "META.json").write_text(json.dumps(meta))
    return check_meta.check(tree / "META.json")


def test_a_copy_with_its_files_is_valid(tree):
    assert check_meta.check(tree / "META.json") == []
    assert check_meta.main([str(tree / "META.json")]) == 0


@pytest.mark.parametrize("change, expected", [
    (lambda m: m.pop("abstract"), "required key 'abstract' is missing"),
    (lambda m: m.update(bogus=1), "unknown key 'bogus'"),
    (lambda m: m.update(x_custom=1), None),
    (lambda m: m.update(version="1.0"), "'1.0' is not a SemVer version"),
    (lambda m: m.update(license="gpl"), "'gpl' is not one of the spec's shortcuts"),
    (lambda m: m.update(license=["mit", "postgresql"]), None),
    (lambda m: m.update(license={"mine": "not a uri"}), "is not a URI"),
    (lambda m: m.update(tags=[]), "tags: must be a non-empty list"),
    (lambda m: m.update(release_status="beta"), "is not stable, testing or unstable"),
    (lambda m: m["meta-spec"].update(version="2.0.0"), "expected '1.0.0'"),
    (lambda m: m["provides"]["hlculid"].update(file="../x.sql"), "not a relative unix path"),
    (lambda m: m["provides"]["hlculid"].update(file="sql/none.sql"), "sql/none.sql does not exist"),
    (lambda m: m.update(prereqs={"runtime": {"requires": {"PostgreSQL": ">= 15.0.0, < 19"}}}), "'19' is not a SemVer"),
    (lambda m: m.update(prereqs={"runtime": {"requires": {"PostgreSQL": ">= 15.0.0"}}}), None),
    (lambda m: m.update(prereqs={"play": {}}), "unknown key 'play'"),
    (lambda m: m.update(homepage="x"), "unknown key 'homepage'"),
    (lambda m: m["resources"].update(homepage="https://example.invalid/other"), "differs from core/Cargo.toml's homepage"),
    (lambda m: m.update(name="other"), "both named hlculid"),
    (lambda m: m["resources"]["repository"].update(web="https://example.org/x"), "core/Cargo.toml's repository"),
    (lambda m: m["resources"]["repository"].update(type="Git"), "must be a lower-case word"),
])
def test_each_rule(tree, change, expected):
    problems = check_meta.check(tree / "META.json") if change is None else edit(tree, change)
    if expected is None:
        assert problems == []
    else:
        assert any(expected in p for p in problems), problems


def test_a_missing_control_file(tree):
    (tree / "hlculid.control").unlink()
    assert "META.json: hlculid.control is missing" in check_meta.check(tree / "META.json")


def test_unreadable_json_is_an_error_not_a_crash(tree, capsys):
    (tree / "META.json").write_text("{")
    with pytest.raises(SystemExit, match="check-meta: "):
        check_meta.main([str(tree / "META.json")])


def test_main_lists_the_problems(tree, capsys):
    edit(tree, lambda m: m.update(license="gpl"))
    assert check_meta.main([str(tree / "META.json")]) == 1
    out = capsys.readouterr().out
    assert "does not meet the PGXN Meta Spec 1.0.0" in out and "'gpl'" in out
