-- hlculid_uuid.sql 0.3.0: hlculid's extractors, time bounds and text forms for ids stored in
-- `uuid` columns, in plain SQL, for servers that cannot load the extension (RDS, Aurora, Cloud
-- SQL, Azure). Not an extension script: no C, no superuser; install it into a schema with
--
--   psql -v ON_ERROR_STOP=1 --single-transaction \
--        -c 'CREATE SCHEMA IF NOT EXISTS hlc' -c 'SET search_path = hlc' -f hlculid_uuid.sql
--
-- (a role with CREATE on the schema is enough), then put the schema on the search_path of the
-- roles that query. Running it again replaces the functions in place. The file holds no psql
-- meta-command and no transaction control, so migration tools and pg_tle can run it as it is.
--
-- An id's 16 bytes, big-endian: [48-bit Unix ms][16-bit counter][16-bit publisher][48-bit
-- random], as the Rust crate, the Python and the Node clients make them. The names and
-- results are the extension's (hlculid_min/max return uuid here, hlculid there), so queries
-- run unchanged on both; hlculid_text is this file's own (the extension's type prints the
-- same text). Write a time window as `id >= hlculid_min(t1)::uuid AND id < hlculid_min(t2)::uuid`:
-- with the extension too, that compares uuids and uses the index on the uuid column.
-- Every function is IMMUTABLE PARALLEL SAFE, and each one to call is a single SQL expression
-- that the planner inlines into the query: no function call per row, and constant arguments
-- fold at plan time. The SQL-standard bodies (RETURN) are bound when created, so they do not depend
-- on the caller's search_path. uuid_send() gives the bytes, get_byte() reads them; mind that
-- <<, >>, & and | share one precedence and group left to right.

-- Beside the extension these names would shadow or duplicate its functions, which read uuid
-- values through a cast (hlculid_ts(u::hlculid); the cast is assignment-only since 0.4.0).
DO $guard$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname = 'hlculid') THEN
        RAISE EXCEPTION 'the hlculid extension is installed in this database'
            USING ERRCODE = 'duplicate_object',
                  DETAIL = 'The extension''s functions read uuid values through a cast: hlculid_ts(u::hlculid).',
                  HINT = 'Query with the extension''s functions; hlculid_uuid.sql is for servers that cannot load the extension.';
    END IF;
END
$guard$;

-- hlculid_decode's result: a named type rather than OUT parameters, because the planner does
-- not inline a function returning record.
DO $type$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_type
                   WHERE typname = 'hlculid_decoded' AND typnamespace = pg_catalog.current_schema()::regnamespace) THEN
        CREATE TYPE hlculid_decoded AS (ts timestamptz, counter int4, publisher int4, random int8);
    END IF;
END
$type$;

-- The time, exact to the millisecond over the whole 48-bit range: the top and bottom 24 bits
-- are each multiplied exactly in floating point (a single ms * interval '1 ms' rounds after
-- year 4253), added to a timestamp without time zone and read as UTC, all of which are
-- immutable (timestamptz + interval is only stable).
CREATE OR REPLACE FUNCTION hlculid_ts(id uuid) RETURNS timestamptz
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ('1970-01-01 00:00:00'::timestamp
        + ((get_byte(uuid_send(id), 0) << 16) | (get_byte(uuid_send(id), 1) << 8) | get_byte(uuid_send(id), 2))
          * interval '16777.216 seconds'
        + ((get_byte(uuid_send(id), 3) << 16) | (get_byte(uuid_send(id), 4) << 8) | get_byte(uuid_send(id), 5))
          * interval '1 millisecond')
       AT TIME ZONE 'UTC';

CREATE OR REPLACE FUNCTION hlculid_counter(id uuid) RETURNS int4
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (get_byte(uuid_send(id), 6) << 8) | get_byte(uuid_send(id), 7);

CREATE OR REPLACE FUNCTION hlculid_publisher(id uuid) RETURNS int4
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (get_byte(uuid_send(id), 8) << 8) | get_byte(uuid_send(id), 9);

CREATE OR REPLACE FUNCTION hlculid_random(id uuid) RETURNS int8
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ('x' || encode(substring(uuid_send(id) FROM 11 FOR 6), 'hex'))::bit(48)::int8;

-- Not STRICT: a STRICT function is inlined only if its body is strict, and a row constructor
-- is not. So a NULL id gives a row of NULLs (the extension: NULL); its fields are NULL alike.
CREATE OR REPLACE FUNCTION hlculid_decode(id uuid) RETURNS hlculid_decoded
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ROW(hlculid_ts(id), hlculid_counter(id), hlculid_publisher(id), hlculid_random(id))::hlculid_decoded;

-- The extension's error for a time an id cannot hold (SQLSTATE 22008, same text); called only
-- from the bounds below, outside the range. STRICT, so a NULL time gives NULL without raising.
CREATE OR REPLACE FUNCTION hlculid_uuid_time_out_of_range(ts timestamptz) RETURNS uuid
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $body$
BEGIN
    RAISE EXCEPTION 'timestamp out of range for type hlculid: "%"', ts
        USING ERRCODE = 'datetime_field_overflow',
              DETAIL = CASE WHEN pg_catalog.isfinite(ts)
                            THEN 'hlculid timestamps run from 1970-01-01 00:00:00+00 to 10889-08-02 05:31:50.655+00.'
                            ELSE 'An hlculid cannot hold an infinite timestamp.' END;
END
$body$;

-- The smallest and largest id of the millisecond containing ts. Not STRICT, so that the CASE
-- can be inlined; a NULL ts reaches the STRICT error function above and gives NULL.
CREATE OR REPLACE FUNCTION hlculid_min(ts timestamptz) RETURNS uuid
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN ts >= '1970-01-01 00:00:00+00'::timestamptz AND ts < '10889-08-02 05:31:50.656+00'::timestamptz
            THEN (lpad(to_hex(floor(extract(epoch FROM ts - '1970-01-01 00:00:00+00'::timestamptz) * 1000)::int8), 12, '0')
                  || '00000000000000000000')::uuid
            ELSE hlculid_uuid_time_out_of_range(ts) END;

CREATE OR REPLACE FUNCTION hlculid_max(ts timestamptz) RETURNS uuid
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN ts >= '1970-01-01 00:00:00+00'::timestamptz AND ts < '10889-08-02 05:31:50.656+00'::timestamptz
            THEN (lpad(to_hex(floor(extract(epoch FROM ts - '1970-01-01 00:00:00+00'::timestamptz) * 1000)::int8), 12, '0')
                  || 'ffffffffffffffffffff')::uuid
            ELSE hlculid_uuid_time_out_of_range(ts) END;

-- The canonical text, TTTTTTTTTTTT-CCCC-PPPP-RRRRRRRRRRRR: the uuid text (8-4-4-4-12) without
-- its first hyphen, in upper case. The extension has no such function: there id::text is it.
-- (uuid input reads this form back: '017FC21C5E7A-0001-000A-AAA333333333'::uuid.)
CREATE OR REPLACE FUNCTION hlculid_text(id uuid) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN upper(overlay(id::text PLACING '' FROM 9 FOR 1));

-- The 26-character ULID form (Crockford base32, upper case): 2 zero bits and the 128 bits in
-- 26 groups of 5, each read from the one or two bytes holding it, written as chr(48 + group)
-- ('0'..'O', no quote or backslash) and mapped to Crockford's digits by one translate().
CREATE OR REPLACE FUNCTION hlculid_to_ulid(v uuid) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN translate(
        chr(48 + (get_byte(uuid_send(v), 0) >> 5)) ||
        chr(48 + (get_byte(uuid_send(v), 0) & 31)) ||
        chr(48 + (get_byte(uuid_send(v), 1) >> 3 & 31)) ||
        chr(48 + ((get_byte(uuid_send(v), 1) << 8 | get_byte(uuid_send(v), 2)) >> 6 & 31)) ||
        chr(48 + (get_byte(uuid_send(v), 2) >> 1 & 31)) ||
        chr(48 + ((get_byte(uuid_send(v), 2) << 8 | get_byte(uuid_send(v), 3)) >> 4 & 31)) ||
        chr(48 + ((get_byte(uuid_send(v), 3) << 8 | get_byte(uuid_send(v), 4)) >> 7 & 31)) ||
        chr(48 + (get_byte(uuid_send(v), 4) >> 2 & 31)) ||
        chr(48 + ((get_byte(uuid_send(v), 4) << 8 | get_byte(uuid_send(v), 5)) >> 5 & 31)) ||
        chr(48 + (get_byte(uuid_send(v), 5) & 31)) ||
        chr(48 + (get_byte(uuid_send(v), 6) >> 3 & 31)) ||
        chr(48 + ((get_byte(uuid_send(v), 6) << 8 | get_byte(uuid_send(v), 7)) >> 6 & 31)) ||
        chr(48 + (get_byte(uuid_send(v), 7) >> 1 & 31)) ||
        chr(48 + ((get_byte(uuid_send(v), 7) << 8 | get_byte(uuid_send(v), 8)) >> 4 & 31)) ||
        chr(48 + ((get_byte(uuid_send(v), 8) << 8 | get_byte(uuid_send(v), 9)) >> 7 & 31)) ||
        chr(48 + (get_byte(uuid_send(v), 9) >> 2 & 31)) ||
        chr(48 + ((get_byte(uuid_send(v), 9) << 8 | get_byte(uuid_send(v), 10)) >> 5 & 31)) ||
        chr(48 + (get_byte(uuid_send(v), 10) & 31)) ||
        chr(48 + (get_byte(uuid_send(v), 11) >> 3 & 31)) ||
        chr(48 + ((get_byte(uuid_send(v), 11) << 8 | get_byte(uuid_send(v), 12)) >> 6 & 31)) ||
        chr(48 + (get_byte(uuid_send(v), 12) >> 1 & 31)) ||
        chr(48 + ((get_byte(uuid_send(v), 12) << 8 | get_byte(uuid_send(v), 13)) >> 4 & 31)) ||
        chr(48 + ((get_byte(uuid_send(v), 13) << 8 | get_byte(uuid_send(v), 14)) >> 7 & 31)) ||
        chr(48 + (get_byte(uuid_send(v), 14) >> 2 & 31)) ||
        chr(48 + ((get_byte(uuid_send(v), 14) << 8 | get_byte(uuid_send(v), 15)) >> 5 & 31)) ||
        chr(48 + (get_byte(uuid_send(v), 15) & 31)),
    '0123456789:;<=>?@ABCDEFGHIJKLMNO',
    '0123456789ABCDEFGHJKMNPQRSTVWXYZ');

COMMENT ON TYPE hlculid_decoded IS 'the fields of an hlculid: hlculid_decode''s result (hlculid_uuid.sql 0.3.0)';
COMMENT ON FUNCTION hlculid_ts(uuid) IS 'the embedded time of an hlculid stored in a uuid';
COMMENT ON FUNCTION hlculid_counter(uuid) IS 'the counter field of an hlculid stored in a uuid';
COMMENT ON FUNCTION hlculid_publisher(uuid) IS 'the publisher field of an hlculid stored in a uuid';
COMMENT ON FUNCTION hlculid_random(uuid) IS 'the 48 random bits of an hlculid stored in a uuid';
COMMENT ON FUNCTION hlculid_decode(uuid) IS 'all fields of an hlculid stored in a uuid: (ts, counter, publisher, random)';
COMMENT ON FUNCTION hlculid_min(timestamptz) IS 'smallest id of the millisecond containing the time, as a uuid';
COMMENT ON FUNCTION hlculid_max(timestamptz) IS 'largest id of the millisecond containing the time, as a uuid';
COMMENT ON FUNCTION hlculid_text(uuid) IS 'the canonical text of an hlculid stored in a uuid (TTTTTTTTTTTT-CCCC-PPPP-RRRRRRRRRRRR)';
COMMENT ON FUNCTION hlculid_to_ulid(uuid) IS 'an hlculid stored in a uuid as a 26-character Crockford base32 ULID';
COMMENT ON FUNCTION hlculid_uuid_time_out_of_range(timestamptz) IS 'raises the error of hlculid_min/hlculid_max for a time an id cannot hold';
