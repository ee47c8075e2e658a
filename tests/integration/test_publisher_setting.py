"""A mistyped hlculid.publisher_id (0.4.0): PostgreSQL refuses the value at start and keeps the
default, which would derive an id that may be another server's; hlculid then issues no ids at
all, naming the bad setting, until it is fixed. And without the preload, the bigint generator
says the preload is missing (0.3.0 blamed the derived publisher id)."""

import psycopg
import pytest

from pgcluster import write_as_server

GENERATORS = ["SELECT hlculid_generate()", "SELECT hlculid_generate_n(3)", "SELECT hlculid_generate_tx()",
              "SELECT hlculid_generate_bigint()", "SELECT hlculid_generate_bigint_n(2)",
              "SELECT hlculid_generate_at('2024-01-01')", "INSERT INTO t DEFAULT VALUES"]


@pytest.mark.parametrize("value", ["65536", "-2", "'abc'"])
def test_a_refused_publisher_id_stops_every_generator(make_cluster, value):
    c = make_cluster("publisher-bad", conf=(f"hlculid.publisher_id = {value}",)).start()
    c.sql("CREATE EXTENSION hlculid")
    c.sql("CREATE TABLE t (id hlculid PRIMARY KEY DEFAULT hlculid_generate())")
    for q in GENERATORS:
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as e:
            c.sql(q)
        assert "hlculid.publisher_id is set to" in str(e.value), q
        assert "restart" in e.value.diag.message_hint
    assert c.one("SELECT publisher_source FROM hlculid_clock()") == "invalid hlculid.publisher_id"
    assert "which is not a publisher id; no ids are issued" in c.log()
    # fixed and restarted: ids again, under the publisher set
    write_as_server(c.data / "postgresql.conf", "hlculid.publisher_id = 12\n", append=True)
    c.stop()
    c.start()
    assert c.one("SELECT hlculid_publisher(hlculid_generate())") == 12


def test_an_explicit_minus_one_derives_the_publisher(make_cluster):
    c = make_cluster("publisher-derive", conf=("hlculid.publisher_id = -1",)).start()
    c.sql("CREATE EXTENSION hlculid")
    assert c.one("SELECT publisher_source FROM hlculid_clock()") == "system identifier"
    assert c.one("SELECT hlculid_publisher(hlculid_generate()) < 32768")


def test_without_the_preload_the_bigint_generator_names_the_preload(make_cluster):
    c = make_cluster("publisher-nopreload", preload=False).start()
    c.sql("CREATE EXTENSION hlculid")
    for q in ("SELECT hlculid_generate_bigint()", "SELECT hlculid_generate_bigint_n(2)"):
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as e:
            c.sql(q)
        assert "shared_preload_libraries" in str(e.value), q
