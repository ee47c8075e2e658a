"""Upgrades: install every released version (sql/released/), write data, ALTER EXTENSION
hlculid UPDATE, and check that catalog and data match a fresh install of the current version.
From 0.2.0 on, what users build on the extension survives the update too: a GRANT and a view on
every function, and a view using every operator, cast and a column of the type."""

import re
from pathlib import Path

import psycopg
import pytest

from pgcluster import PG

REPO = Path(__file__).resolve().parents[2]
CURRENT = re.search(r'^version = "(.+)"', (REPO / "Cargo.toml").read_text(), re.M).group(1)
# Released versions with an install script for the major under test: hlculid--V.pgM.sql for the
# 0.1.x scripts built per major (0.1.0 for 15 and 18 only), hlculid--V.sql from 0.2.0 on (one text
# for every major).
RELEASED = sorted({re.match(r"hlculid--([0-9.]+?)(\.pg\d+)?\.sql", p.name).group(1)
                   for p in (REPO / "sql" / "released").glob("hlculid--*.sql")
                   if re.fullmatch(rf"hlculid--[0-9.]+?(\.pg{PG})?\.sql", p.name)})

# Every object of the extension, described with everything that defines its behaviour.
CATALOG = r"""
WITH members AS (
  SELECT classid, objid FROM pg_depend
  WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
    AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'hlculid'))
SELECT pg_describe_object(classid, objid, 0) || E'\n' || coalesce(CASE classid
    WHEN 'pg_proc'::regclass THEN
      (SELECT CASE WHEN p.prokind = 'a' THEN
                (SELECT format('agg %s %s %s %s', aggtransfn, aggcombinefn, aggsortop::regoperator, aggtranstype::regtype)
                 FROM pg_aggregate WHERE aggfnoid = p.oid)
              -- the grants as a set (the order of an ACL is the order they were given in)
              ELSE pg_get_functiondef(p.oid) || E'\nacl: ' || coalesce(
                (SELECT string_agg(a::text, ',' ORDER BY a::text) FROM unnest(p.proacl) a), 'default') END
       FROM pg_proc p WHERE p.oid = objid)
    WHEN 'pg_type'::regclass THEN
      (SELECT format('%s %s %s %s %s %s %s %s', typlen, typbyval, typalign, typstorage, typinput, typoutput, typreceive, typsend)
       FROM pg_type WHERE oid = objid)
    WHEN 'pg_operator'::regclass THEN
      (SELECT format('%s %s %s %s %s %s %s', oprcode, oprcom::regoperator, oprnegate::regoperator, oprrest, oprjoin, oprcanhash, oprcanmerge)
       FROM pg_operator WHERE oid = objid)
    WHEN 'pg_opclass'::regclass THEN
      (SELECT format('default=%s family=%s ops=[%s] procs=[%s]', opcdefault, opf.opfname,
         (SELECT string_agg(amopstrategy || ':' || amopopr::regoperator, ',' ORDER BY amopstrategy, amopopr::regoperator::text) FROM pg_amop WHERE amopfamily = opc.opcfamily),
         (SELECT string_agg(amprocnum || ':' || amproc::regprocedure, ',' ORDER BY amprocnum, amproc::regprocedure::text) FROM pg_amproc WHERE amprocfamily = opc.opcfamily))
       FROM pg_opclass opc JOIN pg_opfamily opf ON opf.oid = opc.opcfamily WHERE opc.oid = objid)
    WHEN 'pg_class'::regclass THEN
      -- row-level security and its policies (hlculid's consumer tables)
      (SELECT format('rls=%s force=%s policies=[%s]', c.relrowsecurity, c.relforcerowsecurity,
         (SELECT string_agg(format('%s %s %s %s using=%s check=%s', polname, polcmd, polpermissive, polroles::regrole[],
                  pg_get_expr(polqual, polrelid), pg_get_expr(polwithcheck, polrelid)), ';' ORDER BY polname)
          FROM pg_policy WHERE polrelid = c.oid))
       FROM pg_class c WHERE c.oid = objid)
    WHEN 'pg_cast'::regclass THEN
      (SELECT format('%s %s %s', castfunc::regprocedure, castcontext, castmethod) FROM pg_cast WHERE oid = objid)
    ELSE '' END, '') || E'\ncomment: ' || coalesce(obj_description(objid, classid::regclass::text), '')
FROM members ORDER BY 1
"""

DATA = """
CREATE TABLE up (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int);
CREATE INDEX up_hash ON up USING hash (id);
CREATE INDEX up_brin ON up USING brin (id);
CREATE TABLE up_part (id hlculid PRIMARY KEY, n int) PARTITION BY HASH (id);
CREATE TABLE up_part_0 PARTITION OF up_part FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE up_part_1 PARTITION OF up_part FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO up (n) SELECT generate_series(1, 5000);
INSERT INTO up_part SELECT * FROM up;
"""


def connect(c, db):
    return psycopg.connect(host=str(c.dir), port=c.port, user="postgres", dbname=db, autocommit=True)


# What users build on the extension must survive ALTER EXTENSION UPDATE from this release on:
# 0.1.1 -> 0.2.0 dropped and recreated hlculid_clock(), which loses grants and is blocked by views.
KEEPS_USER_OBJECTS_FROM = (0, 2, 0)
GRANTEE = "hlculid_upgrade_user"

# Every function of the extension, from the catalog (pg_depend), with what it takes to call it.
FUNCTIONS = """
SELECT p.oid, p.oid::regprocedure::text, n.nspname, p.proname, p.provolatile, p.proretset,
       p.prorettype::regtype::text, t.typtype,
       array(SELECT a::regtype::text FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY u(a, i) ORDER BY i),
       p.oid IN (SELECT unnest(array[typinput, typoutput, typreceive, typsend]) FROM pg_type
                 WHERE oid = 'hlculid'::regtype)
         OR p.oid IN (SELECT amproc FROM pg_amproc)
FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid JOIN pg_type t ON t.oid = p.prorettype
JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE d.classid = 'pg_proc'::regclass AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'hlculid')
ORDER BY 2
"""
MEMBERS = """
SELECT objid FROM pg_depend WHERE classid = %s::regclass AND refclassid = 'pg_extension'::regclass
  AND deptype = 'e' AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'hlculid')
"""


def ident(name):
    return '"' + name.replace('"', '""') + '"'


def version_key(v):
    return tuple(int(x) for x in v.split("."))


def samples(conn):
    """One SQL value per argument type, for calls built from the catalog."""
    id_text, uuid_text, hex_ = conn.execute("""
        SELECT x::text, x::uuid::text, encode(hlculid_to_bytea(x), 'hex')
        FROM (SELECT hlculid_from_parts('2026-01-02 03:04:05.678+00', 5, 3, 123456789) x) s""").fetchone()
    return {
        "hlculid": f"'{id_text}'::hlculid",
        "cstring": f"'{id_text}'::cstring",
        "text": f"'{id_text}'::text",
        "character varying": f"'{id_text}'::varchar",
        "uuid": f"'{uuid_text}'::uuid",
        "bytea": f"'\\x{hex_}'::bytea",
        "timestamp with time zone": "'2026-01-02 03:04:05.678+00'::timestamptz",
        "integer": "1",
        "bigint": "1::bigint",
        "boolean": "true",
        "interval": "'1 day'::interval",
        "regclass": "'upgrade_range'::regclass",
        "tstzrange": "tstzrange('2026-01-02', '2026-01-03')",
        "name": "'id'::name",
        "integer[]": "ARRAY[1]",
        "timestamp with time zone[]": "ARRAY['2026-01-02 03:04:05.678+00'::timestamptz]",
        "hlculid[]": f"ARRAY['{id_text}'::hlculid]",
        "anyelement": "NULL::upgrade_range",  # hlculid_read: a row of a table keyed on an hlculid
        "oid": "'upgrade_range'::regclass::oid",  # hlculid_acting_as_owner (0.5.0)
        "oid[]": "'{}'::oid[]",  # hlculid_backfill_update's batch (0.5.0)
        "text[]": "'{}'::text[]",
    }


def make_user_objects(conn):
    """As a superuser, on the extension as installed: a role, EXECUTE granted to it (and revoked
    from PUBLIC, so the grant is what gives the right) on every function, a view per function
    that can be called in one, and a view of a column of the type through every operator and
    cast. Returns what check_user_objects needs."""
    conn.execute(f"CREATE ROLE {GRANTEE}")
    conn.execute("CREATE TABLE upgrade_range (id hlculid PRIMARY KEY) PARTITION BY RANGE (id)")
    sample = samples(conn)
    functions, views, exempt = [], [], {}
    for oid, sig, nsp, name, volatility, retset, rettype, typtype, args, support in conn.execute(FUNCTIONS).fetchall():
        functions.append((oid, sig))
        conn.execute(f"REVOKE EXECUTE ON ROUTINE {sig} FROM PUBLIC")
        conn.execute(f"GRANT EXECUTE ON ROUTINE {sig} TO {GRANTEE}")
        if "internal" in args:
            # No SQL value can be passed as internal: only PostgreSQL calls these (binary input,
            # opclass support), and the type and opclasses that do depend on them, as the
            # columns and indexes of DATA depend on those. The grant above still covers them.
            exempt[sig] = "type I/O or opclass support" if support else "takes internal"
            continue
        if conn.execute("SELECT prokind FROM pg_proc WHERE oid = %s", (oid,)).fetchone()[0] == "p":
            exempt[sig] = "a procedure (CALL, not in a view); the grant above still covers it"
            continue
        missing = [a for a in args if a not in sample]
        assert not missing, f"no sample value for {missing} (calling {sig}): add one to samples()"
        arg_values = [sample[a] for a in args]
        if name == "hlculid_from_uuidv7":  # a version 7 uuid, the only kind it takes
            arg_values = ["'0185e6d5-4a20-7000-8000-000000000000'::uuid"]
        call = f"{ident(nsp)}.{ident(name)}({', '.join(arg_values)})"
        if retset or rettype == "record":
            body = f"SELECT * FROM {call} AS r"
        elif typtype == "p":  # cstring, void: not a view column type
            body = f"SELECT ({call})::text AS r"
        else:
            body = f"SELECT {call} AS r"
        view = f"upgrade_fn_{len(views)}"
        conn.execute(f"CREATE VIEW {view} AS {body}")
        # Volatile functions with arguments act on what the arguments name (partitions, the
        # clock): their views are planned, not run. The rest run; immutable results must not change.
        views.append((view, sig, volatility != "v" or not args, volatility == "i"))
    cols = ["id"]
    for name, left, right in conn.execute(
            f"SELECT oprname, oprleft::regtype::text, oprright::regtype::text FROM pg_operator "
            f"WHERE oid IN ({MEMBERS}) ORDER BY 1, 2, 3", ("pg_operator",)).fetchall():
        lhs = "id" if left == "hlculid" else sample[left]
        rhs = sample[right] if left == "hlculid" else "id"
        cols.append(f"{lhs} {name} {rhs}")
    for source, target in conn.execute(
            f"SELECT castsource::regtype::text, casttarget::regtype::text FROM pg_cast "
            f"WHERE oid IN ({MEMBERS}) ORDER BY 1, 2", ("pg_cast",)).fetchall():
        cols.append(f"CAST({'id' if source == 'hlculid' else sample[source]} AS {target})")
    assert len(cols) > 10, cols
    conn.execute("CREATE VIEW upgrade_ops_casts AS SELECT "
                 + ", ".join(f"{c} AS c{i}" for i, c in enumerate(cols)) + " FROM up")
    views.append(("upgrade_ops_casts", "operators and casts", True, True))
    assert len(views) + len(exempt) > 30 and len(exempt) < 10, (views, exempt)
    return functions, views, {v: view_rows(conn, v, run) for v, _, run, _ in views}


def view_rows(conn, view, run):
    """The view's rows, or for a function that refuses to run here (hlculid_cluster_pending()
    without Citus: 55000) the error's SQLSTATE, which must then be the same after the update."""
    query = f"SELECT * FROM {view}" + (" ORDER BY 1" if view == "upgrade_ops_casts" else "") + ("" if run else " LIMIT 0")
    try:
        return [tuple(map(str, r)) for r in conn.execute(query).fetchall()]
    except psycopg.errors.ObjectNotInPrerequisiteState as e:
        return [("refused", e.sqlstate)]


def check_user_objects(conn, made):
    """After the update: every grant is still there, on the same function (same OID, same
    signature), and every view still runs; immutable results are unchanged."""
    functions, views, before = made
    for oid, sig in functions:
        assert conn.execute("SELECT to_regprocedure(%s)::oid", (sig,)).fetchone()[0] == oid, \
            f"{sig} is no longer the function it was (dropped and recreated?)"
        assert conn.execute("SELECT has_function_privilege(%s, %s::oid, 'EXECUTE')",
                            (GRANTEE, oid)).fetchone()[0] is True, f"the grant on {sig} was lost"
    for view, sig, run, immutable in views:
        rows = view_rows(conn, view, run)
        if immutable or ("refused", "55000") in before[view] + rows:
            assert rows == before[view], f"{view} ({sig}) gives other results after the update"


def grant_like_the_upgraded(conn, made):
    """The same grants in a fresh install, so its ACLs compare equal."""
    for _, sig in made[0]:
        conn.execute(f"REVOKE EXECUTE ON ROUTINE {sig} FROM PUBLIC")
        conn.execute(f"GRANT EXECUTE ON ROUTINE {sig} TO {GRANTEE}")


def test_every_release_has_an_upgrade_path_to_the_current_version():
    assert RELEASED, "sql/released/ holds no released version"
    assert CURRENT not in RELEASED, "the current version must be newer than every released one"
    edges = {}
    for p in (REPO / "sql").glob("hlculid--*--*.sql"):
        a, b = re.match(r"hlculid--(.+)--(.+)\.sql", p.name).groups()
        edges.setdefault(a, []).append(b)
    for v in RELEASED:
        seen, todo = set(), [v]
        while todo:
            x = todo.pop()
            seen.add(x)
            todo += [y for y in edges.get(x, []) if y not in seen]
        assert CURRENT in seen, f"no chain of upgrade scripts from {v} to {CURRENT}"


@pytest.mark.parametrize("old", RELEASED)
def test_update_from_a_release_matches_a_fresh_install(make_cluster, old):
    c = make_cluster("upgrade", conf=["hlculid.publisher_id = 3"]).start()
    c.sql("CREATE DATABASE upgraded")
    c.sql("CREATE DATABASE fresh")
    with connect(c, "upgraded") as up:
        versions = {r[0] for r in up.execute(
            "SELECT version FROM pg_available_extension_versions WHERE name = 'hlculid'")}
        assert {old, CURRENT} <= versions
        up.execute("CREATE EXTENSION hlculid VERSION %s" % psycopg.sql.quote(old))
        up.execute(DATA)
        keeps = version_key(old) >= KEEPS_USER_OBJECTS_FROM
        made = make_user_objects(up) if keeps else None
        before = up.execute("SELECT md5(string_agg(id::text || n, ',' ORDER BY id)), max(id)::text FROM up").fetchone()
        part_before = up.execute(
            "SELECT string_agg(tableoid::regclass || ':' || n, ',' ORDER BY n) FROM up_part").fetchone()[0]
        up.execute("ALTER EXTENSION hlculid UPDATE")
        assert up.execute("SELECT extversion FROM pg_extension WHERE extname = 'hlculid'").fetchone()[0] == CURRENT
        upgraded_catalog = [r[0] for r in up.execute(CATALOG)]
        if keeps:
            check_user_objects(up, made)
        # data and indexes survive: same rows, same partitions, indexes intact and used
        after = up.execute("SELECT md5(string_agg(id::text || n, ',' ORDER BY id)), max(id)::text FROM up").fetchone()
        assert after == before
        assert up.execute(
            "SELECT string_agg(tableoid::regclass || ':' || n, ',' ORDER BY n) FROM up_part").fetchone()[0] == part_before
        up.execute("CREATE EXTENSION amcheck")
        for idx in ["up_pkey", "up_part_0_pkey", "up_part_1_pkey"]:
            up.execute("SELECT bt_index_check(%s::regclass, true)", (idx,))
        up.execute("SET enable_seqscan = off")
        some = up.execute("SELECT id::text FROM up WHERE n = 42").fetchone()[0]
        assert up.execute("SELECT n FROM up WHERE id = %s::hlculid", (some,)).fetchone()[0] == 42
        # generation carries on above everything written before the update
        assert up.execute("INSERT INTO up (n) VALUES (0) RETURNING id > %s::hlculid", (before[1],)).fetchone()[0]
    with connect(c, "fresh") as fresh:
        fresh.execute("CREATE EXTENSION hlculid")
        if keeps:
            grant_like_the_upgraded(fresh, made)
        fresh_catalog = [r[0] for r in fresh.execute(CATALOG)]
    assert len(fresh_catalog) > 50
    assert upgraded_catalog == fresh_catalog


def test_the_move_out_of_public_keeps_horizons_grants_and_a_prepared_hold(make_cluster):
    """0.4.0 lived in public (a database owner's schema since PostgreSQL 15); the update to 0.5.0
    moves it: functions and types into pg_catalog, the table and view into the schema hlculid,
    keeping the horizons' rows, a grant on the table, a table using the type, and the hold of a
    transaction prepared before the update, which still holds the horizon after it."""
    c = make_cluster("move", conf=["hlculid.publisher_id = 3", "max_prepared_transactions = 4"]).start()
    with connect(c, "postgres") as conn:
        conn.execute("CREATE EXTENSION hlculid VERSION '0.4.0'")
        assert conn.execute("SELECT extnamespace::regnamespace::text FROM pg_extension "
                            "WHERE extname = 'hlculid'").fetchone()[0] == "public"
        conn.execute("CREATE TABLE ev (id hlculid PRIMARY KEY DEFAULT hlculid_generate(), n int)")
        conn.execute("INSERT INTO ev (n) SELECT generate_series(1, 100)")
        conn.execute("SELECT hlculid_advance_horizon(9, hlculid_generate())")
        rows = conn.execute("SELECT publisher, horizon::text FROM public.hlculid_horizons ORDER BY 1").fetchall()
        conn.execute("CREATE ROLE hlculid_move_reader")
        conn.execute("GRANT SELECT ON public.hlculid_horizons TO hlculid_move_reader")
        with psycopg.connect(host=str(c.dir), port=c.port, user="postgres", dbname="postgres") as p:
            p.execute("INSERT INTO ev (n) VALUES (-1)")
            p.execute("PREPARE TRANSACTION 'held_across_the_move'")
        held = conn.execute("SELECT hlculid_horizon()::text").fetchone()[0]
        conn.execute("ALTER EXTENSION hlculid UPDATE")
        assert conn.execute("SELECT extversion, extnamespace::regnamespace::text FROM pg_extension "
                            "WHERE extname = 'hlculid'").fetchone() == (CURRENT, "pg_catalog")
        # nothing of the extension is left in public
        assert conn.execute("""SELECT count(*) FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
            WHERE e.extname = 'hlculid' AND d.deptype = 'e'
              AND (pg_identify_object(d.classid, d.objid, 0)).schema = 'public'""").fetchone()[0] == 0
        assert conn.execute("SELECT publisher, horizon::text FROM hlculid.hlculid_horizons ORDER BY 1").fetchall() == rows
        assert conn.execute("SELECT has_table_privilege('hlculid_move_reader', 'hlculid.hlculid_horizons', 'SELECT')"
                            ).fetchone()[0]
        assert conn.execute("SELECT count(*) FROM ev WHERE hlculid_ts(id) <= now()").fetchone()[0] == 100
        # the prepared transaction still holds the horizon, and the view shows it
        assert conn.execute("SELECT hlculid_horizon()::text").fetchone()[0] == held
        assert conn.execute("SELECT gid FROM hlculid.hlculid_horizon_holders").fetchall() == [("held_across_the_move",)]
        conn.execute("COMMIT PREPARED 'held_across_the_move'")
        assert conn.execute("SELECT hlculid_horizon() > %s::hlculid", (held,)).fetchone()[0]
        # and the moved functions' bodies name nothing in public
        assert conn.execute("""SELECT count(*) FROM pg_proc WHERE pronamespace = 'pg_catalog'::regnamespace
            AND proname LIKE 'hlculid%' AND prosrc LIKE '%public.%'""").fetchone()[0] == 0


def test_an_update_refuses_a_schema_named_hlculid_made_before_it(make_cluster):
    """The update creates the schema hlculid for the table and view; one made before by another
    role (who could have put objects in it) stops the update, which changes nothing."""
    c = make_cluster("move-taken", conf=["hlculid.publisher_id = 3"]).start()
    with connect(c, "postgres") as conn:
        conn.execute("CREATE EXTENSION hlculid VERSION '0.4.0'")
        conn.execute("CREATE ROLE hlculid_squatter")
        conn.execute("CREATE SCHEMA hlculid AUTHORIZATION hlculid_squatter")
        with pytest.raises(psycopg.errors.DuplicateSchema, match='schema "hlculid" already exists') as e:
            conn.execute("ALTER EXTENSION hlculid UPDATE")
        assert "Rename or drop that schema" in e.value.diag.message_hint
        assert conn.execute("SELECT extversion, extnamespace::regnamespace::text FROM pg_extension "
                            "WHERE extname = 'hlculid'").fetchone() == ("0.4.0", "public")


def test_the_update_from_0_4_0_moves_horizon_writers_to_hlculid_advance_horizon(make_cluster):
    """0.4.0's docs/security.md gave publishers INSERT and UPDATE on hlculid_horizons, with which
    they could set a row past the clock bound. The update takes every write privilege on the table
    from every role but its owner, and gives EXECUTE on hlculid_advance_horizon (no longer PUBLIC)
    to the roles that could write rows, so they keep publishing within the bound."""
    c = make_cluster("upgrade-writers", conf=["hlculid.publisher_id = 3"]).start()
    c.sql("CREATE EXTENSION hlculid VERSION '0.4.0'")
    for role in ("pub", "cleaner", "reader", "nobody"):
        c.sql(f"CREATE ROLE {role} LOGIN")
    c.sql("GRANT SELECT, INSERT, UPDATE ON hlculid_horizons TO pub")
    c.sql("GRANT DELETE, TRUNCATE ON hlculid_horizons TO cleaner")
    c.sql("GRANT SELECT ON hlculid_horizons TO reader")
    c.sql("ALTER EXTENSION hlculid UPDATE")
    privileges = """SELECT string_agg(privilege_type, ',' ORDER BY privilege_type) FROM information_schema.role_table_grants
                    WHERE table_schema = 'hlculid' AND table_name = 'hlculid_horizons' AND grantee = %s"""
    assert [c.sql(privileges, (r,))[0][0] for r in ("pub", "cleaner", "reader")] == ["SELECT", None, "SELECT"]
    assert [c.one(f"SELECT has_function_privilege('{r}', 'hlculid_advance_horizon(int4, hlculid)', 'EXECUTE')")
            for r in ("pub", "cleaner", "reader", "nobody")] == [True, False, False, False]
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        c.sql("UPDATE hlculid.hlculid_horizons SET horizon = 'FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF'", user="pub")
    c.sql("SELECT hlculid_advance_horizon(4, hlculid_generate())", user="pub")
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        c.sql("SELECT hlculid_advance_horizon(4, 'FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF')", user="pub")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        c.sql("DELETE FROM hlculid.hlculid_horizons", user="cleaner")
