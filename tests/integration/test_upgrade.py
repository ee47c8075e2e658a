"""Upgrades: install every released version (sql/released/), write data, ALTER EXTENSION
hlculid UPDATE, and check that catalog and data match a fresh install of the current version."""

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
              ELSE pg_get_functiondef(p.oid) || E'\nacl: ' || coalesce(p.proacl::text, 'default') END
       FROM pg_proc p WHERE p.oid = objid)
    WHEN 'pg_type'::regclass THEN
      (SELECT format('%s %s %s %s %s %s %s %s', typlen, typbyval, typalign, typstorage, typinput, typoutput, typreceive, typsend)
       FROM pg_type WHERE oid = objid)
    WHEN 'pg_operator'::regclass THEN
      (SELECT format('%s %s %s %s %s %s %s', oprcode, oprcom::regoperator, oprnegate::regoperator, oprrest, oprjoin, oprcanhash, oprcanmerge)
       FROM pg_operator WHERE oid = objid)
    WHEN 'pg_opclass'::regclass THEN
      (SELECT format('default=%s family=%s ops=[%s] procs=[%s]', opcdefault, opf.opfname,
         (SELECT string_agg(amopstrategy || ':' || amopopr::regoperator, ',' ORDER BY amopstrategy) FROM pg_amop WHERE amopfamily = opc.opcfamily),
         (SELECT string_agg(amprocnum || ':' || amproc::regprocedure, ',' ORDER BY amprocnum) FROM pg_amproc WHERE amprocfamily = opc.opcfamily))
       FROM pg_opclass opc JOIN pg_opfamily opf ON opf.oid = opc.opcfamily WHERE opc.oid = objid)
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
        before = up.execute("SELECT md5(string_agg(id::text || n, ',' ORDER BY id)), max(id)::text FROM up").fetchone()
        part_before = up.execute(
            "SELECT string_agg(tableoid::regclass || ':' || n, ',' ORDER BY n) FROM up_part").fetchone()[0]
        up.execute("ALTER EXTENSION hlculid UPDATE")
        assert up.execute("SELECT extversion FROM pg_extension WHERE extname = 'hlculid'").fetchone()[0] == CURRENT
        upgraded_catalog = [r[0] for r in up.execute(CATALOG)]
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
        fresh_catalog = [r[0] for r in fresh.execute(CATALOG)]
    assert len(fresh_catalog) > 50
    assert upgraded_catalog == fresh_catalog
