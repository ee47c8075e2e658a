-- The one step of the install script that depends on the major: on PostgreSQL 18, btree's skip
-- support (function 6) in hlculid_ops. Idempotent: every upgrade script repeats it (its template
-- includes this file), so an update after pg_upgrade to 18 completes the catalog.
DO $$
BEGIN
  IF current_setting('server_version_num')::int >= 180000 AND NOT EXISTS (
      SELECT FROM pg_amproc p JOIN pg_opclass c ON c.opcfamily = p.amprocfamily
      WHERE c.opcintype = 'hlculid'::regtype AND c.opcname = 'hlculid_ops' AND p.amprocnum = 6
        AND c.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'btree')) THEN
    ALTER OPERATOR FAMILY hlculid_ops USING btree ADD FUNCTION 6 (hlculid) hlculid_skipsupport(internal);
  END IF;
END $$;
