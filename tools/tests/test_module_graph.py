"""tools/module_graph.py: src/'s modules use no module that uses them, the subsystems' READMEs say
which others each uses, and the module map in src/lib.rs names every module. On the real tree,
and on small trees that break one rule each (so the check is known to catch it)."""
from pathlib import Path

from conftest import REPO

import module_graph


def tree(tmp_path, files):
    for name, text in files.items():
        p = tmp_path / "src" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


MAP = """//! | folder | module | owns |
//! |---|---|---|
//! | `base/` | `errors` | x |
//! | `clock/` | `shared` | x |
//! | | `durable` | x |
"""


def good():
    return {
        "lib.rs": MAP + "mod base;\nmod clock;\n",
        "base/mod.rs": "pub mod errors;\n",
        "base/README.md": "# base\n\nUses: nothing\n",
        "base/errors.rs": "pub fn raise() {}\n#[cfg(test)]\nmod tests {\n    use super::raise;\n}\n",
        "clock/mod.rs": "pub mod durable;\npub mod shared;\n",
        "clock/README.md": "# clock\n\nUses: base\n",
        "clock/shared.rs": "use crate::base::errors;\npub fn clock() { errors::raise() }\n",
        "clock/durable.rs": "use super::shared;\n// crate::clock::durable in a comment is no use\n"
                            "pub fn take() { shared::clock(); let _ = \"crate::base\"; }\n",
    }


def problems(tmp_path, files):
    return module_graph.check(tree(tmp_path, files))[1]


def test_the_real_tree_keeps_every_rule():
    uses, found = module_graph.check(REPO)
    assert found == []
    assert uses["base"] == set()  # the ground floor uses nothing
    assert "generate" not in uses["horizon"] and "horizon" in uses["generate"]


def test_a_tree_that_keeps_the_rules_passes(tmp_path):
    uses, found = module_graph.check(tree(tmp_path, good()))
    assert found == []
    assert uses == {"base": set(), "clock": {"base"}}


def test_a_circle_between_two_modules_is_found(tmp_path):
    files = good()
    files["clock/shared.rs"] += "fn back() { crate::clock::durable::take() }\n"
    assert any("import circle between modules: clock::durable -> clock::shared -> clock::durable" in p
               for p in problems(tmp_path, files))


def test_a_parent_and_a_child_using_each_other_is_a_circle(tmp_path):
    files = good()
    files["clock/mod.rs"] += "pub type V = u64;\npub fn f() { shared::clock() }\n"
    files["clock/shared.rs"] += "fn g(_: super::V) {}\n"
    assert any(p.startswith("import circle between modules: clock -> clock::shared -> clock")
               for p in problems(tmp_path, files))


def test_a_circle_between_subsystems_is_found(tmp_path):
    files = good()
    files["base/errors.rs"] += "use crate::clock::durable;\n"
    files["base/README.md"] = "# base\n\nUses: clock\n"
    assert "circle between subsystems: base -> clock -> base" in problems(tmp_path, files)


def test_a_readme_that_does_not_say_what_its_folder_uses_is_found(tmp_path):
    files = good()
    files["clock/README.md"] = "# clock\n\nUses: nothing\n"
    assert problems(tmp_path, files) == [
        "src/clock/README.md says it uses nothing; its code uses ['base']"]
    del files["clock/README.md"]
    (tmp_path / "src/clock/README.md").unlink()
    assert problems(tmp_path, files) == [
        "src/clock/README.md is missing (what it owns, what it may use)"]


def test_the_module_map_names_every_module_and_no_other(tmp_path):
    files = good()
    files["clock/mark_writer.rs"] = "pub fn register() {}\n"
    files["lib.rs"] = files["lib.rs"].replace("`durable`", "`durable`, `recover`")
    assert problems(tmp_path, files) == [
        "the module map in src/lib.rs does not name `clock::mark_writer`",
        "the module map in src/lib.rs names `clock::recover`, which is no module"]
