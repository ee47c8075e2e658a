-- hlculid 0.2.0 -> 0.3.0.
-- Every object a 0.2.0 database has keeps its OID, so grants on it and views using it survive
-- the update: functions change with CREATE OR REPLACE (same arguments and result type); new
-- things are added beside the old ones.
\echo Use "ALTER EXTENSION hlculid UPDATE TO '0.3.0'" to load this file. \quit

-- == clock ==
-- The clock is bounded: generation waits rather than push logical time more than
-- hlculid.max_clock_skew ahead; hlculid_clock_bound() shows the bound (hlculid_clock() keeps its
-- columns). hlculid_clock_recover(floor, allow_future) for a floor ahead of the wall clock; the
-- one-argument form refuses such a floor. hlculid_generate_at keeps per-backend state: PARALLEL
-- RESTRICTED.
CREATE OR REPLACE FUNCTION "hlculid_generate_at"(
	"ts" timestamp with time zone /* TimestampWithTimeZone */
) RETURNS hlculid /* Hlculid */
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_generate_at_wrapper';

CREATE  FUNCTION "hlculid_clock_bound"() RETURNS TABLE (
	"max_run_ahead_ms" bigint,  /* i64 */
	"run_ahead_ms" bigint,  /* i64 */
	"anchor_time" timestamp with time zone,  /* TimestampWithTimeZone */
	"waits" bigint  /* i64 */
)
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_clock_bound_wrapper';
COMMENT ON FUNCTION hlculid_clock_bound() IS 'the run-ahead bound of this server''s clock: the bound, how far generation has pushed the clock, waits at the bound';

CREATE  FUNCTION "hlculid_clock_recover"(
	"floor" hlculid, /* Option < Hlculid > */
	"allow_future" bool /* Option < bool > */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'hlculid_clock_recover_allowing_wrapper';
REVOKE ALL ON FUNCTION hlculid_clock_recover(hlculid, boolean) FROM PUBLIC;
COMMENT ON FUNCTION hlculid_clock_recover(hlculid, boolean) IS 'superuser: hlculid_clock_recover(floor), and with allow_future => true a floor further ahead of the wall clock than hlculid.max_clock_skew';

-- == partitions ==

-- == casts and text forms ==
-- The uuid -> hlculid cast refuses a random (version 4) uuid, so it gets a function. A cast
-- cannot be changed in place: it is dropped and created again. Casts carry no grants, and no
-- view, default or generated column depends on a cast without a function (its expressions hold
-- a relabelling, which keeps working unchecked until they are created again).
CREATE FUNCTION hlculid_from_uuid(u uuid) RETURNS hlculid
    IMMUTABLE STRICT PARALLEL SAFE
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_from_uuid_wrapper';
DROP CAST (uuid AS hlculid);
CREATE CAST (uuid AS hlculid) WITH FUNCTION hlculid_from_uuid(uuid) AS IMPLICIT;

