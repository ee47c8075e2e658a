--   hlculid_opclasses
--   hlculid_skipsupport

ALTER OPERATOR FAMILY hlculid_ops USING btree ADD FUNCTION 6 (hlculid) hlculid_skipsupport(internal);

--   hlculid_shell
CREATE  FUNCTION "hlculid_in"(
	"input" cstring /* & CStr */
) RETURNS hlculid /* Option < Hlculid > */
IMMUTABLE STRICT PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_in_wrapper';


--   hlculid_shell
CREATE  FUNCTION "hlculid_out"(
	"v" hlculid /* Hlculid */
) RETURNS cstring /* & '_ CStr */
IMMUTABLE STRICT PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_out_wrapper';


--   hlculid_shell
CREATE  FUNCTION "hlculid_recv"(
	"internal" internal /* Internal */
) RETURNS hlculid /* Hlculid */
IMMUTABLE STRICT PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_recv_wrapper';


--   hlculid_shell
CREATE  FUNCTION "hlculid_send"(
	"v" hlculid /* Hlculid */
) RETURNS bytea /* Vec < u8 > */
IMMUTABLE STRICT PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_send_wrapper';


-- creates:
--   Type(hlculid::datum::Hlculid)

--   hlculid_shell
--   io::hlculid_in
--   io::hlculid_out
--   io::hlculid_recv
--   io::hlculid_send


CREATE TYPE hlculid (
    INTERNALLENGTH = 16,
    INPUT = hlculid_in,
    OUTPUT = hlculid_out,
    RECEIVE = hlculid_recv,
    SEND = hlculid_send,
    ALIGNMENT = char,
    STORAGE = plain
);
COMMENT ON TYPE hlculid IS '128-bit time-ordered id: 48-bit Unix ms, 16-bit hybrid logical clock counter, 16-bit publisher, 48 random bits';

--   hlculid_type


CREATE FUNCTION hlculid_generate() RETURNS hlculid
    STRICT VOLATILE PARALLEL SAFE
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_generate_fast';

--   hlculid_type
--   hlculid_eq
--   hlculid_ne
--   hlculid_lt
--   hlculid_le
--   hlculid_gt
--   hlculid_ge
--   hlculid_cmp
--   hlculid_sortsupport
--   hlculid_hash
--   hlculid_hash_extended
--   hlculid_smaller
--   hlculid_larger


CREATE OPERATOR CLASS hlculid_ops DEFAULT FOR TYPE hlculid USING btree AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 hlculid_cmp(hlculid, hlculid),
    FUNCTION 2 hlculid_sortsupport(internal),
    FUNCTION 4 btequalimage(oid);

CREATE OPERATOR CLASS hlculid_ops DEFAULT FOR TYPE hlculid USING hash AS
    OPERATOR 1 =,
    FUNCTION 1 hlculid_hash(hlculid),
    FUNCTION 2 hlculid_hash_extended(hlculid, int8);

CREATE OPERATOR CLASS hlculid_minmax_ops DEFAULT FOR TYPE hlculid USING brin AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 brin_minmax_opcinfo(internal),
    FUNCTION 2 brin_minmax_add_value(internal, internal, internal, internal),
    FUNCTION 3 brin_minmax_consistent(internal, internal, internal),
    FUNCTION 4 brin_minmax_union(internal, internal, internal);

CREATE AGGREGATE min(hlculid) (
    SFUNC = hlculid_smaller, STYPE = hlculid, COMBINEFUNC = hlculid_smaller,
    SORTOP = <, PARALLEL = SAFE
);
CREATE AGGREGATE max(hlculid) (
    SFUNC = hlculid_larger, STYPE = hlculid, COMBINEFUNC = hlculid_larger,
    SORTOP = >, PARALLEL = SAFE
);

--   hlculid_type
--   hlculid_to_bytea
--   hlculid_from_bytea


-- Same length, alignment and byte order as uuid: the casts are free and keep order.
-- uuid -> hlculid is implicit so `id = some_uuid` still uses an index on id; the other
-- direction is assignment-only, so comparisons never become ambiguous.
CREATE CAST (uuid AS hlculid) WITHOUT FUNCTION AS IMPLICIT;
CREATE CAST (hlculid AS uuid) WITHOUT FUNCTION AS ASSIGNMENT;
CREATE CAST (hlculid AS bytea) WITH FUNCTION hlculid_to_bytea(hlculid);
CREATE CAST (bytea AS hlculid) WITH FUNCTION hlculid_from_bytea(bytea);

--   hlculid_type
--   hlculid_ts
--   hlculid_counter
--   hlculid_publisher
--   hlculid_random


CREATE FUNCTION hlculid_decode(id hlculid,
    OUT ts timestamptz, OUT counter int4, OUT publisher int4, OUT random int8)
RETURNS record
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (hlculid_ts(id), hlculid_counter(id), hlculid_publisher(id), hlculid_random(id));

CREATE CAST (hlculid AS timestamptz) WITH FUNCTION hlculid_ts(hlculid);

-- Skipped due to `#[pgrx(sql = false)]`

COMMENT ON FUNCTION hlculid_generate() IS 'next id from this server''s hybrid logical clock: greater than every id the server returned before';
COMMENT ON FUNCTION hlculid_observe(hlculid) IS 'HLC receive rule: every id generated here afterwards sorts after the given id';
COMMENT ON FUNCTION hlculid_generate_at(timestamptz) IS 'id for a given time (backfills), ordered among this backend''s ids of that millisecond';
COMMENT ON FUNCTION hlculid_clock() IS 'state of this server''s hybrid logical clock';
COMMENT ON FUNCTION hlculid_ts(hlculid) IS 'time embedded in the id, to the millisecond';
COMMENT ON FUNCTION hlculid_counter(hlculid) IS 'logical counter field of the id (0-65535)';
COMMENT ON FUNCTION hlculid_publisher(hlculid) IS 'publisher field of the id (0-65535)';
COMMENT ON FUNCTION hlculid_random(hlculid) IS '48 random bits of the id';
COMMENT ON FUNCTION hlculid_decode(hlculid) IS 'all fields of the id: ts, counter, publisher, random';
COMMENT ON FUNCTION hlculid_from_parts(timestamptz, integer, integer, bigint) IS 'builds an id from its fields';
COMMENT ON FUNCTION hlculid_min(timestamptz) IS 'smallest id of the millisecond containing the time';
COMMENT ON FUNCTION hlculid_max(timestamptz) IS 'largest id of the millisecond containing the time';
COMMENT ON FUNCTION hlculid_to_ulid(hlculid) IS 'the id as a 26-character Crockford base32 ULID';

CREATE  FUNCTION "hlculid_clock"() RETURNS TABLE (
	"wall_time" timestamp with time zone,  /* TimestampWithTimeZone */
	"logical_time" timestamp with time zone,  /* TimestampWithTimeZone */
	"counter" INT,  /* i32 */
	"drift_ms" bigint,  /* i64 */
	"publisher" INT,  /* i32 */
	"publisher_source" TEXT,  /* String */
	"backward_jumps" bigint,  /* i64 */
	"overflows" bigint,  /* i64 */
	"observes" bigint,  /* i64 */
	"high_water_mark" timestamp with time zone  /* TimestampWithTimeZone */
)
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_clock_wrapper';

CREATE  FUNCTION "hlculid_cmp"(
	"a" hlculid, /* Hlculid */
	"b" hlculid /* Hlculid */
) RETURNS INT /* i32 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_cmp_wrapper';

CREATE  FUNCTION "hlculid_counter"(
	"id" hlculid /* Hlculid */
) RETURNS INT /* i32 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_counter_wrapper';

CREATE  FUNCTION "hlculid_eq"(
	"a" hlculid, /* Hlculid */
	"b" hlculid /* Hlculid */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_eq_wrapper';

CREATE OPERATOR = (
	PROCEDURE="hlculid_eq",
	LEFTARG=hlculid, /* Hlculid */
	RIGHTARG=hlculid, /* Hlculid */
	COMMUTATOR = =,
	NEGATOR = <>,
	RESTRICT = eqsel,
	JOIN = eqjoinsel,
	HASHES,
	MERGES
);

CREATE  FUNCTION "hlculid_from_bytea"(
	"b" bytea /* & [u8] */
) RETURNS hlculid /* Hlculid */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_from_bytea_wrapper';

CREATE  FUNCTION "hlculid_from_parts"(
	"ts" timestamp with time zone, /* TimestampWithTimeZone */
	"counter" INT, /* i32 */
	"publisher" INT, /* i32 */
	"random" bigint /* i64 */
) RETURNS hlculid /* Hlculid */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_from_parts_wrapper';

CREATE  FUNCTION "hlculid_ge"(
	"a" hlculid, /* Hlculid */
	"b" hlculid /* Hlculid */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_ge_wrapper';

CREATE OPERATOR >= (
	PROCEDURE="hlculid_ge",
	LEFTARG=hlculid, /* Hlculid */
	RIGHTARG=hlculid, /* Hlculid */
	COMMUTATOR = <=,
	NEGATOR = <,
	RESTRICT = scalargesel,
	JOIN = scalargejoinsel
);

CREATE  FUNCTION "hlculid_generate_at"(
	"ts" timestamp with time zone /* TimestampWithTimeZone */
) RETURNS hlculid /* Hlculid */
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_generate_at_wrapper';

CREATE  FUNCTION "hlculid_gt"(
	"a" hlculid, /* Hlculid */
	"b" hlculid /* Hlculid */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_gt_wrapper';

CREATE OPERATOR > (
	PROCEDURE="hlculid_gt",
	LEFTARG=hlculid, /* Hlculid */
	RIGHTARG=hlculid, /* Hlculid */
	COMMUTATOR = <,
	NEGATOR = <=,
	RESTRICT = scalargtsel,
	JOIN = scalargtjoinsel
);

CREATE  FUNCTION "hlculid_hash"(
	"v" hlculid /* Hlculid */
) RETURNS INT /* i32 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_hash_wrapper';

CREATE  FUNCTION "hlculid_hash_extended"(
	"v" hlculid, /* Hlculid */
	"seed" bigint /* i64 */
) RETURNS bigint /* i64 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_hash_extended_wrapper';

CREATE  FUNCTION "hlculid_larger"(
	"a" hlculid, /* Hlculid */
	"b" hlculid /* Hlculid */
) RETURNS hlculid /* Hlculid */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_larger_wrapper';

CREATE  FUNCTION "hlculid_le"(
	"a" hlculid, /* Hlculid */
	"b" hlculid /* Hlculid */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_le_wrapper';

CREATE OPERATOR <= (
	PROCEDURE="hlculid_le",
	LEFTARG=hlculid, /* Hlculid */
	RIGHTARG=hlculid, /* Hlculid */
	COMMUTATOR = >=,
	NEGATOR = >,
	RESTRICT = scalarlesel,
	JOIN = scalarlejoinsel
);

CREATE  FUNCTION "hlculid_lt"(
	"a" hlculid, /* Hlculid */
	"b" hlculid /* Hlculid */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_lt_wrapper';

CREATE OPERATOR < (
	PROCEDURE="hlculid_lt",
	LEFTARG=hlculid, /* Hlculid */
	RIGHTARG=hlculid, /* Hlculid */
	COMMUTATOR = >,
	NEGATOR = >=,
	RESTRICT = scalarltsel,
	JOIN = scalarltjoinsel
);

CREATE  FUNCTION "hlculid_max"(
	"ts" timestamp with time zone /* TimestampWithTimeZone */
) RETURNS hlculid /* Hlculid */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_max_wrapper';

CREATE  FUNCTION "hlculid_min"(
	"ts" timestamp with time zone /* TimestampWithTimeZone */
) RETURNS hlculid /* Hlculid */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_min_wrapper';

CREATE  FUNCTION "hlculid_ne"(
	"a" hlculid, /* Hlculid */
	"b" hlculid /* Hlculid */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_ne_wrapper';

CREATE OPERATOR <> (
	PROCEDURE="hlculid_ne",
	LEFTARG=hlculid, /* Hlculid */
	RIGHTARG=hlculid, /* Hlculid */
	COMMUTATOR = <>,
	NEGATOR = =,
	RESTRICT = neqsel,
	JOIN = neqjoinsel
);

CREATE  FUNCTION "hlculid_observe"(
	"remote" hlculid /* Hlculid */
) RETURNS void
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_observe_wrapper';

CREATE  FUNCTION "hlculid_publisher"(
	"id" hlculid /* Hlculid */
) RETURNS INT /* i32 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_publisher_wrapper';

CREATE  FUNCTION "hlculid_random"(
	"id" hlculid /* Hlculid */
) RETURNS bigint /* i64 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_random_wrapper';

CREATE  FUNCTION "hlculid_skipsupport"(
	"sksup" internal /* Internal */
) RETURNS void
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_skipsupport_wrapper';

CREATE  FUNCTION "hlculid_smaller"(
	"a" hlculid, /* Hlculid */
	"b" hlculid /* Hlculid */
) RETURNS hlculid /* Hlculid */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_smaller_wrapper';

CREATE  FUNCTION "hlculid_sortsupport"(
	"ssup" internal /* Internal */
) RETURNS void
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_sortsupport_wrapper';

CREATE  FUNCTION "hlculid_to_bytea"(
	"v" hlculid /* Hlculid */
) RETURNS bytea /* Vec < u8 > */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_to_bytea_wrapper';

CREATE  FUNCTION "hlculid_to_ulid"(
	"v" hlculid /* Hlculid */
) RETURNS TEXT /* String */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_to_ulid_wrapper';

CREATE  FUNCTION "hlculid_ts"(
	"id" hlculid /* Hlculid */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_ts_wrapper';

CREATE TYPE hlculid; -- shell, completed below once its I/O functions exist
