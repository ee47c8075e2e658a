#!/usr/bin/env python3
"""What make dist's zip holds (scripts/dist.sh): every entry under one top directory NAME/, the
files PGXN's installers and pgrx need, nothing built or local (target/, .venv, libraries,
packages), and a META.json naming VERSION.

Usage: tools/dist_check.py ZIP NAME VERSION   (prints the file count to stderr; fails listing
what is wrong)
Tests: tools/tests/test_dist_check.py.
"""
import json
import sys
import zipfile

LOCAL_TOPS = ("target", ".venv", ".demo", ".pgdata", "node_modules")
BUILT_SUFFIXES = (".so", ".pyc", ".deb", ".tar.gz", ".zip")


def needed(version):
    """The files a distribution of VERSION must hold, relative to its top directory."""
    return ["META.json", "hlculid.control", f"sql/hlculid--{version}.sql", "Cargo.toml", "Cargo.lock",
            "LICENSE", "README.md", "CHANGELOG.md", "src/lib.rs", "core/Cargo.toml", "core/src/lib.rs"]


def check(zpath, name, version):
    """(problems, number of files under NAME/)"""
    with zipfile.ZipFile(zpath) as z:
        names = z.namelist()
        problems = []
        outside = [n for n in names if not n.startswith(name + "/")]
        if outside:
            problems.append(f"entries outside {name}/: {outside[:5]}")
        files = {n[len(name) + 1:] for n in names if n.startswith(name + "/")}
        for f in needed(version):
            if f not in files:
                problems.append(f"missing {f}")
        for f in sorted(files):
            top = f.split("/")[0]
            if top in LOCAL_TOPS or "/node_modules/" in f or f.endswith(BUILT_SUFFIXES):
                problems.append(f"built or local file {f}")
        if "META.json" in files:
            meta = json.loads(z.read(f"{name}/META.json"))
            if meta.get("version") != version:
                problems.append(f"META.json names {meta.get('version')}, the tree is {version}")
    return problems, len(files)


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: tools/dist_check.py ZIP NAME VERSION")
    zpath, name, version = argv
    problems, n = check(zpath, name, version)
    if problems:
        sys.exit("dist: " + zpath + ":\n  " + "\n  ".join(problems))
    print(f"dist: {n} files under {name}/", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
