#!/usr/bin/env python3
"""The modules of src/ and what each uses, from the source text (no build): every `crate::` and
`super::` path, in `use` lines and in code, is an edge to the module it names (the longest prefix
that is a module). Checks, for docs/development.md's rules:

- no import circle between modules (a module never uses, through others, one that uses it);
- no circle between the subsystems (the top-level folders of src/), and each folder's README.md
  says exactly which others it uses, on its `Uses:` line (`Uses: nothing` for none);
- the module map at the top of src/lib.rs names every module.

Usage: tools/module_graph.py [--root DIR]   prints the subsystems' edges; exits 1 on a problem.
Run by tools/tests/test_module_graph.py (the step "tools and the test matrix").
"""
import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def module_of(path, src):
    """The module path of a file under src/: src/lib.rs is '', src/a/mod.rs 'a', src/a/b.rs 'a::b'."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts == ["lib"]:
        return ""
    if parts[-1] == "mod":
        parts = parts[:-1]
    return "::".join(parts)


def strip_comments(text):
    """The code without comments and string literals (paths in either are not uses)."""
    text = re.sub(r'r#+"(?:.|\n)*?"#+', '""', text)  # raw strings (SQL)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return re.sub(r"//[^\n]*", "", text)


def expand_use(tree):
    """`a::{b, c::{d}}` -> ['a::b', 'a::c::d']."""
    tree = tree.strip()
    m = re.match(r"^([\w:]*?)::\{(.*)\}$", tree, re.S)
    if not m:
        return [tree]
    prefix, inner = m.group(1), m.group(2)
    items, depth, cur = [], 0, ""
    for ch in inner:
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    out = []
    for item in filter(None, (i.strip() for i in items)):
        for path in expand_use(item):
            out.append(prefix if path == "self" else f"{prefix}::{path}")
    return out


def paths_in(code):
    """Every path the code names that starts with crate:: or super::, with the number of inline
    modules (`mod tests { ... }`) it is inside, which its super:: counts from."""
    found = []
    nesting = inline_nesting(code)
    for m in re.finditer(r"\buse\s+((?:crate|super)::[^;]*);", code):
        depth = nesting(m.start())
        found += [(p, depth) for p in expand_use(re.sub(r"\s+as\s+\w+", "", m.group(1)))]
    for m in re.finditer(r"(?<![\w:])((?:crate|super)(?:::\w+)+)", code):
        if not re.search(r"\buse\s+[^;]*$", code[: m.start()].rsplit(";", 1)[-1]):
            found.append((m.group(1), nesting(m.start())))
    return found


def inline_nesting(code):
    """A function: how many inline `mod NAME {` blocks enclose a position of the code."""
    opens = []  # (start, end) of each inline module's block
    for m in re.finditer(r"\bmod\s+\w+\s*\{", code):
        depth, i = 0, m.end() - 1
        while i < len(code):
            depth += code[i] == "{"
            depth -= code[i] == "}"
            if depth == 0:
                break
            i += 1
        opens.append((m.end(), i))
    return lambda pos: sum(1 for a, b in opens if a <= pos <= b)


def child_uses(code, here, modules):
    """The child modules the code names by their bare name (`table::put` in prepared/mod.rs)."""
    prefix = here + "::" if here else ""
    children = {m[len(prefix):] for m in modules if m.startswith(prefix) and m and "::" not in m[len(prefix):]}
    return {prefix + c for c in children if re.search(r"(?<![\w:])" + c + r"::", code)}


def resolve(path, here, modules, depth=0):
    """The module a path names from module `here` (inside `depth` inline modules), or None (the
    crate root, another crate)."""
    segs = path.split("::")
    if segs[0] == "crate":
        base, segs = [], segs[1:]
    else:
        base = (here.split("::") if here else []) + ["(inline)"] * depth
        while segs and segs[0] == "super":
            base, segs = base[:-1], segs[1:]
    best = None
    for i in range(len(segs) + 1):
        cand = "::".join(base + segs[:i])
        if cand in modules:
            best = cand
    return best or None


def graph(src):
    files = sorted(src.rglob("*.rs"))
    modules = {module_of(f, src): f for f in files}
    edges = {m: set() for m in modules}
    for m, f in modules.items():
        code = strip_comments(f.read_text())
        targets = {resolve(p, m, modules, depth) for p, depth in paths_in(code)}
        targets |= child_uses(code, m, modules) if m else set()  # the root declares every module
        edges[m] = {t for t in targets if t and t != m}
    return modules, edges


def find_cycle(edges):
    """A circle in the graph, as a list of nodes, or None."""
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for t in sorted(edges.get(n, ())):
            if state.get(t) == 1:
                return stack[stack.index(t):] + [t]
            if t not in state:
                c = visit(t)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(edges):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def subsystem(m):
    return m.split("::")[0]


def module_map(lib):
    """The modules the map at the top of src/lib.rs names: rows `| `folder/` | `a`, `b` | ... |`,
    an empty folder cell continuing the row above, `src/` for the files beside lib.rs."""
    named, folder = set(), None
    for line in lib.read_text().splitlines():
        cells = [c.strip() for c in line.removeprefix("//!").strip().split("|")]
        if not line.startswith("//! |") or len(cells) < 4 or cells[1] in ("folder", "---"):
            continue
        if cells[1]:
            folder = cells[1].strip("`").rstrip("/")
        for m in re.findall(r"`([\w:]+)`", cells[2]):
            named.add(m if folder == "src" else f"{folder}::{m}")
    return named


def check(root):
    src = root / "src"
    modules, edges = graph(src)
    problems = []
    c = find_cycle(edges)
    if c:
        problems.append("import circle between modules: " + " -> ".join(c))
    folders = sorted(d.name for d in src.iterdir() if d.is_dir())
    uses = {f: set() for f in folders}
    for m, ts in edges.items():
        for t in ts:
            a, b = subsystem(m), subsystem(t)
            if a in uses and b in uses and a != b:
                uses[a].add(b)
    c = find_cycle(uses)
    if c:
        problems.append("circle between subsystems: " + " -> ".join(c))
    for f in folders:
        readme = src / f / "README.md"
        if not readme.exists():
            problems.append(f"src/{f}/README.md is missing (what it owns, what it may use)")
            continue
        line = re.search(r"^Uses: (.*)$", readme.read_text(), re.M)
        if not line:
            problems.append(f"src/{f}/README.md has no 'Uses:' line")
            continue
        said = set(re.findall(r"`?(\w+)/?`?", line.group(1))) - {"nothing", "and"}
        if said != uses[f]:
            problems.append(
                f"src/{f}/README.md says it uses {sorted(said) or 'nothing'}; "
                f"its code uses {sorted(uses[f]) or 'nothing'}"
            )
    named = module_map(src / "lib.rs")
    expected = {m for m in modules if m and m not in folders}
    for m in sorted(expected - named):
        problems.append(f"the module map in src/lib.rs does not name `{m}`")
    for m in sorted(named - expected):
        problems.append(f"the module map in src/lib.rs names `{m}`, which is no module")
    return uses, problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=str(ROOT))
    args = ap.parse_args()
    uses, problems = check(Path(args.root))
    for f in sorted(uses):
        print(f"{f}/ uses {', '.join(sorted(uses[f])) or 'nothing'}")
    for p in problems:
        print("module_graph:", p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
