"""mallory's look-alikes (docs/security.md, "search_path"): functions and operators named like
the ones hlculid's SQL calls, each recording who ran it in `public.ran` and, run by a superuser,
making mallory one. One list for every suite that plants them: tests/integration/test_search_path.py
(a database mallory owns) and tests/citus/test_search_path.py (every node of a Citus cluster)."""

# (name, argument types, result type): every name the extension's SQL calls, with the argument
# types that beat pg_catalog's own where the call needs a cast (quote_ident(name) over
# pg_catalog.quote_ident(text)), and the exact ones for a path that puts pg_catalog later.
FUNCTIONS = [
    ("quote_ident", "name", "text"), ("quote_ident", "text", "text"),
    ("to_regprocedure", "name", "regprocedure"), ("to_regprocedure", "text", "regprocedure"),
    ("format", "text", "text"), ("format", "text, regclass, name, name, name", "text"),
    ("format", "text, name, name", "text"),
    ("current_setting", "name", "text"), ("current_setting", "text", "text"),
    ("current_setting", "text, boolean", "text"), ("set_config", "text, text, boolean", "text"),
    ("now", "", "timestamptz"), ("clock_timestamp", "", "timestamptz"),
    ("pg_is_in_recovery", "", "boolean"), ("current_database", "", "name"),
    ("array_position", "int4[], int4", "int4"), ("cardinality", "int4[]", "int4"),
    ("pg_typeof", "anyelement", "regtype"), ("make_interval", "int4", "interval"),
    ("date_trunc", "text, timestamptz", "timestamptz"), ("to_char", "timestamptz, text", "text"),
    ("lower", "text", "text"), ("upper", "text", "text"), ("length", "text", "int4"),
    ("substr", "text, int4, int4", "text"), ("lpad", "text, int4, text", "text"),
    ("int8", "text", "int8"), ("text", "xid", "text"),
    # sql/src/cluster.sql's, and the commands it sends to every node
    ("split_part", "text, text, int4", "text"), ("string_to_array", "text, text", "text[]"),
    ("unnest", "text[]", "text"), ("unnest", "int4[]", "int4"), ("cardinality", "text[]", "int4"),
    ("to_regclass", "text", "regclass"), ("get_current_transaction_id", "", "int4"),
    ("run_command_on_all_nodes", "text", "int4"),
]
# The extension's own names (public holds the real ones: look-alikes go into the other schemas).
OWN = [
    ("hlculid_publish_horizon", "", "int4"), ("hlculid_horizon", "", "int4"),
    ("hlculid_advance_horizon", "int4, int4", "int4"), ("hlculid_horizon_catch_up", "", "int4"),
    ("hlculid_clock", "", "int4"), ("hlculid_ts", "int4", "timestamptz"),
]
OPERATORS = [  # (operator, left, right)
    ("||", "name", "text"), ("||", "text", "text"), ("=", "name", "name"), ("=", "name", "text"),
    ("=", "oid", "oid"), ("=", "int4", "int4"), ("=", "regtype", "regtype"),
    ("<>", "regtype", "regtype"), ("<>", "int4", "int4"), ("<", "int4", "int4"),
    (">", "int4", "int4"), ("<=", "int4", "int4"), (">=", "int4", "int4"),
    ("<", "timestamptz", "timestamptz"), (">=", "timestamptz", "timestamptz"),
    ("+", "timestamptz", "interval"), ("-", "timestamptz", "timestamptz"),
    ("-", "timestamptz", "interval"), ("+", "int4", "int4"), ("*", "interval", "int4"),
    ("~~", "text", "text"), ("||", "int4", "text"), ("||", "text", "int4"), ("<>", "text", "text"),
    ("<>", "int8", "int8"), ("=", "text", "text"),
]
RESULTS = {("||", "name", "text"): "text", ("||", "text", "text"): "text",
           ("+", "timestamptz", "interval"): "timestamptz", ("-", "timestamptz", "timestamptz"): "interval",
           ("-", "timestamptz", "interval"): "timestamptz", ("+", "int4", "int4"): "int4",
           ("*", "interval", "int4"): "interval", ("||", "int4", "text"): "text",
           ("||", "text", "int4"): "text"}  # the others are comparisons: boolean

# What a look-alike returns: the real answer where the attack needs the caller to go on unaware
# (0.4.0's worker kept publishing), NULL elsewhere.
PASS = {"quote_ident(name)": "pg_catalog.quote_ident($1::pg_catalog.text)",
        "||(name, text)": "pg_catalog.textcat($1::pg_catalog.text, $2)",
        "||(text, text)": "pg_catalog.textcat($1, $2)",
        "to_regprocedure(text)": "pg_catalog.to_regprocedure($1)",
        "format(text, regclass, name, name, name)": "pg_catalog.format($1, $2, $3, $4, $5)"}


def arm(c, dbname="postgres", setup=()):
    """As mallory (who may create in the database and in `public`): the table `public.ran`, the
    schemas "postgres" ($user of the superuser) and mallory, and the look-alikes in all three;
    then shows they are live (each wins where a call site leaves room for it: mallory's own default
    path finds schema mallory's first) and empties `ran`. `setup`: the superuser's statements
    first (settings mallory may not have)."""
    with c.connect(dbname=dbname) as conn:
        for stmt in [*setup, "SET ROLE mallory", "CREATE TABLE public.ran (what text, by_user name, session name)",
                     "GRANT INSERT ON public.ran TO PUBLIC", "CREATE SCHEMA postgres", "CREATE SCHEMA mallory"]:
            conn.execute(stmt)
    plant(c, ["public", "postgres", "mallory"], dbname, setup)
    with c.connect(user="mallory", dbname=dbname) as conn:
        conn.execute("SELECT quote_ident('x'::name), 'a'::name || 'b'::text")
    assert {r[0] for r in ran(c, dbname)} == {"mallory.quote_ident(name)", "mallory.||(name, text)"}
    c.sql("TRUNCATE public.ran", dbname=dbname)


def plant(c, schemas, dbname="postgres", setup=()):
    """mallory's look-alikes of every name in FUNCTIONS and OPERATORS, in each of `schemas`,
    created by mallory after the superuser's `setup` statements (settings mallory may not have)."""
    stmts = []
    for s in schemas:
        for name, args, result in FUNCTIONS + (OWN if s != "public" else []):
            stmts.append(f"CREATE FUNCTION {s}.{name}({args}) RETURNS {result} " + body(
                f"{s}.{name}({args})", f"RETURN {PASS.get(f'{name}({args})', 'NULL')};"))
        for i, (op, left, right) in enumerate(OPERATORS):
            fn = f"{s}.op_{i}"
            result = RESULTS.get((op, left, right), "boolean")
            stmts.append(f"CREATE FUNCTION {fn}({left}, {right}) RETURNS {result} " + body(
                f"{s}.{op}({left}, {right})", f"RETURN {PASS.get(f'{op}({left}, {right})', 'NULL')};"))
            stmts.append(f"CREATE OPERATOR {s}.{op} (LEFTARG = {left}, RIGHTARG = {right}, FUNCTION = {fn})")
    with c.connect(dbname=dbname) as conn:
        for stmt in [*setup, "SET ROLE mallory", *stmts]:
            conn.execute(stmt)


def ran(c, dbname="postgres"):
    return c.sql("SELECT what, by_user, session FROM public.ran", dbname=dbname)


def is_superuser(c, role):
    return c.one(f"SELECT rolsuper FROM pg_roles WHERE rolname = '{role}'")


# -- Look-alikes generated from the catalog ----------------------------------------------------
# The hand lists above name what the extension's SQL calls; what follows reads the catalog
# instead, so a function, operator, aggregate or cast added to the extension gets its look-alikes
# without anyone editing a list: tests/integration/test_hostile_owner.py and
# tests/citus/test_search_path.py plant them (docs/security.md, "search_path").

import re  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
# every schema a role without CREATE on the database's other schemas may create in (mallory owns
# public, creates "postgres", $user of the bootstrap superuser, first, and her own)
HOSTILE_SCHEMAS = ("public", "postgres", "mallory")
# types a PL/pgSQL look-alike cannot take or return: the routines with them are support functions
# (type I/O, sort and skip support, selectivity) no SQL calls by name
UNPLANTABLE = ("internal", "cstring", '"any"', "trigger", "event_trigger", "language_handler",
               "anyenum", "anyrange", "anymultirange", "anycompatiblerange", "anycompatiblemultirange")
# what stands in for a polymorphic argument of a built-in: each of these, consistently
POLY_BASES = ("pg_catalog.hlculid", "integer", "text", "name", "oid", "regclass", "bigint")
POLY_ARRAY = {"anyarray", "anycompatiblearray"}
POLY_ELEM = {"anyelement", "anycompatible", "anynonarray", '"any"'}
# argument types a call passes where an exact match (or the preferred type of an `unknown`
# literal's category) beats the extension's declared one: regclass params take 'public.t'
# literals (text beats regclass for `unknown`), timestamptz params take timestamps, name params
# take text
SWAPS = ({"regclass": "text"},
         {"timestamp with time zone": "timestamp without time zone",
          "timestamp with time zone[]": "timestamp without time zone[]"},
         {"name": "text"}, {"text": "name"})

ROUTINES_SQL = """
SELECT p.oid, p.proname::text, p.prokind::text, p.proretset, pg_catalog.format_type(p.prorettype, NULL),
       (SELECT pg_catalog.array_agg(pg_catalog.format_type(t, NULL) ORDER BY o)
        FROM pg_catalog.unnest(COALESCE(p.proallargtypes, p.proargtypes::pg_catalog.oid[])) WITH ORDINALITY a(t, o)),
       COALESCE(p.proargmodes::text[], '{}'), COALESCE(p.proargnames, '{}'),
       pg_catalog.pg_get_function_result(p.oid),
       (SELECT pg_catalog.array_agg(pg_catalog.pg_get_function_arg_default(p.oid, o::int4) ORDER BY o)
        FROM pg_catalog.generate_series(1, pg_catalog.cardinality(COALESCE(p.proallargtypes, p.proargtypes::pg_catalog.oid[]))) o)
FROM pg_catalog.pg_proc p
WHERE {where}
ORDER BY p.proname, p.oid
"""
IN_EXTENSION = """EXISTS (SELECT 1 FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension e
    ON d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.refobjid = e.oid
    WHERE e.extname = 'hlculid' AND d.deptype = 'e' AND d.classid = '{catalog}'::pg_catalog.regclass
      AND d.objid = {alias}.oid)"""


def quote(name):
    return '"' + name.replace('"', '""') + '"'


def lit(s):
    return "'" + s.replace("'", "''") + "'"


def body(what, returns, passthrough=None):
    """A look-alike's PL/pgSQL body (every name in it qualified, so look-alikes never call each
    other): records its run, makes mallory superuser when a
    superuser runs it. `returns`: the statement it ends with; `passthrough`, an expression
    (pg_catalog.name($1, ...)): returned instead where it works, so the caller goes on unaware and
    its transaction, with the record of the run, commits (an attacker's choice: 0.4.0's worker
    kept publishing)."""
    if passthrough:
        returns = (f"BEGIN\n        RETURN {passthrough};\n    EXCEPTION WHEN OTHERS THEN NULL;\n    END;\n"
                   f"    {returns}")
    return f"""LANGUAGE plpgsql AS $body$
BEGIN
    INSERT INTO public.ran VALUES ({lit(what)}, pg_catalog.current_user(), pg_catalog.session_user());
    IF (SELECT r.rolsuper FROM pg_catalog.pg_roles r
        WHERE r.rolname OPERATOR(pg_catalog.=) pg_catalog.current_user()) THEN
        BEGIN
            ALTER ROLE mallory SUPERUSER;
        EXCEPTION WHEN OTHERS THEN NULL;
        END;
    END IF;
    {returns}
END
$body$"""


def sql_sources():
    """The SQL the extension runs: its source files (sql/src, the upgrade templates) and the
    install script of this version (which has what pgrx generates)."""
    files = sorted((REPO / "sql" / "src").rglob("*.sql*"))
    files += sorted((REPO / "sql").glob("hlculid--*.sql"))
    return "\n".join(f.read_text() for f in files)


def called_names():
    """Every identifier followed by `(` in the extension's SQL (comments dropped), lower case."""
    text = re.sub(r"--[^\n]*", "", sql_sources())
    return sorted({m.lower() for m in re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(", text)})


def _routines(conn, where):
    conn.execute("SET search_path = ''")  # types print qualified unless in pg_catalog
    rows = conn.execute(ROUTINES_SQL.replace("{where}", where)).fetchall()
    conn.execute("RESET search_path")
    return [dict(zip(("oid", "name", "kind", "retset", "rettype", "types", "modes", "names", "result",
                      "defaults"), r)) for r in rows]


def _variant_maps(types, rowtypes, builtin):
    """Type substitutions for one routine's look-alikes: {} (the exact signature), each subset of
    SWAPS that applies, and for polymorphic arguments every row type (and, for built-ins, every
    type of POLY_BASES), combined."""
    present = set(types)
    swaps = [s for s in SWAPS if present & set(s)]
    if not builtin:
        swaps = [s for s in swaps if "text" not in s]  # the extension's text params: exact only
    subsets = [{}]
    for s in swaps:
        subsets += [{**m, **s} for m in subsets]
    if present & (POLY_ARRAY | POLY_ELEM):
        bases = list(rowtypes) + (list(POLY_BASES) if builtin else [])  # row types: pg_typeof(t)
        polys = [{**{p: b for p in POLY_ELEM}, **{p: b + "[]" for p in POLY_ARRAY}} for b in bases]
        subsets = subsets + [{**m, **p} for m in subsets for p in polys]
    return subsets


def routine_lookalikes(r, schema, rowtypes=(), builtin=False, extra_default=True):
    """The look-alikes of one routine in `schema`, as (input types, how many of them a call must
    pass, whether it is the extra-DEFAULT one, statement with DEFAULTs, statement without): its
    exact signature (names, modes and DEFAULTs kept, so named and defaulted calls match), the
    variants of _variant_maps, and, with extra_default, one with an extra DEFAULT argument (a call
    with the real arguments also matches it: public.hlculid_horizon(hostile_extra int DEFAULT 0))."""
    out = []
    types = r["types"] or []
    modes = r["modes"] or ["i"] * len(types)
    names = r["names"] + [""] * (len(types) - len(r["names"]))
    defaults = r["defaults"] or [None] * len(types)
    every = set(types) | {r["rettype"]}
    if any(u in t for t in every for u in UNPLANTABLE if not (u == '"any"' and builtin)):
        return out
    if builtin and any("." in t for t in every):
        return out  # another extension's (Citus') function in pg_catalog, with types of its schema
    for subst in _variant_maps([t for t, m in zip(types, modes) if m in "ibv"], rowtypes, builtin):
        def sub(t):
            return subst.get(t, t)
        if builtin and any(sub(t) in ('"any"',) or any(u in sub(t) for u in UNPLANTABLE)
                           for t in types):
            continue
        args, bare, key, required = [], [], [], 0
        for t, m, n, d in zip(types, modes, names, defaults):
            if m == "t":
                continue
            mode = {"i": "", "o": "OUT ", "b": "INOUT ", "v": "VARIADIC "}[m]
            st = sub(t) + ("[]" if m == "v" and not sub(t).endswith("]") else "")
            a = f"{mode}{quote(n) + ' ' if n else ''}{st}"
            bare.append(a)
            args.append(a + (f" DEFAULT {d}" if d is not None and m in "ib" else ""))
            if m in "ibv":
                key.append(st)
                required += d is None
        variants = [(args, bare, key, required, False)]
        if extra_default and not subst and "v" not in modes:
            variants.append((args + ["hostile_extra integer DEFAULT 0"], bare + ["hostile_extra integer"],
                             key + ["integer"], required, True))
        for a, b, k, req, extra in variants:
            result = r["result"]
            if r["kind"] != "p":
                for p, base in subst.items():
                    if p in POLY_ELEM | POLY_ARRAY:
                        result = re.sub(rf"(?<![\w\"]){re.escape(p)}(?![\w\"])", base, result)
            what = f"{schema}.{r['name']}({', '.join(k)})"
            ret = None if r["kind"] == "p" else (
                "RETURN;" if r["retset"] or result.startswith("TABLE") or "o" in modes or "b" in modes
                or result == "void" else "RETURN NULL;")

            n_in = len(k) - extra
            passthrough = None
            if builtin and ret == "RETURN NULL;":
                passthrough = f"pg_catalog.{quote(r['name'])}({', '.join(f'${i + 1}' for i in range(n_in))})"

            def create(arglist):
                if r["kind"] == "p":
                    return f"CREATE PROCEDURE {schema}.{quote(r['name'])}({', '.join(arglist)}) " + body(what, "")
                return (f"CREATE FUNCTION {schema}.{quote(r['name'])}({', '.join(arglist)}) RETURNS {result} "
                        + body(what, ret, passthrough))
            out.append((tuple(k), req, extra, create(a), create(b)))
    return out


def generated_plan(conn, rowtypes=()):
    """Every look-alike statement, for every schema of HOSTILE_SCHEMAS, generated from the
    catalog of the database `conn` is connected to (as a superuser, or anyone: catalogs are
    public), and a summary {what: count} of what it covers. rowtypes: the qualified row types of
    tables the victims will pass to the polymorphic functions (hlculid_read(NULL::t, ...))."""
    ext = _routines(conn, IN_EXTENSION.format(catalog="pg_catalog.pg_proc", alias="p"))
    names = called_names()
    builtins = _routines(conn, "p.pronamespace = 'pg_catalog'::pg_catalog.regnamespace AND p.proname = ANY (%s)"
                         .replace("%s", "ARRAY[" + ", ".join(lit(n) for n in names) + "]::pg_catalog.name[]")
                         + " AND NOT " + IN_EXTENSION.format(catalog="pg_catalog.pg_proc", alias="p"))
    operators = conn.execute(
        "SELECT o.oprname::text, pg_catalog.format_type(o.oprleft, NULL), pg_catalog.format_type(o.oprright, NULL), "
        "pg_catalog.format_type(o.oprresult, NULL) FROM pg_catalog.pg_operator o WHERE "
        + IN_EXTENSION.format(catalog="pg_catalog.pg_operator", alias="o") + " ORDER BY 1, 2, 3").fetchall()
    casts = conn.execute(
        "SELECT pg_catalog.format_type(c.castsource, NULL), pg_catalog.format_type(c.casttarget, NULL), t.typname::text "
        "FROM pg_catalog.pg_cast c JOIN pg_catalog.pg_type t ON t.oid = c.casttarget WHERE "
        + IN_EXTENSION.format(catalog="pg_catalog.pg_cast", alias="c") + " ORDER BY 1, 2").fetchall()
    relations = conn.execute(
        "SELECT n.nspname::text, c.relname::text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
        "ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'v', 'p') AND "
        + IN_EXTENSION.format(catalog="pg_catalog.pg_class", alias="c") + " ORDER BY 1, 2").fetchall()
    stmts, seen = [], set()
    prefixes = {s: set() for s in HOSTILE_SCHEMAS}
    summary = {"extension routines": len(ext), "built-in routines": len(builtins),
               "operators": len(operators), "casts": len(casts), "relations": len(relations)}
    for s in HOSTILE_SCHEMAS:
        def add(key, stmt):
            if key is None or (s, key) not in seen:
                seen.add((s, key))
                stmts.append(stmt)
        def add_routine(name, looks):
            """Each look-alike, unless its signature is planted already; its DEFAULTs dropped
            where a shorter call would match another look-alike of this schema too (two of one
            schema matching a call make it ambiguous, an error rather than a run), except the
            extra-DEFAULT ones, which are there to overlap."""
            for k, req, extra, with_defaults, without in looks:
                if (s, name, k) in seen:
                    continue
                seen.add((s, name, k))
                arities = {(name, k[:n]) for n in range(req, len(k) + 1)}
                if extra or not (arities - {(name, k)}) & prefixes[s]:
                    stmts.append(with_defaults)
                    if not extra:
                        prefixes[s].update(arities)
                else:
                    stmts.append(without)
                    prefixes[s].add((name, k))
        for r in ext:
            if r["kind"] != "a":
                add_routine(r["name"], routine_lookalikes(r, s, rowtypes, extra_default=s == "public"))
        for r in builtins:
            add_routine(r["name"], routine_lookalikes(r, s, rowtypes, builtin=True, extra_default=False))
        for r in ext:  # the aggregates (min, max): a state function that records
            if r["kind"] != "a":
                continue
            t = r["types"][0]
            sfunc = f"{s}.hostile_agg_{r['name']}_{len(stmts)}"
            add(None, f"CREATE FUNCTION {sfunc}({t}, {t}) RETURNS {t} "
                      + body(f"{s}.{r['name']}({t}) (aggregate)", "RETURN NULL;"))
            add((r["name"], (t,)), f"CREATE AGGREGATE {s}.{quote(r['name'])}({t}) (SFUNC = {sfunc}, STYPE = {t})")
        for i, (op, left, right, result) in enumerate(operators):
            pairs = [(left, right)] + [(l, r) for l, r in ((left, "text"), ("text", right), ("text", "text"))
                                       if (l, r) != (left, right)]
            for j, (l, rt) in enumerate(pairs):
                fn = f"{s}.hostile_op_{i}_{j}"
                add(None, f"CREATE FUNCTION {fn}({l}, {rt}) RETURNS {result} "
                          + body(f"{s}.{op}({l}, {rt})", "RETURN NULL;"))
                add(("op", op, l, rt), f"CREATE OPERATOR {s}.{op} (LEFTARG = {l}, RIGHTARG = {rt}, FUNCTION = {fn})")
        for source, target, typname in casts:  # function-style casts: hlculid(x), uuid(x), ...
            for src in dict.fromkeys((source, "text")):
                add((typname, (src,)), f"CREATE FUNCTION {s}.{quote(typname)}({src}) RETURNS {target} "
                                       + body(f"{s}.{typname}({src}) (cast)", "RETURN NULL;"))
        # a type named like the extension's: a domain whose check records
        add(None, f"CREATE FUNCTION {s}.hostile_domain_check(text) RETURNS boolean "
                  + body(f"{s}.hlculid (domain)", "RETURN true;"))
        add(None, f"CREATE DOMAIN {s}.hlculid AS text CHECK ({s}.hostile_domain_check(VALUE))")
        # relations named like the extension's (hlculid.hlculid_horizons, ...): a view that records
        # when read, with an INSTEAD OF trigger that records when written
        for nsp, rel in relations:
            fn = f"{s}.hostile_rel_{rel}"
            add(None, f"CREATE FUNCTION {fn}() RETURNS SETOF {quote(nsp)}.{quote(rel)} "
                      + body(f"{s}.{rel} (relation)", "RETURN;"))
            add(None, f"CREATE VIEW {s}.{quote(rel)} AS SELECT * FROM {fn}()")
            add(None, f"CREATE FUNCTION {fn}_write() RETURNS trigger "
                      + body(f"{s}.{rel} (relation, written)", "RETURN NULL;"))
            add(None, f"CREATE TRIGGER hostile INSTEAD OF INSERT OR UPDATE OR DELETE ON {s}.{quote(rel)} "
                      f"FOR EACH ROW EXECUTE FUNCTION {fn}_write()")
    summary["statements"] = len(stmts)
    return stmts, summary, ext


PLANT = """DO $plant$
DECLARE r record;
BEGIN
    FOR r IN SELECT n, stmt FROM public.hostile_plan ORDER BY n LOOP
        BEGIN
            EXECUTE r.stmt;
        EXCEPTION WHEN duplicate_function THEN
            NULL;  -- the hand lists above planted this signature already
        WHEN OTHERS THEN
            INSERT INTO public.hostile_failed VALUES (r.stmt, SQLERRM);
        END;
    END LOOP;
END
$plant$"""


def arm_generated(c, dbname="postgres", setup=(), rowtypes=()):
    """arm() (the hand lists, the table `public.ran`, the schemas "postgres" and mallory), then the
    look-alikes generated from the catalog in the three schemas, planted by mallory with
    `search_path = pg_catalog` (so her DDL's own names are the real ones). Returns the summary of
    generated_plan; asserts every statement took (public.hostile_failed empty) and that every
    extension routine PL/pgSQL can stand in for has its exact look-alike in every schema."""
    arm(c, dbname, setup)
    with c.connect(dbname=dbname) as conn:
        stmts, summary, ext = generated_plan(conn, rowtypes)
    with c.connect(dbname=dbname) as conn:
        for stmt in [*setup, "SET ROLE mallory", "SET search_path = pg_catalog",
                     "CREATE TABLE public.hostile_plan (n int4, stmt text)",
                     "CREATE TABLE public.hostile_failed (stmt text, error text)"]:
            conn.execute(stmt)
        with conn.cursor().copy("COPY public.hostile_plan (n, stmt) FROM STDIN") as cp:
            for i, s in enumerate(stmts):
                cp.write_row((i, s))
        conn.execute(PLANT)
        failed = conn.execute("SELECT stmt, error FROM public.hostile_failed").fetchall()
        assert failed == [], f"{len(failed)} look-alikes were not planted: " + "\n".join(
            f"{e}: {st.split(' LANGUAGE ')[0]}" for st, e in failed[:40])
        # every extension routine has its exact twin in each schema (the generation covers all)
        missing = conn.execute("""
            SELECT s, p.oid::pg_catalog.regprocedure::text FROM pg_catalog.pg_proc p,
                   pg_catalog.unnest(%s::text[]) s
            WHERE p.oid = ANY (%s::oid[])
              AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_proc q
                              WHERE q.pronamespace = s::pg_catalog.regnamespace AND q.proname = p.proname
                                AND q.proargtypes = p.proargtypes AND q.prokind = p.prokind)""",
                               (list(HOSTILE_SCHEMAS), [r["oid"] for r in ext if not unplantable(r)])).fetchall()
        assert missing == [], f"extension routines without a look-alike: {missing}"
    summary["not plantable (support functions)"] = sorted(
        f"{r['name']}({', '.join(r['types'] or [])})" for r in ext if unplantable(r))
    return summary


def unplantable(r):
    return any(u in t for t in set(r["types"] or []) | {r["rettype"]} for u in UNPLANTABLE)
