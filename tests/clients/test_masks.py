"""The client masks, checked against the crate itself: tests/data/mask_vectors.json holds what the
crate's Mask gives (core/tests/fixtures/mask_vectors.rs) under four keys for ids of every shape and
bigints at the ends of their range, both ways, plus runs of consecutive values and malformed keys.
The first test regenerates the file from the crate and fails on a difference; the Python and Node
masks replay every case (the UUIDv47 v4 facades too, and UUIDv47's own vectors), and each client's
SipHash-2-4 is checked against the SipHash paper's reference vectors first. No server."""

import hashlib
import json
import os
import pickle
import random
import subprocess
import uuid
from pathlib import Path

import pytest

from hlculid import BigId, Hlculid, Mask, from_uuidv7, to_uuidv7
from hlculid.mask import siphash24

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
VECTORS = ROOT / "tests" / "data" / "mask_vectors.json"
I64_MAX = (1 << 63) - 1

# SipHash-2-4 of the messages 00, 00 01, ..., 00 .. 0e under the key 00 .. 0f: the reference
# implementation's vectors.h (vectors_sip64, each read little-endian); the last is the paper's
# example in its appendix A. Then 16, 62 and 63 bytes (more whole 8-byte words).
SIPHASH_VECTORS = [
    0x726FDB47DD0E0E31, 0x74F839C593DC67FD, 0x0D6C8009D9A94F5A, 0x85676696D7FB7E2D,
    0xCF2794E0277187B7, 0x18765564CD99A68D, 0xCBC9466E58FEE3CE, 0xAB0200F58B01D137,
    0x93F5F5799A932462, 0x9E0082DF0BA9E4B0, 0x7A5DBBC594DDB9F3, 0xF4B32F46226BADA7,
    0x751E8FBC860EE5FB, 0x14EA5627C0843D90, 0xF723CA908E7AF2EE, 0xA129CA6149BE45E5,
]
SIPHASH_LONGER = {16: 0x3F2ACC7F57C29BDB, 62: 0xE51B38608EF25F57, 63: 0x958A324CEB064572}
# UUIDv47: v7 uuids and their v4 facades under its README key {k0 = 0x0123456789abcdef,
# k1 = 0xfedcba9876543210}, from the Go port n2p5/uuid47 (made with the C header).
UUIDV47_VECTORS = [
    ("018f2d9f-9a2a-7def-8c3f-7b1a2c4d5e6f", "2463c780-7fca-4def-8c3f-7b1a2c4d5e6f"),
    ("00000000-0000-7000-8000-000000000000", "22d97126-9609-4000-8000-000000000000"),
    ("00000000-007b-7aaa-8123-456789abcdef", "b108050e-46b6-4aaa-8123-456789abcdef"),
    ("00000010-007b-7aad-9032-547698badcfe", "bc75bd50-97ef-4aad-9032-547698badcfe"),
    ("00000020-007b-7aa4-a301-6745ab89efcd", "a3e09c87-bf85-4aa4-a301-6745ab89efcd"),
]


def cases(kind):
    return [c for c in json.loads(VECTORS.read_text())["cases"] if c["kind"] == kind]


def test_the_vectors_file_is_what_the_crate_makes():
    # the crate's test regenerates the file and fails on a difference, saying where
    r = subprocess.run(["cargo", "test", "-q", "-p", "hlculid-core", "--test", "fixtures", "--",
                        "the_mask_vectors_file"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, ("the crate's Mask no longer gives the checked-in vectors "
                               "(tests/data/mask_vectors.json):\n" + (r.stdout + r.stderr)[-5000:])
    assert "1 passed" in r.stdout, r.stdout


def test_python_siphash_gives_the_reference_vectors():
    key = bytes(range(16))
    for n, want in enumerate(SIPHASH_VECTORS):
        assert siphash24(key, bytes(range(n))) == want, n
    for n, want in SIPHASH_LONGER.items():
        assert siphash24(key, bytes(range(n))) == want, n
    assert siphash24(key, bytes(range(15))) == 0xA129CA6149BE45E5  # the paper's appendix A
    with pytest.raises(ValueError):
        siphash24(bytes(15), b"")


def test_python_masks_replay_the_crate_vectors():
    ids = cases("id")
    assert len(ids) > 100
    for c in ids:
        m = Mask(c["key"])
        masked = m.mask(c["value"])
        assert type(masked) is uuid.UUID and str(masked) == c["masked"], c
        assert m.mask(Hlculid(c["value"])) == masked
        back = m.unmask(c["masked"])
        assert type(back) is Hlculid and str(back) == c["value"], c
        assert m.unmask(masked) == back
        # the value's 16 bytes read as a masked uuid
        assert str(m.unmask(uuid.UUID(hex=c["value"].replace("-", "")))) == c["unmasked"], c
        assert m.mask(c["unmasked"]).hex == c["value"].replace("-", "").lower()
    bigints = cases("bigint")
    assert len(bigints) > 50
    for c in bigints:
        m = Mask(bytes.fromhex(c["key"]))
        masked = m.mask_bigint(int(c["value"]))
        assert type(masked) is int and str(masked) == c["masked"], c
        assert m.mask_bigint(c["value"]) == m.mask_bigint(BigId(c["value"])) == masked
        back = m.unmask_bigint(masked)
        assert type(back) is BigId and str(back) == c["value"], c
        assert str(m.unmask_bigint(c["value"])) == c["unmasked"], c
        assert str(m.mask_bigint(c["unmasked"])) == c["value"], c


def test_python_v4_facades_replay_the_crate_vectors_and_uuidv47s():
    facades = cases("v4_facade")
    assert len(facades) > 100
    for c in facades:
        m = Mask(c["key"])
        f = m.to_v4_facade(c["value"])
        assert type(f) is uuid.UUID and str(f) == c["facade"] and f.version == 4, c
        back = m.from_v4_facade(c["facade"])
        assert type(back) is Hlculid and str(back) == c["back"], c
        assert m.from_v4_facade(f) == back == Hlculid(int=Hlculid(c["value"]).int & ~0x3F)
    # UUIDv47's own vectors (the Go port n2p5/uuid47, made with the C header) under its README key
    m = Mask((0x0123456789ABCDEF).to_bytes(8, "little") + (0xFEDCBA9876543210).to_bytes(8, "little"))
    for v7, v4 in UUIDV47_VECTORS:
        assert str(m.to_v4_facade(from_uuidv7(v7))) == v4
        assert str(to_uuidv7(m.from_v4_facade(v4))) == v7
    id_ = Hlculid("017FC21C5E7A-0001-000A-AAA333333333")
    for not_v4 in (to_uuidv7(id_), uuid.UUID(int=id_.int), uuid.UUID("00000000-0000-4000-c000-000000000000")):
        with pytest.raises(ValueError, match="not a v4 facade"):
            m.from_v4_facade(not_v4)


def test_python_masks_replay_the_crate_runs_of_consecutive_values():
    (ids,) = cases("id_run")
    m, first = Mask(ids["key"]), Hlculid(ids["first"]).int
    run = [str(m.mask(Hlculid(int=first + k))) for k in range(ids["count"])]
    assert hashlib.sha256("\n".join(run).encode()).hexdigest() == ids["sha256"]
    (bigints,) = cases("bigint_run")
    m, first = Mask(bigints["key"]), int(bigints["first"])
    run = [str(m.mask_bigint(first + k)) for k in range(bigints["count"])]
    assert hashlib.sha256("\n".join(run).encode()).hexdigest() == bigints["sha256"]


def test_python_refuses_the_crate_bad_keys_and_bigints_without_showing_the_key():
    bad = cases("bad_key")
    assert len(bad) >= 6
    for c in bad:
        with pytest.raises(ValueError) as e:
            Mask(c["text"])
        want = (f"the text given has {c['n']} characters" if c["error"] == "Length"
                else f"character {c['at'] + 1} of the text given is not one")
        assert want in str(e.value), c
        if len(c["text"]) > 8:
            assert c["text"][2:10] not in str(e.value)
    m = Mask("000102030405060708090a0b0c0d0e0f")
    for c in cases("bad_bigint"):
        for v in (int(c["value"]), c["value"]):
            with pytest.raises(ValueError):
                m.mask_bigint(v)
            with pytest.raises(ValueError):
                m.unmask_bigint(v)


def test_python_masks_round_trip_and_never_show_the_key():
    rng = random.Random(34)
    m, other = Mask(rng.randbytes(16)), Mask(rng.randbytes(16))
    for _ in range(2000):
        id_ = Hlculid(int=rng.getrandbits(128))
        masked = m.mask(id_)
        assert m.unmask(masked) == id_ and m.unmask(str(masked).upper()) == id_
        assert other.unmask(masked) != id_
        big = rng.randrange(1, I64_MAX + 1)
        mb = m.mask_bigint(big)
        assert 1 <= mb <= I64_MAX and int(m.unmask_bigint(mb)) == big
    for v in (1, 2, I64_MAX - 1, I64_MAX):
        assert int(m.unmask_bigint(m.mask_bigint(v))) == v
    # any text form of an id masks alike; a random uuid is no id (as the uuid cast refuses it)
    id_ = Hlculid("017FC21C5E7A-0001-000A-AAA333333333")
    for form in (str(id_).lower(), id_.hex, str(uuid.UUID(int=id_.int)), id_.ulid(), uuid.UUID(int=id_.int)):
        assert m.mask(form) == m.mask(id_), form
    with pytest.raises(ValueError):
        m.mask(uuid.uuid4())
    with pytest.raises(TypeError):
        m.mask_bigint(1.0)
    with pytest.raises(TypeError):
        m.mask_bigint(True)
    with pytest.raises(ValueError):
        m.mask_bigint(I64_MAX + 1)
    with pytest.raises(ValueError):
        m.mask_bigint("01")
    # the key: 16 bytes or 32 hex digits; its text never appears
    secret = "5e" * 16
    assert Mask(secret.upper()).mask(id_) == Mask(bytes.fromhex(secret)).mask(id_)
    k = Mask(secret)
    assert repr(k) == str(k) == "Mask(<hidden>)"
    for bad in (secret[1:], secret[1:] + "z", secret + "\n", "0x" + secret[2:], bytes(15), bytearray(17)):
        with pytest.raises(ValueError) as e:
            Mask(bad)
        assert "5e5e" not in str(e.value)
    with pytest.raises(TypeError):
        Mask(12)
    # a copy keeps working (pickle for multiprocessing), and holds the key, as the object does
    assert pickle.loads(pickle.dumps(k)).mask(id_) == k.mask(id_)


def test_node_masks_replay_the_crate_vectors_and_keep_their_properties():
    r = subprocess.run(["node", str(HERE / "node_mask.js")], capture_output=True, text=True,
                       env={**os.environ, "HLCULID_MASK_VECTORS": str(VECTORS)})
    print(r.stdout, r.stderr)
    assert r.returncode == 0
    assert "node mask: ok" in r.stdout
