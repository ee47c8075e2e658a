#!/usr/bin/env python3
"""CHANGELOG.md's shape, checked (tools/tests/test_changelog.py, a step of make test):

- one line per change: every entry is a single line starting with `- `, no paragraphs or code
  blocks (the explanations live in the docs pages);
- in released sections, each entry says what a user sees in at most MAX_ENTRY characters and
  links the docs page that explains (`[Page](docs/page.md)` or README.md);
- every function docs/reference.md lists as added in the current version is named in the
  newest section (the new-function checklist's CHANGELOG line, docs/development.md).

Usage: tools/changelog.py [--release] [REPO_DIR]   prints the problems; fails if there are any
  --release: the newest section is held to the released sections' rules (scripts/release.sh
             VERSION, before it dates the section)
"""
import pathlib
import re
import sys

MAX_ENTRY = 400
SECTION = re.compile(r"^## (\d+\.\d+\.\d+) \(([^)]*)\)\s*$")
DOC_LINK = re.compile(r"\]\((docs/[\w./-]+\.md|README\.md)(#[\w-]+)?\)")


def sections(text):
    """[(version, status, [(line number, line)])] in file order; status 'unreleased' or a date."""
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        m = SECTION.match(line)
        if m:
            out.append((m[1], m[2], []))
        elif line.startswith("## "):
            out.append((None, line[3:], []))
        elif out:
            out[-1][2].append((n, line))
    return out


def shape_problems(text, release=False):
    problems = []
    for k, (version, status, lines) in enumerate(sections(text)):
        if version is None:
            problems.append(f"a section heading that is not '## X.Y.Z (unreleased|YYYY-MM-DD)': '## {status}'")
            continue
        released = status != "unreleased" or (release and k == 0)
        for n, line in lines:
            if not line.strip():
                continue
            where = f"CHANGELOG.md:{n} ({version})"
            if not line.startswith("- "):
                problems.append(f"{where}: not an entry ('- ' and one line per change): {line[:60]!r}")
                continue
            if released and len(line) > MAX_ENTRY:
                problems.append(f"{where}: {len(line)} characters (at most {MAX_ENTRY}: the explanation goes in the docs)")
            if released and not DOC_LINK.search(line):
                problems.append(f"{where}: no link to the docs page that explains: {line[:60]!r}")
    return problems


def functions_added(reference, version):
    """The function names the reference's Functions table lists as added in version."""
    names = set()
    in_functions = False
    for line in reference.splitlines():
        if line.startswith("## "):
            in_functions = line.strip() == "## Functions"
        if in_functions and line.startswith("|"):
            cells = [c.strip() for c in line.split("|")[1:-1]]
            if cells and cells[-1] == version:
                names |= set(re.findall(r"`(hlculid_\w+)\(", cells[0]))
    return names


def missing_functions(changelog, reference, version):
    """Functions added in version (per the reference) that the newest CHANGELOG section never names."""
    secs = sections(changelog)
    newest = "\n".join(line for _, line in secs[0][2]) if secs else ""
    return sorted(f for f in functions_added(reference, version) if not re.search(rf"\b{f}\b", newest))


def problems(root, release=False):
    root = pathlib.Path(root)
    changelog = (root / "CHANGELOG.md").read_text()
    version = re.search(r'^version = "([^"]+)"', (root / "Cargo.toml").read_text(), re.M)[1]
    out = shape_problems(changelog, release)
    out += [f"{f} is added in {version} (docs/reference.md) but the CHANGELOG's {version} section does not name it"
            for f in missing_functions(changelog, (root / "docs/reference.md").read_text(), version)]
    return out


if __name__ == "__main__":
    args = sys.argv[1:]
    release = "--release" in args
    args = [a for a in args if a != "--release"]
    found = problems(args[0] if args else pathlib.Path(__file__).resolve().parents[1], release)
    print("\n".join(found) or "changelog: one line per change, every new function named")
    sys.exit(1 if found else 0)
