"""tools/publish_plan.py: the registries' answers (canned, as their clients print them) read as
free, taken or not checked; the metadata problems named; the commands name make package's files."""
import json

import pytest

from fixtures import make_tree
from publish_plan import name_on, plan


def canned(rc, out):
    return lambda args, timeout=30: (rc, out)


@pytest.mark.parametrize("registry, rc, out, expected", [
    ("crates.io", 0, 'hlculid-core = "0.6.0"    # HLC-ULID ids\nhlculid-corex = "1.0.0"\n', "taken (newest 0.6.0)"),
    ("crates.io", 0, 'hlculid-corex = "1.0.0"    # another crate\n', "free"),
    ("crates.io", 101, "error: failed to retrieve search results from the registry\nCaused by: got 404\n",
     "not checked: error: failed to retrieve search results from the registry"),
    ("PyPI", 0, "hlculid (0.6.0)\nAvailable versions: 0.6.0\n", "taken (hlculid (0.6.0))"),
    ("PyPI", 1, "ERROR: No matching distribution found for hlculid\n", "free"),
    ("PyPI", 1, "WARNING: Retrying ... Connection refused\nERROR: Could not fetch index\n",
     "not checked: ERROR: Could not fetch index"),
    ("npm", 0, "0.6.0\n", "taken (newest 0.6.0)"),
    ("npm", 1, "npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/hlculid\n", "free"),
    ("npm", 1, "npm error code ETIMEDOUT\n", "not checked: npm error code ETIMEDOUT"),
    ("npm", None, "[Errno 2] No such file or directory: 'npm'", "not checked: [Errno 2] No such file or directory: 'npm'"),
])
def test_each_registry_answer_is_read(registry, rc, out, expected):
    name = "hlculid-core" if registry == "crates.io" else "hlculid"
    assert name_on(registry, name, canned(rc, out)) == expected


def tree(tmp_path, **changes):
    make_tree(tmp_path)
    (tmp_path / "core/Cargo.toml").write_text(
        '[package]\nname = "hlculid-core"\nversion = "1.2.3"\ndescription = "d"\nlicense = "PostgreSQL"\n'
        'readme = "README.md"\nrepository = "https://example.invalid/hlculid"\n')
    (tmp_path / "clients/python/pyproject.toml").write_text(
        '[project]\nname = "hlculid"\nversion = "1.2.3"\ndescription = "d"\nlicense = "PostgreSQL"\n'
        'readme = "README.md"\nrequires-python = ">=3.9"\n'
        + changes.get("urls", '[project.urls]\nRepository = "https://git.example.org/hlculid"\n'))
    node = {"name": "hlculid", "version": "1.2.3", "description": "d", "license": "PostgreSQL",
            "repository": {"type": "git", "url": "git+https://git.example.org/hlculid.git"}}
    node.update(changes.get("node", {}))
    (tmp_path / "clients/node/package.json").write_text(json.dumps(node))
    return tmp_path


def test_the_plan_names_placeholders_and_the_commands_with_the_package_files(tmp_path):
    root = tree(tmp_path)
    text = "\n".join(plan(root, "1.2.3", offline=True))
    assert "crates.io: hlculid-core: name not checked: --offline" in text
    assert "metadata: repository is a placeholder (https://example.invalid/hlculid)" in text
    assert text.count("metadata: complete") == 2  # PyPI and npm
    assert "python3 -m twine upload target/package/hlculid-1.2.3-py3-none-any.whl" in text
    assert "npm publish target/package/hlculid-1.2.3.tgz --access public" in text
    assert "cargo publish -p hlculid-core" in text
    assert "someone else" not in text


def test_missing_metadata_and_a_private_package_are_named(tmp_path):
    root = tree(tmp_path, urls="", node={"private": True, "repository": None})
    text = "\n".join(plan(root, "1.2.3", offline=True))
    assert "no [project.urls]" in text
    assert "private: true (npm refuses to publish it)" in text and "no repository" in text


def test_a_taken_name_is_said_to_need_its_holders_account(tmp_path):
    root = tree(tmp_path)
    text = "\n".join(plan(root, "1.2.3", runner=canned(0, "0.0.1\n")))
    assert "npm: hlculid: name taken (newest 0.0.1)" in text
    assert "someone else holds it" in text
