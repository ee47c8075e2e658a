-- The reader of one key's rows (0.6.0): a tenant's events on a table keyed (tenant_id, id), the
-- layout Citus recommends for multi-tenant data (distributed by tenant_id, colocated tables).
-- Like hlculid_read, with `key_column = key_value` added: the key's rows after `after`, below the
-- horizon (the cluster's for a table Citus manages, this server's for any other), in id order.
-- The columns are named, checked in the catalog and quoted; the key's value and the bounds are
-- parameters: no SQL is made from the values a caller passes. With the key column the table's
-- distribution column, Citus runs the read on the one shard that holds the key (a router query).
-- One source for the install script (through src/horizon/published.rs) and the 0.5.0 -> 0.6.0
-- upgrade script.

-- (On Citus its shard queries go outside transaction blocks, src/horizon/cluster.rs: an open
-- transaction that only reads is no distributed transaction, which the cluster horizon would wait for.)
CREATE FUNCTION hlculid_read_key(table_row anyelement, key_column name, key_value anycompatible,
                                 after pg_catalog.hlculid, max_rows int4 DEFAULT 1000,
                                 id_column name DEFAULT 'id')
RETURNS SETOF anyelement
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET citus.select_opens_transaction_block = off
AS $fn$
DECLARE
    rel regclass;
    key_num int2;
    key_type oid;
    id_type regtype;
    id_num int2;
    base regtype;
    h pg_catalog.hlculid;
    q text;
    key_cast text;
BEGIN
    SELECT t.typrelid::regclass INTO rel FROM pg_catalog.pg_type t
    WHERE t.oid = pg_catalog.pg_typeof($1) AND t.typrelid <> 0;
    IF rel IS NULL THEN
        RAISE EXCEPTION 'hlculid_read_key needs a row of the table to read, not a value of type %', pg_catalog.pg_typeof($1)
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'Pass NULL cast to the table''s row type: hlculid_read_key(NULL::events, ''tenant_id'', $tenant, $last).';
    END IF;
    IF $3 IS NULL THEN
        RAISE EXCEPTION 'hlculid_read_key cannot read the rows of a NULL key'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'key_value is the key whose rows to read, e.g. a tenant id.';
    END IF;
    IF $5 IS NULL OR $5 < 1 THEN
        RAISE EXCEPTION 'hlculid_read_key cannot read % rows', coalesce($5::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'max_rows is 1 or more.';
    END IF;
    -- locked before its columns are checked, as hlculid_read_checks does (src/base/read_guard.rs)
    PERFORM pg_catalog.hlculid_read_lock(rel::pg_catalog.oid);
    SELECT a.attnum, a.atttypid INTO key_num, key_type FROM pg_catalog.pg_attribute a
    WHERE a.attrelid = rel AND a.attname = $2 AND a.attnum > 0 AND NOT a.attisdropped;
    IF key_num IS NULL THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', $2, rel
            USING ERRCODE = 'undefined_column';
    END IF;
    SELECT a.atttypid::regtype, a.attnum INTO id_type, id_num FROM pg_catalog.pg_attribute a
    WHERE a.attrelid = rel AND a.attname = $6 AND a.attnum > 0 AND NOT a.attisdropped;
    IF id_type IS NULL THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', $6, rel
            USING ERRCODE = 'undefined_column';
    END IF;
    WITH RECURSIVE d(t, typtype, basetype) AS (
        SELECT y.oid, y.typtype, y.typbasetype FROM pg_catalog.pg_type y WHERE y.oid = id_type
        UNION ALL
        SELECT y.oid, y.typtype, y.typbasetype FROM d JOIN pg_catalog.pg_type y ON y.oid = d.basetype
        WHERE d.typtype = 'd')
    SELECT d.t::regtype INTO base FROM d WHERE d.typtype <> 'd';
    IF base IS DISTINCT FROM 'pg_catalog.hlculid'::regtype THEN
        RAISE EXCEPTION 'column "%" of relation % is of type %, not hlculid', $6, rel, id_type
            USING ERRCODE = 'datatype_mismatch';
    END IF;
    -- pages go by id > the last id read, within one key: (key, id) must be unique, through a
    -- valid unique index on exactly these two columns (either order) or on the id alone, on no
    -- expression and with no predicate; of a partitioned table, the parent's
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_index x
                   WHERE x.indrelid = rel AND x.indisunique AND x.indisvalid
                     AND x.indpred IS NULL AND x.indexprs IS NULL
                     AND ((x.indnkeyatts = 1 AND x.indkey[0] = id_num)
                          OR (x.indnkeyatts = 2 AND key_num <> id_num
                              AND ((x.indkey[0] = key_num AND x.indkey[1] = id_num)
                                   OR (x.indkey[0] = id_num AND x.indkey[1] = key_num))))) THEN
        RAISE EXCEPTION 'relation % has no unique index on (%, %) or on % alone', rel, $2, $6, $6
            USING ERRCODE = 'invalid_column_reference',
                  DETAIL = 'hlculid_read_key pages by id after the last id read within one key: rows of that key that share an id with the last row of a page would be passed.',
                  HINT = pg_catalog.format('Key the table on both: PRIMARY KEY (%I, %I).', $2, $6);
    END IF;
    IF EXISTS (SELECT FROM pg_catalog.pg_class c WHERE c.oid = rel AND c.relkind <> 'p')
       AND EXISTS (SELECT FROM pg_catalog.pg_inherits i WHERE i.inhparent = rel) THEN
        RAISE EXCEPTION 'relation % has inheritance children, which its unique index does not cover', rel
            USING ERRCODE = 'invalid_column_reference',
                  HINT = pg_catalog.format('Make %s a partitioned table, or read its rows by other means.', rel);
    END IF;
    -- the key compared as the column's own type, so that Citus prunes to the key's shard: a
    -- type of pg_catalog by its name (found there first); any other only as the value's own
    -- type, passed as it is (a name in the query could give another type by the time it is
    -- parsed: a schema's owner may swap the schema, and a domain's CHECK would run)
    IF (SELECT y.typnamespace FROM pg_catalog.pg_type y WHERE y.oid = key_type)
       = 'pg_catalog'::pg_catalog.regnamespace THEN
        -- a value that becomes the key unchanged or not at all: of its type, through an
        -- implicit cast, as text (the type's input: exact, or an error), or an integer of
        -- another width (an error when out of range); never a cast that rounds or cuts
        -- (1.5 as an int4 key is 2: another tenant's rows)
        IF pg_catalog.pg_typeof($3) <> key_type
           AND NOT EXISTS (SELECT FROM pg_catalog.pg_cast k
                           WHERE k.castsource = pg_catalog.pg_typeof($3) AND k.casttarget = key_type
                             AND k.castcontext = 'i')
           AND (SELECT y.typcategory FROM pg_catalog.pg_type y WHERE y.oid = pg_catalog.pg_typeof($3)) <> 'S'
           AND NOT (pg_catalog.pg_typeof($3) IN ('pg_catalog.int2'::regtype, 'pg_catalog.int4'::regtype, 'pg_catalog.int8'::regtype)
                    AND key_type IN ('pg_catalog.int2'::regtype, 'pg_catalog.int4'::regtype, 'pg_catalog.int8'::regtype)) THEN
            RAISE EXCEPTION 'hlculid_read_key cannot compare a key value of type % with column "%" of type % without changing the value',
                    pg_catalog.pg_typeof($3), $2, key_type::regtype
                USING ERRCODE = 'datatype_mismatch',
                      HINT = pg_catalog.format('Pass a value of the column''s type (%s), or as text.', key_type::regtype);
        END IF;
        -- its own name, without a length (format_type's `character` is character(1), which
        -- a cast would cut the key to)
        key_cast := (SELECT '::pg_catalog.' || pg_catalog.quote_ident(y.typname)
                     FROM pg_catalog.pg_type y WHERE y.oid = key_type);
    ELSIF pg_catalog.pg_typeof($3) = key_type THEN
        key_cast := '';
    ELSE
        RAISE EXCEPTION 'hlculid_read_key needs a key value of type %, the type of column "%", not %',
                key_type::regtype, $2, pg_catalog.pg_typeof($3)
            USING ERRCODE = 'datatype_mismatch',
                  HINT = pg_catalog.format('Cast the value to the column''s type: ''7''::%s.', key_type::regtype);
    END IF;
    IF pg_catalog.hlculid_citus_table(rel) THEN
        h := pg_catalog.hlculid_cluster_horizon();
    ELSE
        h := pg_catalog.hlculid_horizon();
    END IF;
    IF h IS NULL THEN
        RETURN;
    END IF;
    -- read only if its name still gives the table when parsed (src/base/read_guard.rs)
    q := pg_catalog.format(
        'SELECT * FROM %s t WHERE t.%I OPERATOR(pg_catalog.=) $1%s AND ($2 IS NULL OR t.%I OPERATOR(pg_catalog.>) $2) AND t.%I OPERATOR(pg_catalog.<) $3 ORDER BY t.%I USING OPERATOR(pg_catalog.<) LIMIT $4',
        rel, $2, key_cast, $6, $6, $6);
    PERFORM pg_catalog.hlculid_expect_reads(rel::pg_catalog.oid, q);
    RETURN QUERY EXECUTE q USING $3, $4, h, $5;
END
$fn$;

COMMENT ON FUNCTION hlculid_read_key(anyelement, name, anycompatible, hlculid, int4, name) IS 'the next rows of one key (a tenant) after an id, below the horizon (the cluster''s on Citus), in id order: a reader of one tenant''s events that never misses a row, a router query on a table distributed by the key';
