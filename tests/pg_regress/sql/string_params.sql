-- Ids as strings, the way drivers and ORMs send them. A parameter of unknown type (psycopg 3's
-- str, node-postgres, Django, pgjdbc with stringtype=unspecified) is read as an hlculid and keeps
-- the index; a typed text or varchar one (pgjdbc's setString, sqlx's and diesel's String) needs
-- a cast. hlculid deliberately has no comparison operators with text or varchar: with the
-- implicit uuid -> hlculid cast they would also match uuid = text, and send queries that never
-- mention hlculid (a uuid column compared with a text one) through hlculid's cast, which refuses
-- random uuids. These tests keep that decision visible.
CREATE TABLE sp (id hlculid PRIMARY KEY, u uuid, s text, v varchar);
INSERT INTO sp SELECT hlculid_from_parts(timestamptz '2026-01-01 00:00+00' + g * interval '1 ms', 0, 7, g), gen_random_uuid(),
  'x' || g, 'y' || g
FROM generate_series(1, 10000) g;
ANALYZE sp;
-- no operator has hlculid on one side and a string type on the other
SELECT count(*) FROM pg_operator
WHERE (oprleft = 'hlculid'::regtype AND oprright IN ('text'::regtype, 'varchar'::regtype, 'bpchar'::regtype, 'name'::regtype))
   OR (oprright = 'hlculid'::regtype AND oprleft IN ('text'::regtype, 'varchar'::regtype, 'bpchar'::regtype, 'name'::regtype));
-- queries on uuid and text columns mean what they mean without hlculid: no operator, not a cast
SELECT err('SELECT count(*) FROM sp WHERE u = s', false);
SELECT err('SELECT count(*) FROM sp WHERE s = u', false);
-- string columns and literals compare as strings, as before
SELECT count(*) FROM sp WHERE v = 'y1' OR s = 'x2';
SELECT count(*) FROM sp WHERE v = s;
-- an unknown-typed parameter (what most drivers send) is an hlculid, in a generic plan too
SET plan_cache_mode = force_generic_plan;
PREPARE by_unknown AS SELECT count(*) FROM sp WHERE id = $1;
SELECT plan('EXECUTE by_unknown(''019B76DAA801-0000-0007-000000000001'')');
EXECUTE by_unknown('019B76DAA801-0000-0007-000000000001');
PREPARE window_unknown AS SELECT count(*) FROM sp WHERE id BETWEEN $1 AND $2;
SELECT plan('EXECUTE window_unknown(''019B76DAA801-0000-0000-000000000000'', ''019B76DAA810-FFFF-FFFF-FFFFFFFFFFFF'')');
EXECUTE window_unknown('019B76DAA801-0000-0000-000000000000', '019B76DAA810-FFFF-FFFF-FFFFFFFFFFFF');
-- a varchar or text parameter (pgjdbc's setString, sqlx's String) is refused for comparison...
SELECT err('PREPARE by_varchar(varchar) AS SELECT count(*) FROM sp WHERE id = $1', false);
SELECT err('PREPARE by_text(text) AS SELECT count(*) FROM sp WHERE id < $1', false);
-- ...and with a cast on the parameter it is an hlculid, index and all
PREPARE by_varchar(varchar) AS SELECT count(*) FROM sp WHERE id = $1::hlculid;
SELECT plan('EXECUTE by_varchar(''019B76DAA801-0000-0007-000000000001'')');
EXECUTE by_varchar('019B76DAA801-0000-0007-000000000001');
PREPARE window_text(text, text) AS SELECT count(*) FROM sp WHERE id BETWEEN $1::hlculid AND $2::hlculid;
SELECT plan('EXECUTE window_text(''019B76DAA801-0000-0000-000000000000'', ''019B76DAA810-FFFF-FFFF-FFFFFFFFFFFF'')');
EXECUTE window_text('019B76DAA801-0000-0000-000000000000', '019B76DAA810-FFFF-FFFF-FFFFFFFFFFFF');
PREPARE any_text(text[]) AS SELECT count(*) FROM sp WHERE id = ANY($1::hlculid[]);
SELECT plan('EXECUTE any_text(''{019B76DAA801-0000-0007-000000000001,019B76DAA802-0000-0007-000000000002}'')');
EXECUTE any_text('{019B76DAA801-0000-0007-000000000001,019B76DAA802-0000-0007-000000000002}');
-- inserts and updates take text and varchar through the assignment casts (0.2.0)
PREPARE ins(varchar, text) AS INSERT INTO sp (id, s) VALUES ($1, $2);
EXECUTE ins('019B76DAA801-0000-0007-0000000000FF', 'from varchar');
SELECT id, s FROM sp WHERE s = 'from varchar';
RESET plan_cache_mode;
DEALLOCATE ALL;
DROP TABLE sp;
