-- hlculid 0.1.1 -> 0.2.0: one catalog on every PostgreSQL major.
-- 0.1.x had btree skip support only in its PostgreSQL 18 script. From 0.2.0 the function exists
-- on every major and is registered as btree support function 6 where the server has one (18+).
-- This also completes a database moved to 18 with pg_upgrade from an older major.
-- Also: text and varchar cast to hlculid on assignment, for string-typed driver parameters;
-- hlculid_clock() shows the state of the high-water mark; hlculid_clock_recover() (superuser);
-- hlculid_generate_at's comment says exactly what order backfilled ids keep; hlculid_generate_n().
\echo Use "ALTER EXTENSION hlculid UPDATE TO '0.2.0'" to load this file. \quit

CREATE OR REPLACE FUNCTION "hlculid_skipsupport"(
	"sksup" internal /* Internal */
) RETURNS void
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_skipsupport_wrapper';

DO $$
BEGIN
  IF current_setting('server_version_num')::int >= 180000 AND NOT EXISTS (
      SELECT FROM pg_amproc p JOIN pg_opclass c ON c.opcfamily = p.amprocfamily
      WHERE c.opcintype = 'hlculid'::regtype AND c.opcname = 'hlculid_ops' AND p.amprocnum = 6
        AND c.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'btree')) THEN
    ALTER OPERATOR FAMILY hlculid_ops USING btree ADD FUNCTION 6 (hlculid) hlculid_skipsupport(internal);
  END IF;
END $$;

CREATE CAST (text AS hlculid) WITH INOUT AS ASSIGNMENT;
CREATE CAST (varchar AS hlculid) WITH INOUT AS ASSIGNMENT;

-- hlculid_clock() gains a column: a function's result type cannot be replaced in place.
DROP FUNCTION hlculid_clock();
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
	"high_water_mark" timestamp with time zone,  /* TimestampWithTimeZone */
	"high_water_mark_state" TEXT  /* String */
)
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_clock_wrapper';
COMMENT ON FUNCTION hlculid_clock() IS 'state of this server''s hybrid logical clock';

CREATE  FUNCTION "hlculid_clock_recover"(
	"floor" hlculid /* Option < Hlculid > */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_clock_recover_wrapper';
REVOKE ALL ON FUNCTION hlculid_clock_recover(hlculid) FROM PUBLIC;
COMMENT ON FUNCTION hlculid_clock_recover(hlculid) IS 'superuser: after a damaged high-water mark, every id issued afterwards sorts after the given one';

COMMENT ON FUNCTION hlculid_generate_at(timestamptz) IS 'id for a given time (backfills); consecutive calls of one backend for the same millisecond give increasing ids';

CREATE FUNCTION hlculid_generate_n(n int4) RETURNS hlculid[]
    STRICT VOLATILE PARALLEL SAFE
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_generate_n';
COMMENT ON FUNCTION hlculid_generate_n(integer) IS 'n ids (1 to 65536) from one step of the clock, increasing, greater than every id the server returned before';
