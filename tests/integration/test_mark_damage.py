"""A damaged high-water mark file never yields ids that sort before earlier ones: the server
refuses to generate (XX001, with what was wrong and how to recover) until a superuser runs the
README's recovery, after which ids continue above every earlier id. Each case steps the clock
back 10 s across the restart, so a clock resumed from nothing would go backwards."""

import os
import shutil

import psycopg
import pytest

from pgcluster import as_server, read_as_server, server_test, write_as_server

MARK = "hlculid.hwm"


# each as the server's user, who owns the data directory (tests/pgcluster.py: root follows no link there)
def truncate(path):
    data = read_as_server(path, binary=True)
    write_as_server(path, data[: len(data) // 2])


def garbage(path):
    write_as_server(path, os.urandom(len(read_as_server(path, binary=True))))


def wrong_size(path):
    write_as_server(path, read_as_server(path, binary=True) + b"0000\n")


def directory(path):
    as_server("sh", "-c", 'rm -- "$1" && mkdir -- "$1"', "sh", str(path))


def unreadable(path):
    as_server("chmod", "0", "--", str(path))


DAMAGE = {"truncated": (truncate, "corrupt"), "garbage": (garbage, "corrupt"),
          "wrong size": (wrong_size, "corrupt"), "a directory": (directory, "unreadable"),
          "unreadable (chmod 000)": (unreadable, "unreadable")}


@pytest.mark.parametrize("case", DAMAGE)
def test_damaged_mark_stops_generation_until_recovered(make_cluster, case):
    damage, kind = DAMAGE[case]
    c = make_cluster("damage", faketime=True, conf=["hlculid.publisher_id = 4"]).start()
    c.sql("CREATE EXTENSION hlculid")
    c.sql("CREATE TABLE ev (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)")
    c.sql("INSERT INTO ev (n) SELECT generate_series(1, 5000)")
    c.sql("CREATE ROLE ordinary LOGIN")
    c.sql("GRANT ALL ON ev TO ordinary")
    last = c.one("SELECT max(id)::text FROM ev")
    c.stop()
    damage(c.data / MARK)
    c.set_clock("-10")
    c.start()
    assert f"high-water mark file \"{MARK}\" is {kind} at server start" in c.log()

    # no id of any kind is issued, with the documented error
    for query in ["SELECT hlculid_generate()", "INSERT INTO ev (n) VALUES (0)",
                  "SELECT hlculid_observe(hlculid_min(clock_timestamp() - interval '1 minute'))"]:
        with pytest.raises(psycopg.errors.DataCorrupted) as e:
            c.sql(query)
        diag = e.value.diag
        assert diag.message_primary == "hlculid's high-water mark is damaged, so no ids are issued"
        assert f'"{MARK}"' in diag.message_detail and f"{kind} at server start" in diag.message_detail
        assert "hlculid_clock_recover" in diag.message_hint
    assert c.one("SELECT count(*) FROM ev") == 5000
    assert c.one("SELECT high_water_mark_state FROM hlculid_clock()") == f"damaged: {kind} at server start"
    # the writer does not spin on it either: the server stays up and quiet
    assert c.one("SELECT 1") == 1

    # recovery is for superusers only
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        c.sql("SELECT hlculid_clock_recover(max(id)) FROM ev", user="ordinary")
    if kind == "unreadable" and server_test("-d", c.data / MARK):
        # the README: a directory in the file's place has to go first
        with pytest.raises(psycopg.errors.IoError):
            c.sql("SELECT hlculid_clock_recover(max(id), allow_future => true) FROM ev")
        as_server("rmdir", "--", str(c.data / MARK))
    # the clock is 10 s behind the ids this server issued: the floor is further ahead than the
    # skew bound, so the plain form refuses it (it might be a foreign value) and changes nothing
    with pytest.raises(psycopg.errors.InvalidParameterValue) as e:
        c.sql("SELECT hlculid_clock_recover(max(id)) FROM ev")
    assert "allow_future => true" in e.value.diag.message_hint
    assert c.one("SELECT high_water_mark_state FROM hlculid_clock()") == f"damaged: {kind} at server start"
    # they are this server's own ids (its publisher): the README says to allow them explicitly
    assert c.one("SELECT count(*) FROM ev WHERE hlculid_publisher(id) <> 4") == 0
    c.sql("SELECT hlculid_clock_recover(max(id), allow_future => true) FROM ev")
    assert c.one("SELECT high_water_mark_state FROM hlculid_clock()") == "ok"
    first = c.one("INSERT INTO ev (n) VALUES (1) RETURNING id::text")
    assert first > last
    assert c.one("SELECT count(*) FROM ev WHERE id > %s::hlculid", (first,)) == 0
    # and the new mark is good across the next restart, clock still behind
    c.stop()
    c.start()
    assert c.one("SELECT high_water_mark_state FROM hlculid_clock()") == "ok"
    assert c.one("SELECT hlculid_generate()::text") > first


def test_a_missing_mark_is_a_first_start(make_cluster):
    """A missing file is taken as a first start: this is what a cluster that never generated
    looks like, and the server cannot tell it from a file deleted by hand (documented)."""
    c = make_cluster("nomark", conf=["hlculid.publisher_id = 4"]).start()
    c.sql("CREATE EXTENSION hlculid")
    c.stop()
    as_server("rm", "-f", "--", str(c.data / MARK))
    c.start()
    assert c.one("SELECT high_water_mark_state FROM hlculid_clock()") == "ok"
    # ids come from the wall clock, and the first one has a durable mark behind it again
    assert c.sql("""SELECT hlculid_publisher(id), abs(extract(epoch FROM hlculid_ts(id) - clock_timestamp())) < 5
                    FROM (SELECT hlculid_generate() AS id) s""") == [(4, True)]
    assert server_test("-f", c.data / MARK)
