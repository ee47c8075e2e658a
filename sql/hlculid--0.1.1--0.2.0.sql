-- hlculid 0.1.1 -> 0.2.0: one catalog on every PostgreSQL major.
-- 0.1.x had btree skip support only in its PostgreSQL 18 script. From 0.2.0 the function exists
-- on every major and is registered as btree support function 6 where the server has one (18+).
-- This also completes a database moved to 18 with pg_upgrade from an older major.
-- Also: text and varchar cast to hlculid on assignment, for string-typed driver parameters.
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
