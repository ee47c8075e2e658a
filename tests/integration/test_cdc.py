"""Change data capture: what the logical decoding plugins CDC pipelines use send for hlculid
columns. wal2json (JSON) and decoderbufs (Debezium's Protocol Buffers plugin), the Debian
packages postgresql-15-wal2json and postgresql-15-decoderbufs (scripts/setup-os.sh), on a
server with wal_level = logical: an hlculid arrives as its canonical text (wal2json: a JSON
string; decoderbufs: the text's bytes in datum_bytes, as for every type it does not know), a
bigint id as an exact 64-bit integer (wal2json: a JSON number above 2^53, which a JavaScript
JSON.parse rounds; decoderbufs: datum_int64). The FAQ answer in docs/_incoming/release.md says
what is tested here.

The plugins are found where the server's own libraries are, or where Debian installs them for
this major (loaded by path: a private copy of the install was made before they were installed).
Debian 12 packages them for PostgreSQL 15 only: the other majors (PyPI's builds) skip, and 15
fails if they are missing. PostgreSQL's output_plugin_libraries (15.20, 16.15, 17.11, 18.6 have
it; default 'pgoutput, test_decoding') must name a plugin before a slot may use it."""

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from pgcluster import PG, pg_config

# Debian 12 (bookworm) ships postgresql-15-wal2json and postgresql-15-decoderbufs only.
DEBIAN_PACKAGED = {"15"}
ROWS = 20
TWO_53 = 2**53


def find_plugin(name):
    """The name a slot gives to load the plugin: its bare name when it is in the server's
    pkglibdir, else its path in Debian's install of this major."""
    pkglibdir = subprocess.run([pg_config(), "--pkglibdir"], check=True, capture_output=True,
                               text=True).stdout.strip()
    if (Path(pkglibdir) / f"{name}.so").exists():
        return name
    debian = Path(f"/usr/lib/postgresql/{PG}/lib/{name}.so")
    if debian.exists():
        return str(debian.with_suffix(""))
    if PG in DEBIAN_PACKAGED:
        pytest.fail(f"{name} is missing for PostgreSQL {PG}: scripts/setup-os.sh installs postgresql-{PG}-{name}")
    pytest.skip(f"no {name} for PostgreSQL {PG}: Debian 12 packages it (postgresql-N-{name}) for PostgreSQL 15 "
                f"only, and PostgreSQL {PG} here is PyPI's build")


@pytest.fixture
def cdc(make_cluster):
    """A server with wal_level = logical, the table, and a slot for each plugin found."""
    plugins = {name: find_plugin(name) for name in ("wal2json", "decoderbufs")}
    server = make_cluster("cdc", conf=["wal_level = logical", "max_replication_slots = 4",
                                       "max_wal_senders = 4", "hlculid.publisher_id = 7"]).start()
    if server.one("SELECT count(*) FROM pg_settings WHERE name = 'output_plugin_libraries'"):
        # a list setting: one literal per library ('a, b' would be one library named "a, b")
        server.sql("ALTER SYSTEM SET output_plugin_libraries = "
                   + ", ".join(f"'{p}'" for p in ["pgoutput", *plugins.values()]))
        server.sql("SELECT pg_reload_conf()")
        deadline = time.time() + 30  # the reload reaches new backends a moment later
        while not all(p in server.one("SHOW output_plugin_libraries") for p in plugins.values()):
            assert time.time() < deadline, "output_plugin_libraries was not reloaded"
            time.sleep(0.05)
    server.sql("CREATE EXTENSION hlculid")
    server.sql("""CREATE TABLE events (
        id hlculid PRIMARY KEY DEFAULT hlculid_generate(),
        big bigint NOT NULL DEFAULT hlculid_generate_bigint(),
        note text)""")
    for name, plugin in plugins.items():
        server.sql("SELECT pg_create_logical_replication_slot(%s, %s)", (name, plugin))
    server.sql(f"INSERT INTO events (note) SELECT CASE WHEN i % 2 = 0 THEN 'row ' || i END "
               f"FROM generate_series(1, {ROWS}) i")
    rows = server.sql("SELECT id::text, big, note FROM events ORDER BY id")  # every row inserted
    deleted = rows[0][0]
    server.sql("DELETE FROM events WHERE id = %s::hlculid", (deleted,))
    return server, rows, deleted


def test_wal2json_sends_the_canonical_text_and_bigints_as_json_numbers_above_2_53(cdc):
    server, rows, deleted = cdc
    want_ids = [r[0] for r in rows]
    want_big = [r[1] for r in rows]
    assert all(b > TWO_53 for b in want_big), "bigint ids are above 2^53"

    # format-version 1 (the default): one JSON document per transaction
    docs = [json.loads(d) for (d,) in server.sql(
        "SELECT data FROM pg_logical_slot_peek_changes('wal2json', NULL, NULL)")]
    changes = [c for d in docs for c in d["change"]]
    inserts = [c for c in changes if c["kind"] == "insert"]
    assert len(inserts) == ROWS
    ins = {c["columnvalues"][0]: c for c in inserts}
    for c in inserts:
        assert c["columntypes"][:2] == ["hlculid", "bigint"]
    got = [ins[i]["columnvalues"] for i in want_ids]
    assert [g[0] for g in got] == want_ids, "the id is its canonical text, id::text"
    assert all(isinstance(g[1], int) and not isinstance(g[1], bool) for g in got), "a JSON number"
    assert [g[1] for g in got] == want_big, "exact when parsed as an integer (Python's json)"
    assert [g[2] for g in got] == [r[2] for r in rows]
    # The primary key of a deleted row: the canonical text too.
    [delete] = [c for c in changes if c["kind"] == "delete"]
    assert delete["oldkeys"] == {"keynames": ["id"], "keytypes": ["hlculid"], "keyvalues": [deleted]}

    # A JavaScript JSON.parse reads every number as a double: the bigint ids lose their low bits.
    raw = [d for (d,) in server.sql("SELECT data FROM pg_logical_slot_peek_changes('wal2json', NULL, NULL)")]
    as_double = {c["columnvalues"][0]: c["columnvalues"][1] for d in raw
                 for c in json.loads(d, parse_int=float)["change"] if c["kind"] == "insert"}
    assert all(int(as_double[i]) != b for i, b in zip(want_ids, want_big)), "every one rounded"
    node = shutil.which("node")
    assert node, "Node.js is missing (scripts/setup-os.sh installs nodejs)"
    if node:  # the real thing: Node.js's JSON.parse
        out = subprocess.run([node, "-e", """
            const docs = require('fs').readFileSync(0, 'utf8').trim().split('\\n').map(JSON.parse);
            for (const d of docs) for (const c of d.change)
              if (c.kind === 'insert') console.log(c.columnvalues[0] + ' ' + String(c.columnvalues[1]) + ' ' + Number.isSafeInteger(c.columnvalues[1]));
            """], input="\n".join(raw), capture_output=True, text=True, check=True).stdout.split("\n")
        js = {line.split()[0]: line.split()[1:] for line in out if line}
        for id_text, big in zip(want_ids, want_big):
            printed, safe = js[id_text]
            assert safe == "false" and printed != str(big), f"JSON.parse kept {big} exactly"

    # format-version 2 (one document per change, with the types): the same values.
    docs = [json.loads(d) for (d,) in server.sql(
        "SELECT data FROM pg_logical_slot_peek_changes('wal2json', NULL, NULL, "
        "'format-version', '2', 'include-types', 'true')")]
    values = {d["columns"][0]["value"]: d["columns"] for d in docs if d["action"] == "I"}
    for id_text, big in zip(want_ids, want_big):
        cols = values[id_text]
        assert [(c["name"], c["type"]) for c in cols[:2]] == [("id", "hlculid"), ("big", "bigint")]
        assert cols[1]["value"] == big and isinstance(cols[1]["value"], int)
    [delete] = [d for d in docs if d["action"] == "D"]
    assert delete["identity"] == [{"name": "id", "type": "hlculid", "value": deleted}]


# -- Protocol Buffers, minimally: the wire format (varints, length-delimited fields), enough for
# decoderbufs' RowMessage (proto/pg_logicaldec.proto): 1 transaction_id, 2 commit_time, 3 table,
# 4 op (0 insert, 1 update, 2 delete, 3 begin, 4 commit), 5 new_tuple, 6 old_tuple (DatumMessage:
# 1 column_name, 2 column_type (type OID), 3 datum_int32, 4 datum_int64, 5 datum_float,
# 6 datum_double, 7 datum_bool, 8 datum_string, 9 datum_bytes, ...), 7 new_typeinfo (1 modifier,
# 2 value_optional).
def varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def fields(buf):
    """[(field number, wire type, value)]: an int for varints and fixed widths, bytes otherwise."""
    out, i = [], 0
    while i < len(buf):
        key, i = varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(buf, i)
        elif wire == 1:
            value, i = int.from_bytes(buf[i:i + 8], "little"), i + 8
        elif wire == 5:
            value, i = int.from_bytes(buf[i:i + 4], "little"), i + 4
        elif wire == 2:
            n, i = varint(buf, i)
            value, i = bytes(buf[i:i + n]), i + n
        else:
            raise ValueError(f"wire type {wire}")
        out.append((number, wire, value))
    return out


def datum(msg):
    """A DatumMessage as {column_name, column_type, and the datum field's name: value}."""
    names = {3: "datum_int32", 4: "datum_int64", 5: "datum_float", 6: "datum_double", 7: "datum_bool",
             8: "datum_string", 9: "datum_bytes", 10: "datum_point", 11: "datum_missing"}
    d = {}
    for number, _, value in fields(msg):
        if number == 1:
            d["column_name"] = value.decode()
        elif number == 2:
            d["column_type"] = value
        elif number == 4:
            d["datum_int64"] = value - 2**64 if value >= 2**63 else value
        else:
            d[names.get(number, f"field {number}")] = value
    return d


def test_decoderbufs_sends_the_canonical_text_as_datum_bytes_and_bigints_as_int64(cdc):
    server, rows, deleted = cdc
    type_oid = server.one("SELECT 'hlculid'::regtype::oid")
    messages = [fields(bytes(d)) for (d,) in server.sql(
        "SELECT data FROM pg_logical_slot_peek_binary_changes('decoderbufs', NULL, NULL)")]
    ops = [next(v for n, _, v in m if n == 4) for m in messages]
    assert ops == [3] + [0] * ROWS + [4] + [3, 2, 4], ops  # begin, inserts, commit; begin, delete, commit

    inserts = [m for m, op in zip(messages, ops) if op == 0]
    got = {}
    for m in inserts:
        assert next(v for n, _, v in m if n == 3) == b"public.events"
        cols = {d["column_name"]: d for d in (datum(v) for n, _, v in m if n == 5)}
        typeinfo = [dict((n, v) for n, _, v in fields(t)) for n, _, t in m if n == 7]
        assert [t[1] for t in typeinfo] == [b"hlculid", b"bigint", b"text"], "the type names travel too"
        ident = cols["id"]
        # An hlculid, a type decoderbufs does not know: its output function's text, as bytes.
        assert ident["column_type"] == type_oid
        assert set(ident) == {"column_name", "column_type", "datum_bytes"}, ident
        # bigint: datum_int64, exact.
        assert set(cols["big"]) == {"column_name", "column_type", "datum_int64"} and cols["big"]["column_type"] == 20
        # text, for contrast: datum_string; NULL: no datum field at all.
        note = cols["note"]
        assert set(note) - {"column_name", "column_type"} <= {"datum_string"}
        got[ident["datum_bytes"].decode("utf-8")] = (cols["big"]["datum_int64"],
                                                     note.get("datum_string", b"").decode() or None)
    assert got == {i: (b, n) for i, b, n in rows}, "the canonical text, id::text; the bigint exactly"
    assert all(b > TWO_53 for b, _ in got.values())

    # The deleted row's key (REPLICA IDENTITY DEFAULT: the primary key) in old_tuple, the same way.
    [delete] = [m for m, op in zip(messages, ops) if op == 2]
    old = [datum(v) for n, _, v in delete if n == 6]
    assert [d.get("datum_bytes", b"").decode() for d in old if d["column_name"] == "id"] == [deleted]
