CREATE EXTENSION hlculid;
-- Shows SQLSTATE, message, DETAIL and HINT of an error without the source location,
-- so the expected output pins all of them.
CREATE FUNCTION err(q text, with_hint boolean DEFAULT true) RETURNS text LANGUAGE plpgsql AS $$
DECLARE d text; h text;
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL, h = PG_EXCEPTION_HINT;
  RETURN SQLSTATE || ': ' || SQLERRM
    || CASE WHEN d <> '' THEN E'\nDETAIL: ' || d ELSE '' END
    || CASE WHEN h <> '' AND with_hint THEN E'\nHINT: ' || h ELSE '' END;
END $$;
-- EXPLAIN (COSTS OFF) without the parts that differ between PostgreSQL versions.
CREATE FUNCTION plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    RETURN NEXT regexp_replace(line, ' \(returns \$\d+(,\$\d+)*\)', '');
  END LOOP;
END $$;
