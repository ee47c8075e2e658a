import json
import zipfile

import pytest

import dist_check


def make_zip(path, name, files):
    with zipfile.ZipFile(path, "w") as z:
        for rel, text in files.items():
            z.writestr(f"{name}/{rel}", text)
    return path


def good_files(version):
    files = {f: "x" for f in dist_check.needed(version)}
    files["META.json"] = json.dumps({"version": version})
    return files


def test_a_good_distribution(tmp_path, capsys):
    z = make_zip(tmp_path / "d.zip", "hlculid-1.0.0", good_files("1.0.0"))
    assert dist_check.check(z, "hlculid-1.0.0", "1.0.0") == ([], len(dist_check.needed("1.0.0")))
    assert dist_check.main([str(z), "hlculid-1.0.0", "1.0.0"]) == 0
    assert "files under hlculid-1.0.0/" in capsys.readouterr().err


@pytest.mark.parametrize("change, expected", [
    (lambda f: f.pop("src/lib.rs"), "missing src/lib.rs"),
    (lambda f: f.pop("sql/hlculid--1.0.0.sql"), "missing sql/hlculid--1.0.0.sql"),
    (lambda f: f.update({"target/release/libhlculid.so": "x"}), "built or local file target/release/libhlculid.so"),
    (lambda f: f.update({"clients/node/node_modules/a.js": "x"}), "built or local file clients/node/node_modules/a.js"),
    (lambda f: f.update({"bench/x.pyc": "x"}), "built or local file bench/x.pyc"),
    (lambda f: f.update({"META.json": json.dumps({"version": "0.9.0"})}), "META.json names 0.9.0, the tree is 1.0.0"),
    (lambda f: f.pop("META.json"), "missing META.json"),
])
def test_what_a_distribution_may_not_be(tmp_path, change, expected):
    files = good_files("1.0.0")
    change(files)
    z = make_zip(tmp_path / "d.zip", "hlculid-1.0.0", files)
    problems, _ = dist_check.check(z, "hlculid-1.0.0", "1.0.0")
    assert expected in problems
    with pytest.raises(SystemExit, match="dist: "):
        dist_check.main([str(z), "hlculid-1.0.0", "1.0.0"])


def test_entries_outside_the_top_directory(tmp_path):
    z = tmp_path / "d.zip"
    with zipfile.ZipFile(z, "w") as zz:
        for rel, text in good_files("1.0.0").items():
            zz.writestr(f"hlculid-1.0.0/{rel}", text)
        zz.writestr("stray.txt", "x")
    problems, _ = dist_check.check(z, "hlculid-1.0.0", "1.0.0")
    assert problems == ["entries outside hlculid-1.0.0/: ['stray.txt']"]
