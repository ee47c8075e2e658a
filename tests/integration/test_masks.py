"""Masks in the server (docs/masks.md): the same values as the crate (tests/data/mask_vectors.json),
a lookup by masked id is a primary-key index lookup, key rotation through the `_any` lookups, and
the key never shows: not to other roles, not in an error, not in the server log (the keys live in
a file, hlculid.mask_key_file: PostgreSQL logs every changed setting's value at reload)."""

import json
import shutil
import time
from pathlib import Path

import psycopg
import pytest

from pgcluster import read_as_server, write_as_server

VECTORS = json.loads((Path(__file__).resolve().parents[1] / "data" / "mask_vectors.json").read_text())["cases"]
KEY_A = "2b7e151628aed2a6abf7158809cf4f3c"
KEY_B = "000102030405060708090a0b0c0d0e0f"
SECRETISH = "ab12cd34ef56ab12cd34ef56ab12cd3Z"  # 32 characters, the last not hex


def set_keys(c, key=None, old=None, mode=0o600):
    """The key file (current key first, then the old ones), named in postgresql.conf; reloads."""
    keys = c.data / "hlculid_mask.keys"
    write_as_server(keys, "# hlculid mask keys: the current one first\n"
                    + "".join(f"{k}\n" for k in [key, *(old.split(",") if old else [])] if k), mode=mode)
    conf = c.data / "postgresql.conf"
    lines = [l for l in read_as_server(conf).splitlines() if not l.startswith("hlculid.mask_")]
    lines.append("hlculid.mask_key_file = 'hlculid_mask.keys'")
    write_as_server(conf, "\n".join(lines) + "\n")
    c.sql("SELECT pg_reload_conf()")
    time.sleep(1.2)  # backends look at the key file again once a second


# docs/masks.md and docs/security.md: the roles that serve ids outside (0.5.0: not PUBLIC)
MASK_GRANTS = """GRANT EXECUTE ON FUNCTION hlculid_mask(hlculid), hlculid_unmask(uuid), hlculid_unmask_any(uuid),
    hlculid_mask_bigint(bigint), hlculid_unmask_bigint(bigint), hlculid_unmask_bigint_any(bigint) TO {role}"""
MASK_CALLS = ("SELECT hlculid_mask('017FC21C5E7A-0001-000A-AAA333333333')",
              "SELECT hlculid_unmask('38908a05-8729-5919-3e58-213da0134b89')",
              "SELECT hlculid_unmask_any('38908a05-8729-5919-3e58-213da0134b89')",
              "SELECT hlculid_mask_bigint(3732930560000003114)",
              "SELECT hlculid_unmask_bigint(1886982768382340727)",
              "SELECT hlculid_unmask_bigint_any(1886982768382340727)")


@pytest.fixture
def server(make_cluster):
    c = make_cluster("masks", conf=["hlculid.publisher_id = 5"]).start()
    c.sql("CREATE EXTENSION hlculid")
    c.sql("CREATE ROLE app LOGIN")
    return c


def test_the_server_masks_exactly_as_the_crate(server):
    c = server
    for key in sorted({v["key"] for v in VECTORS if v["kind"] in ("id", "bigint")}):
        set_keys(c, key)
        for v in (v for v in VECTORS if v.get("key") == key and v["kind"] == "id"):
            got = c.sql("SELECT hlculid_mask(%s::hlculid)::text, hlculid_unmask(%s::uuid)::text",
                        (v["value"], v["masked"]))[0]
            assert got == (v["masked"], v["value"]), v
        for v in (v for v in VECTORS if v.get("key") == key and v["kind"] == "bigint"):
            got = c.sql("SELECT hlculid_mask_bigint(%s), hlculid_unmask_bigint(%s)",
                        (int(v["value"]), int(v["masked"])))[0]
            assert got == (int(v["masked"]), int(v["value"])), v


def test_a_million_ids_round_trip_and_a_masked_lookup_is_an_index_lookup(server):
    c = server
    set_keys(c, KEY_A)
    c.sql("CREATE TABLE ev (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), b bigint DEFAULT hlculid_generate_bigint(), n int)")
    c.sql("INSERT INTO ev (n) SELECT g FROM generate_series(1, 20000) g")
    c.sql("ANALYZE ev")
    # every id and bigint id back exactly; masked values distinct, positive, unordered
    assert c.sql("""SELECT count(*) FILTER (WHERE hlculid_unmask(hlculid_mask(id)) = id),
                           count(*) FILTER (WHERE hlculid_unmask_bigint(hlculid_mask_bigint(b)) = b),
                           count(DISTINCT hlculid_mask(id)), bool_and(hlculid_mask_bigint(b) > 0)
                    FROM ev""") == [(20000, 20000, 20000, True)]
    ordered = c.one("""SELECT corr(r1, r2) FROM (SELECT rank() OVER (ORDER BY id) r1,
                       rank() OVER (ORDER BY hlculid_mask(id)) r2 FROM ev) s""")
    assert abs(ordered) < 0.05
    # extremes and every publisher, over the whole range: a million values in one statement
    assert c.one("""SELECT count(*) FROM generate_series(0::bigint, 999999) g,
                    LATERAL (SELECT hlculid_from_parts(to_timestamp((g * 9973 % 281474976710) / 1000.0),
                                                       (g % 65536)::int, (g * 7 % 65536)::int, g * 281) AS id) s
                    WHERE hlculid_unmask(hlculid_mask(id)) <> id""") == 0
    assert c.sql("""SELECT hlculid_unmask(hlculid_mask('000000000000-0000-0000-000000000000'))::text,
                           hlculid_unmask(hlculid_mask('FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF'))::text,
                           hlculid_unmask_bigint(hlculid_mask_bigint(1)),
                           hlculid_unmask_bigint(hlculid_mask_bigint(9223372036854775807))""") == [
        ("000000000000-0000-0000-000000000000", "FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF", 1, 9223372036854775807)]
    masked = c.one("SELECT hlculid_mask(id)::text FROM ev WHERE n = 777")
    plan = "\n".join(r[0] for r in c.sql(
        "EXPLAIN SELECT n FROM ev WHERE id = hlculid_unmask(%s::uuid)", (masked,)))
    assert "Index Scan using ev_pkey" in plan, plan
    assert c.one("SELECT n FROM ev WHERE id = hlculid_unmask(%s::uuid)", (masked,)) == 777
    # a wrong key gives another id
    set_keys(c, KEY_B)
    assert c.sql("SELECT n FROM ev WHERE id = hlculid_unmask(%s::uuid)", (masked,)) == []


def test_rotation_keeps_links_given_out_under_the_old_key(server):
    c = server
    set_keys(c, KEY_A)
    c.sql("CREATE TABLE ev (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), b bigint, n int)")
    c.sql("INSERT INTO ev (b, n) SELECT hlculid_generate_bigint(), g FROM generate_series(1, 100) g")
    link, big = c.sql("SELECT hlculid_mask(id)::text, hlculid_mask_bigint(b) FROM ev WHERE n = 42")[0]
    set_keys(c, KEY_B, old=KEY_A)  # the new key first, the old one still tried by the _any lookups
    assert c.sql("SELECT n FROM ev WHERE id = hlculid_unmask(%s::uuid)", (link,)) == []
    assert c.sql("SELECT n FROM ev WHERE id IN (SELECT hlculid_unmask_any(%s::uuid))", (link,)) == [(42,)]
    assert c.sql("SELECT n FROM ev WHERE b IN (SELECT hlculid_unmask_bigint_any(%s))", (big,)) == [(42,)]
    new_link = c.one("SELECT hlculid_mask(id)::text FROM ev WHERE n = 42")
    assert new_link != link
    assert c.sql("SELECT n FROM ev WHERE id IN (SELECT hlculid_unmask_any(%s::uuid))", (new_link,)) == [(42,)]
    set_keys(c, KEY_B)  # the rotation ends: old links stop working
    assert c.sql("SELECT n FROM ev WHERE id IN (SELECT hlculid_unmask_any(%s::uuid))", (link,)) == []


def test_no_key_a_bad_key_and_the_key_kept_secret(server):
    c = server
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as e:
        c.sql("SELECT hlculid_mask(hlculid_generate())")
    assert "hlculid.mask_key_file" in e.value.diag.message_hint
    set_keys(c, SECRETISH)
    with pytest.raises(psycopg.errors.InvalidParameterValue) as e:
        c.sql("SELECT hlculid_mask(hlculid_generate())")
    said = " ".join(filter(None, (e.value.diag.message_primary, e.value.diag.message_detail,
                                   e.value.diag.message_hint)))
    assert "line 2" in said and "character 32" in said and SECRETISH[:8] not in said
    set_keys(c, KEY_A, old=f"{KEY_B},zz")
    with pytest.raises(psycopg.errors.InvalidParameterValue) as e:
        c.sql("SELECT hlculid_unmask_any(gen_random_uuid())")
    assert "line 4" in e.value.diag.message_primary
    set_keys(c, KEY_A, mode=0o604)
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as e:
        c.sql("SELECT hlculid_mask(hlculid_generate())")
    assert "chmod 600" in e.value.diag.message_hint
    set_keys(c, KEY_A)
    # the file's name is for superusers only
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        c.sql("SHOW hlculid.mask_key_file", user="app")
    c.sql(MASK_GRANTS.format(role="app"))
    assert c.sql("SELECT hlculid_unmask(hlculid_mask('017FC21C5E7A-0001-000A-AAA333333333'))::text",
                 user="app") == [("017FC21C5E7A-0001-000A-AAA333333333",)]
    # a new key in the file takes effect within a second, without a reload, in a session that
    # masked with the old one
    with c.connect() as conn:
        q = "SELECT hlculid_mask('017FC21C5E7A-0001-000A-AAA333333333')::text"
        before = conn.execute(q).fetchone()[0]
        write_as_server(c.data / "hlculid_mask.keys", KEY_B + "\n")
        time.sleep(1.2)
        assert conn.execute(q).fetchone()[0] != before
    log = c.log()
    for key in (KEY_A, KEY_B, SECRETISH):
        assert key not in log and key.upper() not in log and key[:16] not in log
    with pytest.raises(psycopg.errors.NumericValueOutOfRange):
        c.sql("SELECT hlculid_mask_bigint(0)")
    with pytest.raises(psycopg.errors.NumericValueOutOfRange):
        c.sql("SELECT hlculid_unmask_bigint(-5)")


def test_only_the_roles_granted_them_mask_and_unmask(server):
    """0.4.0-era default: every function is PUBLIC, so any role could unmask any value it saw.
    The mask functions are revoked from PUBLIC; the documented GRANT gives them back."""
    c = server
    set_keys(c, KEY_B)
    c.sql("CREATE ROLE plain LOGIN")
    for q in MASK_CALLS:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.sql(q, user="plain")
    c.sql(MASK_GRANTS.format(role="app"))
    got = [c.sql(q, user="app")[0][0] for q in MASK_CALLS]
    assert [str(v) for v in got] == ["38908a05-8729-5919-3e58-213da0134b89", "017FC21C5E7A-0001-000A-AAA333333333",
                                     "017FC21C5E7A-0001-000A-AAA333333333", "1886982768382340727",
                                     "3732930560000003114", "3732930560000003114"]
    for q in MASK_CALLS:  # still not for plain
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.sql(q, user="plain")
