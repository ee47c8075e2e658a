#!/usr/bin/env python3
"""One version everywhere: Cargo.toml's [package] version is the one source; everything else that
names the current version must name the same one. Fails (listing every difference) unless these
all agree with it:
  core/Cargo.toml, Cargo.lock (hlculid, hlculid-core), hlculid.control (default_version is
  '@CARGO_VERSION@', which pgrx fills from Cargo.toml, or the version itself);
  the Python client: clients/python/pyproject.toml [project] version, or every `__version__ = "..."`
  under clients/python/ (required once there is a pyproject.toml: static or through __version__);
  the Node client: clients/node/package.json "version" (required unless "private": true) and
  package-lock.json's copy of it;
  CHANGELOG.md's newest section (`## X.Y.Z (...)`; the older sections are history, never read);
  META.json (PGXN): "version" and provides.hlculid.version;
  core/README.md's dependency line (`hlculid-core = { version = "X.Y"`: a prefix of the version);
  README.md and docs/**/*.md: the artifact names only (ARTIFACTS below), since those name what
  `make package` and `make dist` build from this tree, and `sql/hlculid--X.Y.Z.sql` (the install
  script's path in the tree; `sql/released/hlculid--X.Y.Z.sql` and the upgrade scripts
  `hlculid--X.Y.Z--A.B.C.sql` are history). Prose about other versions (upgrade notes,
  `CREATE EXTENSION hlculid VERSION '0.3.0'`, "0.3.0 warned ...") is never matched.
retarget_artifacts() rewrites the same names from one version to another (scripts/release.sh
--bump, scripts/release-test.sh).

Usage: tools/versions.py REPO_DIR   (scripts/check-versions.sh [REPO_DIR] calls it)
Tests: tools/tests/test_versions.py.
"""
import json
import pathlib
import re
import sys
import tomllib

SEM = r"(\d+\.\d+\.\d+)"
# What check() reads in the docs: (what, pattern with the version as group 1)
ARTIFACTS = [
    ("Debian package", re.compile(r"postgresql-(?:\d+|N|MAJOR)-hlculid_" + SEM + r"-\d")),
    ("tarball", re.compile(r"(?<![\w-])hlculid-" + SEM + r"-pg")),
    ("PGXN zip", re.compile(r"(?<![\w-])hlculid-" + SEM + r"\.zip")),
    ("client package", re.compile(r"(?<![\w-])hlculid-" + SEM + r"(?=\.tgz|\.tar\.gz|-py\d)")),
    ("crate", re.compile(r"(?<![\w-])hlculid-core-" + SEM + r"\.crate")),
    ("install script", re.compile(r"(?<![\w/])sql/hlculid--" + SEM + r"\.sql")),
]


def retarget_artifacts(text, old, new):
    """text with the artifact names and install script path of version `old` (a regex: a version
    escaped, or r"\\d+\\.\\d+\\.\\d+" for any) renamed to version `new`."""
    text = re.sub(rf"(postgresql-(?:\d+|N|MAJOR)-hlculid_){old}(-\d)", rf"\g<1>{new}\g<2>", text, flags=re.M)
    text = re.sub(rf"(?<![\w-])hlculid-{old}(-pg|\.zip|\.tgz|\.tar\.gz|-py\d)", rf"hlculid-{new}\g<1>", text, flags=re.M)
    text = re.sub(rf"(?<![\w-])hlculid-core-{old}\.crate", f"hlculid-core-{new}.crate", text, flags=re.M)
    text = re.sub(rf"(?<![\w/])sql/hlculid--{old}\.sql", f"sql/hlculid--{new}.sql", text, flags=re.M)
    return text


def doc_files(root):
    """README.md and docs/**/*.md: where artifact names are checked and moved."""
    root = pathlib.Path(root)
    docs = root / "docs"
    return [root / "README.md"] + (sorted(docs.rglob("*.md")) if docs.is_dir() else [])


class VersionError(Exception):
    """Cargo.toml's version is not X.Y.Z."""


def check(root):
    """(version, problems, checked): Cargo.toml's version, every place that disagrees with it, and
    every place read."""
    root = pathlib.Path(root)
    problems, checked = [], []

    def rel(p):
        return str(p.relative_to(root))

    def expect(where, found, want):
        checked.append(where)
        if found != want:
            problems.append(f"{where}: {found!r}, expected {want!r}")

    cargo = tomllib.loads((root / "Cargo.toml").read_text())
    V = cargo["package"]["version"]
    if not re.fullmatch(r"\d+\.\d+\.\d+", V):
        raise VersionError(f"Cargo.toml version {V!r} is not X.Y.Z")

    core = tomllib.loads((root / "core/Cargo.toml").read_text())
    expect("core/Cargo.toml version", core["package"]["version"], V)

    lock = tomllib.loads((root / "Cargo.lock").read_text())
    for name in ("hlculid", "hlculid-core"):
        versions = [p["version"] for p in lock.get("package", []) if p["name"] == name]
        expect(f"Cargo.lock {name}", versions, [V])

    m = re.search(r"^default_version\s*=\s*'([^']*)'", (root / "hlculid.control").read_text(), re.M)
    found = m.group(1) if m else None
    expect("hlculid.control default_version", V if found == "@CARGO_VERSION@" else found, V)

    # Python client: wherever the clients engineer puts its version.
    py = root / "clients/python"
    pyproject = py / "pyproject.toml"
    dunder = []
    for f in sorted(py.rglob("*.py")) if py.is_dir() else []:
        if any(part in (".venv", "build", "dist", "node_modules") or part.endswith(".egg-info")
               for part in f.relative_to(root).parts):
            continue
        for v in re.findall(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", f.read_text(), re.M):
            dunder.append((rel(f), v))
    for where, v in dunder:
        expect(f"{where} __version__", v, V)
    if pyproject.exists():
        project = tomllib.loads(pyproject.read_text()).get("project", {})
        if "version" in project:
            expect(f"{rel(pyproject)} [project] version", project["version"], V)
        elif "version" in project.get("dynamic", []):
            if not dunder:
                problems.append(f"{rel(pyproject)}: version is dynamic but no __version__ under clients/python/")
        else:
            problems.append(f"{rel(pyproject)}: [project] has no version")

    # Node client.
    pkg = root / "clients/node/package.json"
    if pkg.exists():
        data = json.loads(pkg.read_text())
        if "version" in data:
            expect(f"{rel(pkg)} version", data["version"], V)
        elif not data.get("private"):
            problems.append(f"{rel(pkg)}: a publishable package without a version")
        lockf = pkg.with_name("package-lock.json")
        if lockf.exists() and "version" in data:
            ldata = json.loads(lockf.read_text())
            expect(f"{rel(lockf)} version", ldata.get("version"), V)
            expect(f"{rel(lockf)} packages[\"\"].version", ldata.get("packages", {}).get("", {}).get("version"), V)

    # CHANGELOG: only the newest section.
    m = re.search(r"^## (\S+)", (root / "CHANGELOG.md").read_text(), re.M)
    expect("CHANGELOG.md newest section", m.group(1) if m else None, V)

    meta = root / "META.json"
    if meta.exists():
        data = json.loads(meta.read_text())
        expect("META.json version", data.get("version"), V)
        expect("META.json provides.hlculid.version", data.get("provides", {}).get("hlculid", {}).get("version"), V)
    else:
        problems.append("META.json is missing")

    core_readme = root / "core/README.md"
    readme_text = core_readme.read_text() if core_readme.exists() else ""
    for m in re.finditer(r'hlculid-core\s*=\s*\{\s*version\s*=\s*"([^"]+)"', readme_text):
        checked.append("core/README.md dependency line")
        if not (V == m.group(1) or V.startswith(m.group(1) + ".")):
            problems.append(f"core/README.md: hlculid-core = {{ version = {m.group(1)!r} }} does not select {V}")

    # The docs: artifact names and the install script's path only.
    for f in doc_files(root):
        if not f.exists():
            continue
        for n, line in enumerate(f.read_text().splitlines(), 1):
            for what, pat in ARTIFACTS:
                for hit in pat.finditer(line):
                    checked.append(f"{rel(f)}:{n}")
                    if hit.group(1) != V:
                        problems.append(f"{rel(f)}:{n}: {what} `{hit.group(0)}` names {hit.group(1)}, "
                                        f"the tree builds {V}")
    return V, problems, checked


def main(argv):
    if len(argv) != 1:
        sys.exit("usage: tools/versions.py REPO_DIR")
    try:
        V, problems, checked = check(argv[0])
    except VersionError as e:
        sys.exit(f"check-versions: {e}")
    if problems:
        print(f"check-versions: {len(problems)} place(s) disagree with Cargo.toml's version {V}:")
        for p in problems:
            print("  " + p)
        return 1
    print(f"check-versions: {V} everywhere ({len(checked)} places checked)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
