#!/usr/bin/env python3
"""What publishing VERSION's client packages takes, for whoever holds the registry accounts
(scripts/release.sh --publish-plan prints it; nothing is uploaded): for the crate (crates.io),
the Python package (PyPI) and the Node package (npm), each

  - whether the name is free, asked of the registry with its own client (`cargo search`,
    `pip index versions`, `npm view`); "not checked" with the reason when the registry cannot be
    reached (or with --offline). A name taken before the first upload is a name someone else holds:
    publishing under it needs their account, or another name;
  - the metadata the registry shows, and what is missing or still a placeholder
    (`https://example.invalid/...`, the repository URL until the project has one);
  - the exact commands, with the files `make package` writes.

Usage: tools/publish_plan.py [--root DIR] [--offline] VERSION
Tests: tools/tests/test_publish_plan.py (the registries replaced by canned answers).
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import tomllib

PLACEHOLDER = "example.invalid"


def run_client(args, timeout=30):
    """(returncode, stdout + stderr) of a registry client; (None, reason) when it cannot run."""
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)
    return r.returncode, r.stdout + r.stderr


def name_on(registry, name, runner=run_client):
    """'free', 'taken (...)' or 'not checked: why', asked of the registry's own client."""
    if registry == "crates.io":
        rc, out = runner(["cargo", "search", name, "--limit", "20"])
        if rc == 0:
            m = re.search(rf'^{re.escape(name)} = "([^"]+)"', out, re.M)
            return f"taken (newest {m.group(1)})" if m else "free"
    elif registry == "PyPI":
        rc, out = runner([sys.executable, "-m", "pip", "index", "versions", name, "--disable-pip-version-check"])
        if rc == 0 and re.search(rf"^{re.escape(name)} \(", out, re.M | re.I):
            return "taken (" + out.strip().splitlines()[0] + ")"
        if rc is not None and "No matching distribution found" in out:
            return "free"
    elif registry == "npm":
        rc, out = runner(["npm", "view", name, "version", "--registry=https://registry.npmjs.org/"])
        if rc == 0 and out.strip():
            return f"taken (newest {out.strip().splitlines()[-1]})"
        if rc is not None and "E404" in out:
            return "free"
    else:
        raise ValueError(registry)
    lines = [l.strip() for l in (out or "").splitlines() if l.strip()]
    said = [l for l in lines if re.search(r"error|failed|timed out", l, re.I)] or lines
    return "not checked: " + (said[0][:160] if said else "the registry did not answer")


def placeholders(fields):
    return [f"{k} is a placeholder ({v})" for k, v in fields.items() if isinstance(v, str) and PLACEHOLDER in v]


def crate_metadata(root):
    pkg = tomllib.loads((root / "core/Cargo.toml").read_text())["package"]
    problems = [f"no {k}" for k in ("description", "license", "repository", "readme") if not pkg.get(k)]
    problems += placeholders({k: pkg.get(k) for k in ("repository", "homepage", "documentation")})
    return pkg["name"], problems


def python_metadata(root):
    project = tomllib.loads((root / "clients/python/pyproject.toml").read_text())["project"]
    problems = [f"no {k}" for k in ("description", "license", "readme", "requires-python") if not project.get(k)]
    urls = project.get("urls") or {}
    if not urls:
        problems.append("no [project.urls] (PyPI shows no link to the repository)")
    problems += placeholders(urls)
    return project["name"], problems


def node_metadata(root):
    pkg = json.loads((root / "clients/node/package.json").read_text())
    problems = ["private: true (npm refuses to publish it)"] if pkg.get("private") else []
    problems += [f"no {k}" for k in ("description", "license") if not pkg.get(k)]
    repo = pkg.get("repository")
    if not repo:
        problems.append("no repository (npm shows no link to it)")
    problems += placeholders({"repository": repo.get("url") if isinstance(repo, dict) else repo,
                              "homepage": pkg.get("homepage")})
    return pkg["name"], problems


def plan(root, version, offline=False, runner=run_client):
    """The plan's lines."""
    out = [f"Publishing the clients of {version} (nothing is uploaded by this script; each command needs that "
           "registry's account):"]
    entries = [
        ("crates.io", crate_metadata(root), None,
         ["cargo login                      # once: an API token from https://crates.io/settings/tokens",
          "cargo publish -p hlculid-core    # from the tagged tree (scripts/crate-check.sh --verify checked it)"]),
        ("PyPI", python_metadata(root), f"target/package/hlculid-{version}-py3-none-any.whl",
         ["python3 -m pip install twine     # once; an API token from https://pypi.org/manage/account/token/",
          f"python3 -m twine upload target/package/hlculid-{version}-py3-none-any.whl"]),
        ("npm", node_metadata(root), f"target/package/hlculid-{version}.tgz",
         ["npm login                        # once",
          f"npm publish target/package/hlculid-{version}.tgz --access public"]),
    ]
    taken = False
    for registry, (name, problems), file, commands in entries:
        status = "not checked: --offline" if offline else name_on(registry, name, runner)
        taken |= status.startswith("taken")
        out.append(f"  {registry}: {name}: name {status}")
        out.append("    metadata: " + ("complete" if not problems else "; ".join(problems)))
        if file:
            out.append(f"    file: {file} (make package)")
        out += ["    " + c for c in commands]
    out.append("Then the docs' install lines move to the registry forms (docs/clients.md, docs/install.md, "
               "clients/*/README.md, core/README.md) and tests/clients/test_install_docs.py learns to run them.")
    if taken:
        out.append("A name shown taken: unless an earlier release of this project put it there, someone else "
                   "holds it, and publishing under it needs their account (or another name).")
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=".")
    ap.add_argument("--offline", action="store_true")
    ap.add_argument("version")
    a = ap.parse_args(argv)
    print("\n".join(plan(pathlib.Path(a.root), a.version, a.offline)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
