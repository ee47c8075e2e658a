"""One list of accepted and rejected text forms (tests/data/text_forms.json) against the four
readers of an hlculid's text: the server's input function, the Python recipe's Hlculid, the Node
recipe's canonical() (here), and the crate's parser (core/tests/text_forms.rs). Each accepts
exactly the accepted inputs, reads each as its canonical value, and refuses every other."""

import json
import subprocess
from pathlib import Path

import psycopg
import pytest
from hlculid import Hlculid

HERE = Path(__file__).resolve().parent
FORMS = json.loads((HERE.parent / "data" / "text_forms.json").read_text(encoding="utf-8"))
ACCEPTED = [(c["input"], c["canonical"]) for c in FORMS["accepted"]]
REJECTED = [c["input"] for c in FORMS["rejected"]]


def test_the_list_covers_every_form_and_the_usual_mistakes():
    lengths = {len(i) for i, _ in ACCEPTED}
    assert lengths == {35, 32, 36, 26}
    assert "" in REJECTED and any(i != i.strip() for i in REJECTED)
    assert any(not i.isascii() for i in REJECTED) and any(i.startswith("{") for i in REJECTED)
    assert len(set(REJECTED) | {i for i, _ in ACCEPTED}) == len(REJECTED) + len(ACCEPTED)


def test_server(server):
    major = int(server.major)
    with server.connect() as conn:
        for text, want in ACCEPTED:
            assert conn.execute("SELECT %s::hlculid::text", (text,)).fetchone()[0] == want, repr(text)
        for text in REJECTED:
            # 22P02, or 22023 for a random uuid in the uuid's spelling (the uuid cast's SQLSTATE)
            with pytest.raises((psycopg.errors.InvalidTextRepresentation, psycopg.errors.InvalidParameterValue)) as e:
                conn.execute("SELECT %s::hlculid", (text,))
            if isinstance(e.value, psycopg.errors.InvalidParameterValue):
                assert "random uuid" in str(e.value), text
        if major >= 16:  # soft errors: the same verdicts without raising
            valid = conn.execute(
                "SELECT array_agg(pg_input_is_valid(t, 'hlculid') ORDER BY n) "
                "FROM unnest(%s::text[]) WITH ORDINALITY u(t, n)",
                ([t for t, _ in ACCEPTED] + REJECTED,)).fetchone()[0]
            assert valid == [True] * len(ACCEPTED) + [False] * len(REJECTED)


def test_python_recipe():
    for text, want in ACCEPTED:
        assert str(Hlculid(text)) == want, repr(text)
        assert str(Hlculid(text.encode())) == want, repr(text)  # what its text loader passes
    for text in REJECTED:
        for given in (text, text.encode()):
            with pytest.raises(ValueError):
                Hlculid(given)
                pytest.fail(f"accepted {given!r}")


def test_node_recipe():
    r = subprocess.run(["node", str(HERE / "text_forms.js")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = {c["input"]: c.get("canonical") for c in json.loads(r.stdout)}
    assert {t: got[t] for t, _ in ACCEPTED} == dict(ACCEPTED)
    assert [t for t in REJECTED if got[t] is not None] == []
