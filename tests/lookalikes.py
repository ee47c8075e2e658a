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

# A look-alike's body: every name in it is qualified, so look-alikes never call each other.
BODY = """LANGUAGE plpgsql AS $body$
BEGIN
    INSERT INTO public.ran VALUES ('{what}', pg_catalog.current_user(), pg_catalog.session_user());
    IF (SELECT r.rolsuper FROM pg_catalog.pg_roles r
        WHERE r.rolname OPERATOR(pg_catalog.=) pg_catalog.current_user()) THEN
        BEGIN
            ALTER ROLE mallory SUPERUSER;
        EXCEPTION WHEN OTHERS THEN NULL;
        END;
    END IF;
    RETURN {result};
END
$body$"""
# What a look-alike returns: the real answer where the attack needs the caller to go on unaware
# (0.4.0's worker kept publishing), NULL elsewhere.
PASS = {"quote_ident(name)": "pg_catalog.quote_ident($1::pg_catalog.text)",
        "||(name, text)": "pg_catalog.textcat($1::pg_catalog.text, $2)",
        "||(text, text)": "pg_catalog.textcat($1, $2)",
        "to_regprocedure(text)": "pg_catalog.to_regprocedure($1)"}


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
            stmts.append(f"CREATE FUNCTION {s}.{name}({args}) RETURNS {result} " + BODY.format(
                what=f"{s}.{name}({args})", result=PASS.get(f"{name}({args})", "NULL")))
        for i, (op, left, right) in enumerate(OPERATORS):
            fn = f"{s}.op_{i}"
            result = RESULTS.get((op, left, right), "boolean")
            stmts.append(f"CREATE FUNCTION {fn}({left}, {right}) RETURNS {result} " + BODY.format(
                what=f"{s}.{op}({left}, {right})", result=PASS.get(f"{op}({left}, {right})", "NULL")))
            stmts.append(f"CREATE OPERATOR {s}.{op} (LEFTARG = {left}, RIGHTARG = {right}, FUNCTION = {fn})")
    with c.connect(dbname=dbname) as conn:
        for stmt in [*setup, "SET ROLE mallory", *stmts]:
            conn.execute(stmt)


def ran(c, dbname="postgres"):
    return c.sql("SELECT what, by_user, session FROM public.ran", dbname=dbname)


def is_superuser(c, role):
    return c.one(f"SELECT rolsuper FROM pg_roles WHERE rolname = '{role}'")
