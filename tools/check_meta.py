#!/usr/bin/env python3
"""META.json against the PGXN Meta Spec 1.0.0 (https://pgxn.org/spec/; the same rules as the JSON
schemas of github.com/pgxn/meta, schema/v1/), written from the spec since no validator installs
offline (PGXN's own is Perl, PGXN::Meta::Validator; pgxn_meta is a Rust crate to build):
  required: name, version, abstract, maintainer, license, provides, meta-spec (1.0.0);
  optional: description, generated_by, tags, no_index, prereqs, release_status, resources; keys
  starting x_/X_; nothing else. Versions are SemVer; license a known shortcut (or a list of
  them, or {name: url}); provides.<ext> has file and version (abstract, docfile optional);
  prereqs.<phase>.<relationship>.<name> = version range; paths relative, unix-style.
Then this tree's own rules: every path it names exists, the extension is hlculid with its
control file, resources agree with core/Cargo.toml's repository/homepage. (The version is
tools/versions.py's.)

Usage: tools/check_meta.py META.json   (scripts/check-meta.sh [META.json] calls it)
Tests: tools/tests/test_check_meta.py.
"""
import json
import pathlib
import re
import sys
import tomllib

SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                    r"(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?")
LICENSES = {"agpl_3", "apache_1_1", "apache_2_0", "artistic_1", "artistic_2", "bsd", "freebsd",
            "gfdl_1_2", "gfdl_1_3", "gpl_1", "gpl_2", "gpl_3", "lgpl_2_1", "lgpl_3_0", "mit",
            "mozilla_1_0", "mozilla_1_1", "openssl", "perl_5", "postgresql", "qpl_1_0", "ssleay",
            "sun", "zlib", "open_source", "restricted", "unrestricted", "unknown"}
CUSTOM = re.compile(r"^[xX]_.")
TOP = {"name", "version", "abstract", "maintainer", "license", "provides", "meta-spec",
       "description", "generated_by", "tags", "no_index", "prereqs", "release_status", "resources"}
REQUIRED = ["name", "version", "abstract", "maintainer", "license", "provides", "meta-spec"]


class LoadError(Exception):
    """META.json cannot be read or is not JSON."""


def check(meta_path):
    """The problems of META.json at meta_path (its directory is the distribution's top), as
    "where: what" strings; [] when it is valid. Raises LoadError when it cannot be read."""
    meta_path = pathlib.Path(meta_path).resolve()
    root = meta_path.parent  # paths in META.json are relative to the distribution's top
    errors = []

    def err(where, msg):
        errors.append(f"{where}: {msg}")

    def string(where, v, min_len=1):
        if not isinstance(v, str) or len(v) < min_len:
            err(where, f"must be a string of at least {min_len} character(s), not {v!r}")
            return False
        return True

    def term(where, v):
        # term.schema.json: two or more characters, no whitespace, slash, backslash or colon
        if string(where, v, 2) and re.search(r"[\s/\\:]", v):
            err(where, f"{v!r} may not contain whitespace, '/', '\\' or ':'")

    def semver(where, v):
        if not isinstance(v, str) or not SEMVER.fullmatch(v):
            err(where, f"{v!r} is not a SemVer version")

    def path(where, v):
        if string(where, v) and (v.startswith("/") or "\\" in v or ".." in v.split("/")):
            err(where, f"{v!r} is not a relative unix path inside the distribution")
        elif isinstance(v, str) and not (root / v).exists():
            err(where, f"{v} does not exist in the tree")

    def version_range(where, v):
        if v == 0 or v == "0":
            return
        if not isinstance(v, str):
            return err(where, f"a version range is a string (or 0), not {v!r}")
        for part in v.split(","):
            m = re.fullmatch(r"\s*(?:(==|!=|>=|<=|>|<)\s*)?(\S+)\s*", part)
            if not m:
                err(where, f"{part!r} is not a version range")
            else:
                semver(where, m.group(2))

    def uri(where, v):
        if string(where, v) and not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$", v):
            err(where, f"{v!r} is not a URI")

    def keys(where, obj, allowed, required=()):
        if not isinstance(obj, dict):
            err(where, f"must be an object, not {type(obj).__name__}")
            return False
        for k in required:
            if k not in obj:
                err(where, f"required key {k!r} is missing")
        for k in obj:
            if k not in allowed and not CUSTOM.match(k):
                err(where, f"unknown key {k!r}")
        return True

    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError) as e:
        raise LoadError(f"{meta_path}: {e}") from e

    if not keys("META.json", meta, TOP, REQUIRED):
        return errors
    if "name" in meta:
        term("name", meta["name"])
    if "version" in meta:
        semver("version", meta["version"])
    if "abstract" in meta:
        string("abstract", meta["abstract"])
    for k in ("description", "generated_by"):
        if k in meta:
            string(k, meta[k])

    m = meta.get("maintainer")
    if isinstance(m, list):
        if not m:
            err("maintainer", "an empty list")
        for i, x in enumerate(m):
            string(f"maintainer[{i}]", x)
    elif m is not None:
        string("maintainer", m)

    lic = meta.get("license")
    if isinstance(lic, str):
        if lic not in LICENSES:
            err("license", f"{lic!r} is not one of the spec's shortcuts")
    elif isinstance(lic, list):
        if not lic:
            err("license", "an empty list")
        for x in lic:
            if x not in LICENSES:
                err("license", f"{x!r} is not one of the spec's shortcuts")
    elif isinstance(lic, dict):
        if not lic:
            err("license", "an empty object")
        for k, v in lic.items():
            uri(f"license.{k}", v)
    elif lic is not None:
        err("license", f"must be a string, list or object, not {lic!r}")

    prov = meta.get("provides")
    if prov is not None and not isinstance(prov, dict):
        err("provides", "must be an object")
    if isinstance(prov, dict):
        if not prov:
            err("provides", "must name at least one extension")
        for ext, d in prov.items():
            term(f"provides key {ext!r}", ext)
            w = f"provides.{ext}"
            if keys(w, d, {"file", "version", "abstract", "docfile", "docpath"}, ["file", "version"]):
                if "file" in d:
                    path(f"{w}.file", d["file"])
                if "version" in d:
                    semver(f"{w}.version", d["version"])
                if "abstract" in d:
                    string(f"{w}.abstract", d["abstract"])
                if "docfile" in d:
                    path(f"{w}.docfile", d["docfile"])

    ms = meta.get("meta-spec")
    if ms is not None and keys("meta-spec", ms, {"version", "url"}, ["version"]):
        if ms.get("version") != "1.0.0":
            err("meta-spec.version", f"{ms.get('version')!r}, expected '1.0.0'")
        if "url" in ms:
            uri("meta-spec.url", ms["url"])

    tags = meta.get("tags")
    if tags is not None:
        if not isinstance(tags, list) or not tags:
            err("tags", "must be a non-empty list")
        else:
            for i, t in enumerate(tags):
                if string(f"tags[{i}]", t) and len(t) > 255:
                    err(f"tags[{i}]", "longer than 255 characters")

    if "release_status" in meta and meta["release_status"] not in ("stable", "testing", "unstable"):
        err("release_status", f"{meta['release_status']!r} is not stable, testing or unstable")

    ni = meta.get("no_index")
    if ni is not None and keys("no_index", ni, {"file", "directory"}):
        for k, v in ni.items():
            for i, p in enumerate(v if isinstance(v, list) else [v]):
                string(f"no_index.{k}[{i}]", p)

    pre = meta.get("prereqs")
    if pre is not None and keys("prereqs", pre, {"configure", "build", "test", "runtime", "develop"}):
        for phase, rels in pre.items():
            if keys(f"prereqs.{phase}", rels, {"requires", "recommends", "suggests", "conflicts"}):
                for rel, deps in rels.items():
                    if isinstance(deps, dict):
                        for name, rng in deps.items():
                            term(f"prereqs.{phase}.{rel} key", name)
                            version_range(f"prereqs.{phase}.{rel}.{name}", rng)
                    else:
                        err(f"prereqs.{phase}.{rel}", "must be an object")

    res = meta.get("resources")
    if res is not None and keys("resources", res, {"homepage", "bugtracker", "repository"}):
        if "homepage" in res:
            uri("resources.homepage", res["homepage"])
        bt = res.get("bugtracker")
        if bt is not None and keys("resources.bugtracker", bt, {"web", "mailto"}):
            if "web" in bt:
                uri("resources.bugtracker.web", bt["web"])
            if "mailto" in bt:
                string("resources.bugtracker.mailto", bt["mailto"])
        rp = res.get("repository")
        if rp is not None and keys("resources.repository", rp, {"url", "web", "type"}):
            for k in ("url", "web"):
                if k in rp:
                    uri(f"resources.repository.{k}", rp[k])
            if "type" in rp and (not isinstance(rp["type"], str) or not re.fullmatch(r"[a-z]+", rp["type"])):
                err("resources.repository.type", f"{rp['type']!r} must be a lower-case word (git, svn, ...)")

    # This tree's rules.
    if meta.get("name") != "hlculid" or "hlculid" not in (prov if isinstance(prov, dict) else {}):
        err("META.json", "the distribution and its extension are both named hlculid")
    if not (root / "hlculid.control").exists():
        err("META.json", "hlculid.control is missing")
    core_toml = root / "core/Cargo.toml"
    core = tomllib.loads(core_toml.read_text())["package"] if core_toml.exists() else {}
    if not core_toml.exists():
        err("META.json", "core/Cargo.toml is missing")
    repo_res = (res if isinstance(res, dict) else {}).get("repository", {})
    web = repo_res.get("web") if isinstance(repo_res, dict) else None
    if core_toml.exists() and core.get("repository") != web:
        err("resources.repository.web", f"{web!r}, but core/Cargo.toml's repository is {core.get('repository')!r}")
    if core.get("homepage") and core.get("homepage") != (res if isinstance(res, dict) else {}).get("homepage"):
        err("resources.homepage", f"differs from core/Cargo.toml's homepage {core.get('homepage')!r}")
    return errors


def main(argv):
    if len(argv) != 1:
        sys.exit("usage: tools/check_meta.py META.json")
    meta_path = pathlib.Path(argv[0]).resolve()
    try:
        errors = check(meta_path)
    except LoadError as e:
        sys.exit(f"check-meta: {e}")
    if errors:
        print(f"check-meta: {meta_path} does not meet the PGXN Meta Spec 1.0.0 (or this tree's rules):")
        for e in errors:
            print("  " + e)
        return 1
    meta = json.loads(meta_path.read_text())
    print(f"check-meta: {meta_path.name} is valid PGXN Meta Spec 1.0.0 ({meta['name']} {meta['version']})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
