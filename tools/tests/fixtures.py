"""A small tree that names one version everywhere tools/versions.py looks (for its tests and
tools/release_steps.py's)."""
import json


def make_tree(root, v="1.2.3"):
    files = {
        "Cargo.toml": f'[package]\nname = "hlculid"\nversion = "{v}"\n',
        "core/Cargo.toml": f'[package]\nname = "hlculid-core"\nversion = "{v}"\n',
        "Cargo.lock": (f'version = 4\n\n[[package]]\nname = "hlculid"\nversion = "{v}"\n\n'
                       f'[[package]]\nname = "hlculid-core"\nversion = "{v}"\n\n'
                       f'[[package]]\nname = "serde"\nversion = "1.0.0"\n'),
        "hlculid.control": "comment = 'x'\ndefault_version = '@CARGO_VERSION@'\n",
        "CHANGELOG.md": (f"# Changelog\n\n## {v} (unreleased)\n\n- things\n\n## 0.2.0 (2020-02-01)\n\n- older\n\n"
                         "## 0.1.0 (2020-01-01)\n\n- old\n"),
        "META.json": json.dumps({"name": "hlculid", "version": v, "release_status": "unstable",
                                 "provides": {"hlculid": {"file": f"sql/hlculid--{v}.sql", "version": v}}},
                                indent=2) + "\n",
        "core/README.md": f'```toml\nhlculid-core = {{ version = "{".".join(v.split(".")[:2])}" }}\n```\n',
        "README.md": (f"apt install ./postgresql-15-hlculid_{v}-1_amd64.deb\n"
                      f"tar xzf hlculid-{v}-pg17-linux-x86_64.tar.gz\n"
                      "0.1.0 warned; `CREATE EXTENSION hlculid VERSION '0.1.0'`; sql/hlculid--0.1.0--0.2.0.sql\n"),
        "docs/install.md": (f"pgxn install hlculid-{v}.zip, npm install ./hlculid-{v}.tgz,\n"
                            f"pip install hlculid-{v}-py3-none-any.whl, hlculid-core-{v}.crate, sql/hlculid--{v}.sql,\n"
                            "and sql/released/hlculid--0.1.0.sql is frozen.\n"),
        "clients/python/pyproject.toml": f'[project]\nname = "hlculid"\nversion = "{v}"\n',
        "clients/node/package.json": json.dumps({"name": "hlculid", "version": v}, indent=2) + "\n",
        "clients/node/package-lock.json": json.dumps({"name": "hlculid", "version": v,
                                                      "packages": {"": {"version": v}}}, indent=2) + "\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root
