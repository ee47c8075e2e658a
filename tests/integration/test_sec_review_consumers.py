"""The 0.6.0 security review of the named consumers (branch sec-review): each test states the
secure behaviour. Fixed by per-role consumer names and row-level security on hlculid's tables
(branch subs-security); LOCK TABLE by a role with UPDATE stays xfail: documented in
docs/security.md (an administrator ends such a session).
Roles: alice (a consumer's owner), mallory (an ordinary role, the attacker), the superuser."""

import threading
import time

import psycopg
import pytest

pytestmark = pytest.mark.full  # ~30 s of servers: make test-full (tests/TIERS.md)
CONF = ("hlculid.publisher_id = 3",)


@pytest.fixture
def c(make_cluster):
    c = make_cluster("secreview", conf=CONF).start()
    c.sql("CREATE EXTENSION IF NOT EXISTS hlculid")
    c.sql("CREATE ROLE alice LOGIN; CREATE ROLE mallory LOGIN")
    c.sql("CREATE TABLE ev (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), body text)")
    c.sql("GRANT SELECT ON ev TO alice")
    c.sql("INSERT INTO ev (body) SELECT 'e' || g FROM generate_series(1, 5) g")
    return c


def sqlstate(conn, query, params=None):
    try:
        conn.execute(query, params)
    except psycopg.Error as e:
        return e.sqlstate
    return None


@pytest.mark.parametrize("lock", [
    "SELECT 1 FROM hlculid.hlculid_consumer_positions FOR UPDATE",
    pytest.param("LOCK TABLE hlculid.hlculid_consumer_positions IN ACCESS EXCLUSIVE MODE",
                 marks=pytest.mark.xfail(strict=True, reason="sec-review 1: LOCK TABLE needs only UPDATE, "
                                         "which row-level security leaves to PUBLIC: docs/security.md")),
])
def test_another_role_cannot_block_a_consumer(c, lock):
    with c.connect(user="alice") as a:
        a.execute("SELECT hlculid_consumer_create('alices', 'ev')")
    with c.connect(user="mallory", autocommit=False) as m:
        blocked = sqlstate(m, lock)
        with c.connect(user="alice") as a:
            a.execute("SET lock_timeout = '500ms'")
            got = sqlstate(a, "SELECT count(*) FROM hlculid_consume('alices', NULL::ev)")
        m.rollback()
    # either mallory may not take the lock, or it does not stop alice
    assert blocked == "42501" or got is None, (blocked, got)


def test_another_role_cannot_read_a_consumers_errors(c):
    with c.connect(user="alice") as a:
        (i,) = a.execute("SELECT id::text FROM hlculid_consume('alices', NULL::ev, 1)").fetchone()
        a.execute("SELECT hlculid_consume_retry('alices', %s::hlculid, '1 h', 'card 4111 declined')", (i,))
    with c.connect(user="mallory") as m:
        try:
            rows = m.execute("SELECT last_error FROM hlculid.hlculid_consumer_retries").fetchall()
        except psycopg.errors.InsufficientPrivilege:
            rows = []
    assert rows == []


def test_a_superuser_does_not_consume_through_another_roles_consumer(c):
    c.sql("CREATE SCHEMA audit; CREATE TABLE audit.log (id hlculid PRIMARY KEY DEFAULT hlculid_generate())")
    c.sql("INSERT INTO audit.log DEFAULT VALUES")
    with c.connect(user="mallory") as m:
        m.execute("CREATE TEMP TABLE t (id hlculid PRIMARY KEY)")
        m.execute("SELECT hlculid_consumer_create('audit-shipper', 'pg_temp.t')")
        # the table mallory may not read, by its oid (pg_class is readable), and a far position:
        # a consumer's table is fixed at its creation
        assert sqlstate(m, "UPDATE hlculid.hlculid_consumer_positions SET relation = "
                        "(SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                        " WHERE n.nspname = 'audit' AND c.relname = 'log')::regclass, "
                        "position = hlculid_max('2100-01-01'::timestamptz) WHERE consumer = 'audit-shipper'") == "55000"
        m.execute("UPDATE hlculid.hlculid_consumer_positions SET position = hlculid_max('2100-01-01'::timestamptz) "
                  "WHERE consumer = 'audit-shipper'")
    with c.connect() as s:
        s.execute("INSERT INTO audit.log DEFAULT VALUES")
        try:
            n = s.execute("SELECT count(*) FROM hlculid_consume('audit-shipper', NULL::audit.log)").fetchone()[0]
        except psycopg.errors.InsufficientPrivilege:
            n = None  # refused: as secure as getting every row
    assert n in (None, 2), n


def test_no_retry_is_planted_in_a_consumer_created_during_the_statement(c):
    (victim,) = c.sql("SELECT max(id)::text FROM ev")[0]
    result = {}

    def plant():
        with c.connect(user="mallory") as m:
            # the first row passes the trigger at once; the second is filtered out after 3 s,
            # and only then does the statement end and its foreign key get checked
            result["state"] = sqlstate(
                m, "INSERT INTO hlculid.hlculid_consumer_retries (consumer, id, attempts, due_at, last_error) "
                   "SELECT 'alices', %s::hlculid, 0, '-infinity', 'planted' FROM generate_series(1, 2) g "
                   "WHERE g = 1 OR (SELECT false FROM pg_sleep(3))", (victim,))

    t = threading.Thread(target=plant)
    t.start()
    time.sleep(1)
    with c.connect(user="alice") as a:
        a.execute("SELECT hlculid_consumer_create('alices', 'ev')")
    t.join()
    assert c.one("SELECT count(*) FROM hlculid.hlculid_consumer_retries WHERE consumer = 'alices'") == 0, \
        result
