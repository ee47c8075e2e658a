"""What an unprivileged role can and cannot do (README, "Security"): observe is bounded by
hlculid.max_clock_skew however often it is called, and can be revoked; recovery is for
superusers; and the extension's scripts run none of the look-alike functions or operators that a
role with CREATE on the target schema planted there first."""

import contextlib
import pathlib
import subprocess

import psycopg
import pytest
from pgcluster import pg_config

SKEW_MS = 2000

# Look-alikes of everything the install and upgrade scripts call or might resolve by name, each
# recording that it ran. They are SECURITY INVOKER: if a script called one, it would run as the
# superuser who creates the extension.
LOOKALIKES = """
CREATE TABLE app.ran (what text);
GRANT INSERT ON app.ran TO PUBLIC;
CREATE FUNCTION app.current_setting(text) RETURNS text LANGUAGE sql
    AS $$ INSERT INTO app.ran VALUES ('current_setting(text)') RETURNING '999999' $$;
CREATE FUNCTION app.current_setting(varchar) RETURNS text LANGUAGE sql
    AS $$ INSERT INTO app.ran VALUES ('current_setting(varchar)') RETURNING '999999' $$;
CREATE FUNCTION app.btequalimage(oid) RETURNS boolean LANGUAGE sql
    AS $$ INSERT INTO app.ran VALUES ('btequalimage') RETURNING true $$;
CREATE FUNCTION app.hlculid_ts(anyelement) RETURNS timestamptz LANGUAGE sql
    AS $$ INSERT INTO app.ran VALUES ('hlculid_ts') RETURNING now() $$;
CREATE FUNCTION app.hlculid_counter(anyelement) RETURNS int LANGUAGE sql
    AS $$ INSERT INTO app.ran VALUES ('hlculid_counter') RETURNING 0 $$;
CREATE FUNCTION app.hlculid_publisher(anyelement) RETURNS int LANGUAGE sql
    AS $$ INSERT INTO app.ran VALUES ('hlculid_publisher') RETURNING 0 $$;
CREATE FUNCTION app.hlculid_random(anyelement) RETURNS bigint LANGUAGE sql
    AS $$ INSERT INTO app.ran VALUES ('hlculid_random') RETURNING 0::bigint $$;
CREATE FUNCTION app.name_eq_text(name, text) RETURNS boolean LANGUAGE sql
    AS $$ INSERT INTO app.ran VALUES ('= (name, text)') RETURNING true $$;
CREATE OPERATOR app.= (LEFTARG = name, RIGHTARG = text, FUNCTION = app.name_eq_text);
CREATE FUNCTION app.int_ge(int, int) RETURNS boolean LANGUAGE sql
    AS $$ INSERT INTO app.ran VALUES ('>= (int, int)') RETURNING true $$;
CREATE OPERATOR app.>= (LEFTARG = int, RIGHTARG = int, FUNCTION = app.int_ge);
CREATE TABLE app.pg_amproc (amprocnum int);
"""


def use_extension(c):
    """Everything a user does with the extension, with the hostile schema first in the path."""
    c.sql("""
        SET search_path = app, public;
        CREATE TABLE public.ev (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int);
        CREATE INDEX ON public.ev USING hash (id);
        CREATE INDEX ON public.ev USING brin (id);
        INSERT INTO public.ev (n) SELECT generate_series(1, 1000);
        SELECT hlculid_decode(id), id::text::hlculid, id::uuid, id::bytea, id::timestamptz
          FROM public.ev ORDER BY ev.id LIMIT 10;
        SELECT count(*) FROM public.ev WHERE id >= hlculid_min(now() - interval '1 hour');
    """)


def hostile_schema(c):
    c.sql("CREATE ROLE mallory LOGIN")
    c.sql("CREATE SCHEMA app")
    c.sql("GRANT CREATE, USAGE ON SCHEMA app TO mallory")
    c.sql(LOOKALIKES, user="mallory")


@contextlib.contextmanager
def released_into(version, schema):
    """The secondary control file scripts/integration.sh writes for a released version (which
    puts it in public, as its own control file did), saying `schema` instead for a while."""
    share = subprocess.run([pg_config(), "--sharedir"], check=True, capture_output=True, text=True).stdout.strip()
    control = pathlib.Path(share, "extension", f"hlculid--{version}.control")
    saved = control.read_text()
    tmp = control.with_name(control.name + ".test")
    tmp.write_text(f"schema = {schema}\n")
    tmp.rename(control)  # by rename, as every install here
    try:
        yield
    finally:
        tmp.write_text(saved)
        tmp.rename(control)


def test_install_in_a_schema_with_planted_lookalikes_runs_none_of_them(make_cluster):
    c = make_cluster("hostile-install", conf=["hlculid.publisher_id = 8"]).start()
    hostile_schema(c)
    # since 0.5.0 the extension's home is pg_catalog: a schema of the caller's choice is refused
    with pytest.raises(psycopg.errors.FeatureNotSupported, match='must be installed in schema "pg_catalog"'):
        c.sql("CREATE EXTENSION hlculid SCHEMA app")
    c.sql("SET search_path = app, public; CREATE EXTENSION hlculid")
    assert c.one("SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'hlculid'") == "pg_catalog"
    use_extension(c)
    assert c.sql("SELECT what FROM app.ran") == []
    # the planted operator and functions are really there and callable, so the check can fail
    assert c.one("SELECT 'x'::name OPERATOR(app.=) 'y'::text")
    assert c.sql("SELECT what FROM app.ran") == [("= (name, text)",)]


def test_upgrade_in_a_schema_with_planted_lookalikes_runs_none_of_them(make_cluster):
    c = make_cluster("hostile-upgrade", conf=["hlculid.publisher_id = 8"]).start()
    hostile_schema(c)
    with released_into("0.1.1", "app"):
        c.sql("CREATE EXTENSION hlculid SCHEMA app VERSION '0.1.1'")
    c.sql("SET search_path = app, public; ALTER EXTENSION hlculid UPDATE")
    assert c.one("SELECT extversion FROM pg_extension WHERE extname = 'hlculid'") != "0.1.1"
    # the update moved it out of the schema another role may create in
    assert c.one("SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'hlculid'") == "pg_catalog"
    assert c.one("SELECT count(*) FROM pg_proc WHERE pronamespace = 'app'::regnamespace AND proname LIKE 'hlculid%'") == 4
    use_extension(c)
    assert c.sql("SELECT what FROM app.ran") == []


def test_an_ordinary_role_cannot_push_the_clock_beyond_the_skew_bound(make_cluster):
    c = make_cluster("observe-bound", conf=["hlculid.publisher_id = 9", f"hlculid.max_clock_skew = {SKEW_MS}"]).start()
    c.sql("CREATE EXTENSION hlculid")
    c.sql("CREATE ROLE ordinary LOGIN")
    accepted = refused = 0
    worst = 0
    with c.connect(user="ordinary") as conn:
        for i in range(300):
            # each call asks for just under, or just over, the bound ahead of where the clock is
            # now (not of the wall clock), trying to ratchet it further every time
            ahead = SKEW_MS - 5 if i % 2 == 0 else SKEW_MS + 50
            try:
                conn.execute(f"""SELECT hlculid_observe(hlculid_max(logical_time + interval '{ahead} ms'))
                                 FROM hlculid_clock()""")
                accepted += 1
            except psycopg.errors.InvalidParameterValue:
                refused += 1
            worst = max(worst, conn.execute("SELECT drift_ms FROM hlculid_clock()").fetchone()[0])
            conn.execute("SELECT hlculid_generate()")
    assert accepted > 0 and refused >= 150
    # one id may carry the clock a millisecond on from the observed one
    assert worst <= SKEW_MS + 1


def test_observe_can_be_revoked_and_granted_and_recovery_is_for_superusers(make_cluster):
    c = make_cluster("observe-grant", conf=["hlculid.publisher_id = 9"]).start()
    c.sql("CREATE EXTENSION hlculid")
    c.sql("CREATE ROLE ordinary LOGIN")
    c.sql("CREATE ROLE consumer LOGIN")
    # the README's recipe
    c.sql("REVOKE EXECUTE ON FUNCTION hlculid_observe(hlculid) FROM PUBLIC")
    c.sql("GRANT EXECUTE ON FUNCTION hlculid_observe(hlculid) TO consumer")
    observe = "SELECT hlculid_observe(hlculid_generate())"
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        c.sql(observe, user="ordinary")
    c.sql(observe, user="consumer")
    # generating stays open to every role, with the server's order and publisher
    before = c.sql("SELECT hlculid_generate()::text", user="consumer")[0][0]
    assert c.sql("SELECT id > %s::hlculid, hlculid_publisher(id) FROM (SELECT hlculid_generate() AS id) s",
                 (before,), user="ordinary") == [(True, 9)]
    for user in ("ordinary", "consumer"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.sql("SELECT hlculid_clock_recover(NULL)", user=user)


# docs/security.md, "Roles for readers and publishers": the publishing role's grants, exactly
PUBLISHER_GRANTS = "GRANT EXECUTE ON FUNCTION hlculid_advance_horizon(int4, hlculid) TO event_publisher"
FAR = "FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF"


def test_the_horizons_are_written_only_through_hlculid_advance_horizon(make_cluster):
    """0.4.0's publishing grants (INSERT, UPDATE on the table) let a publisher set a row to the
    largest id, past the bound hlculid_advance_horizon keeps: the row froze for good and the
    watermark returned an event from the future. The function is the only writer now."""
    c = make_cluster("horizon-writers", conf=["hlculid.publisher_id = 9", f"hlculid.max_clock_skew = {SKEW_MS}"]).start()
    c.sql("CREATE EXTENSION hlculid")
    c.sql("CREATE ROLE event_publisher NOLOGIN")
    c.sql("CREATE ROLE ingester LOGIN IN ROLE event_publisher")
    c.sql("CREATE ROLE nobody LOGIN")
    c.sql(PUBLISHER_GRANTS)
    c.sql("CREATE TABLE ev (id hlculid PRIMARY KEY, n int)")
    c.sql("SELECT hlculid_advance_horizon(3, hlculid_generate())")
    for q in (f"UPDATE hlculid.hlculid_horizons SET horizon = '{FAR}'",
              f"INSERT INTO hlculid.hlculid_horizons VALUES (4, '{FAR}', now())",
              f"INSERT INTO hlculid.hlculid_horizons VALUES (3, '{FAR}', now()) "
              "ON CONFLICT (publisher) DO UPDATE SET horizon = excluded.horizon",
              "DELETE FROM hlculid.hlculid_horizons",
              "TRUNCATE hlculid.hlculid_horizons"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.sql(q, user="ingester")
    # within the bound it works, and raises the row; beyond it, it is refused and nothing moves
    near = c.one("SELECT hlculid_min(clock_timestamp() + interval '1 s')::text")
    assert c.sql("SELECT hlculid_advance_horizon(3, %s::hlculid)::text", (near,), user="ingester") == [(near,)]
    for far in (f"'{FAR}'::hlculid", "hlculid_max(clock_timestamp() + interval '1 hour')"):
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            c.sql(f"SELECT hlculid_advance_horizon(3, {far})", user="ingester")
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        c.sql(f"SELECT hlculid_advance_horizon(5, '{FAR}')", user="ingester")
    # never lowered, through the function either
    c.sql("SELECT hlculid_advance_horizon(3, hlculid_min('2020-01-01'))", user="ingester")
    assert c.sql("SELECT publisher, horizon::text FROM hlculid.hlculid_horizons") == [(3, near)]
    # a role without the grant cannot call it; the watermark is not from the future
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        c.sql("SELECT hlculid_advance_horizon(3, hlculid_generate())", user="nobody")
    assert c.one("SELECT hlculid_ts(hlculid_watermark(ARRAY[3])) < clock_timestamp() + interval '2 s'")
    # SECURITY DEFINER, and no role but the table's owner holds more than SELECT on it
    assert c.one("SELECT prosecdef FROM pg_proc WHERE oid = 'hlculid_advance_horizon(int4, hlculid)'::regprocedure")
    assert c.one("""SELECT count(*) FROM pg_class c, aclexplode(c.relacl) a
                    WHERE c.oid = 'hlculid.hlculid_horizons'::regclass AND a.grantee <> c.relowner
                      AND a.privilege_type <> 'SELECT'""") == 0


def test_without_the_preload_a_session_cannot_loosen_the_horizons_bound(make_cluster):
    """Without shared_preload_libraries the library defines no setting, so any session may SET a
    placeholder hlculid.max_clock_skew: the SECURITY DEFINER function must not take it."""
    c = make_cluster("horizon-no-preload", preload=False).start()
    c.sql("CREATE EXTENSION hlculid")
    c.sql("CREATE ROLE event_publisher NOLOGIN")
    c.sql("CREATE ROLE ingester LOGIN IN ROLE event_publisher")
    c.sql(PUBLISHER_GRANTS)
    with c.connect(user="ingester") as conn:
        conn.execute("SET hlculid.max_clock_skew = '1000 years'")
        with pytest.raises(psycopg.errors.InvalidParameterValue) as e:
            conn.execute("SELECT hlculid_advance_horizon(3, hlculid_min('2500-01-01'))")
        assert "(00:00:00.5)" in e.value.diag.message_detail
        conn.execute("SELECT hlculid_advance_horizon(3, hlculid_min(clock_timestamp()))")
    assert c.one("SELECT count(*) FROM hlculid.hlculid_horizons") == 1
