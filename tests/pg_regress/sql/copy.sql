-- Binary COPY writes and reads the raw 16 bytes.
-- HLCULID_COPY_DIR is a directory the server can write (regress.sh makes it).
\getenv copy_dir HLCULID_COPY_DIR
\set bin_file :copy_dir '/hlculid.bin'
\set bad_file :copy_dir '/hlculid_bad.bin'
\set txt_file :copy_dir '/hlculid.txt'
CREATE TABLE c_src (id hlculid, n int);
INSERT INTO c_src SELECT uuid_send(gen_random_uuid())::hlculid, i FROM generate_series(1, 1000) i;
INSERT INTO c_src VALUES (NULL, 0), ('000000000000-0000-0000-000000000000', -1), ('FFFFFFFFFFFF-FFFF-FFFF-FFFFFFFFFFFF', -2);
COPY c_src TO :'bin_file' (FORMAT binary);
CREATE TABLE c_dst (LIKE c_src);
COPY c_dst FROM :'bin_file' (FORMAT binary);
SELECT count(*) AS rows, count(*) FILTER (WHERE s.id IS NOT DISTINCT FROM d.id) AS identical
FROM c_src s JOIN c_dst d USING (n);
-- send is the raw bytes, like uuid_send
SELECT hlculid_send('017FC21C5E7A-0000-000A-AAA111111111') = uuid_send('017fc21c-5e7a-0000-000a-aaa111111111') AS same_wire;
-- a field of the wrong length is rejected with 22P03
CREATE TABLE c_bad (b bytea);
INSERT INTO c_bad VALUES ('\x0102030405060708090a0b0c0d0e0f');
COPY c_bad TO :'bad_file' (FORMAT binary);
SELECT err(format('COPY c_dst (id) FROM %L (FORMAT binary)', :'bad_file'));
-- binary COPY between hlculid and uuid columns is interchangeable
CREATE TABLE c_uuid (id uuid, n int);
COPY c_uuid FROM :'bin_file' (FORMAT binary);
SELECT count(*) FILTER (WHERE s.id::uuid IS NOT DISTINCT FROM u.id) AS identical FROM c_src s JOIN c_uuid u USING (n);
-- text COPY too
COPY c_src TO :'txt_file';
TRUNCATE c_dst;
COPY c_dst FROM :'txt_file';
SELECT count(*) FILTER (WHERE s.id IS NOT DISTINCT FROM d.id) AS identical FROM c_src s JOIN c_dst d USING (n);
DROP TABLE c_src, c_dst, c_bad, c_uuid;
