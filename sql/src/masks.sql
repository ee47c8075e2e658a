-- Masks (0.5.0): what \df+ says of them. The functions are Rust (src/mask.rs); one source for
-- these comments, which the install script takes through src/mask.rs and the 0.4.0 -> 0.5.0
-- upgrade script includes.
COMMENT ON FUNCTION hlculid_mask(hlculid) IS 'the id as shown outside: a keyed permutation (the key of hlculid.mask_key_file) printed as a uuid, revealing neither time, order, counter nor publisher';
COMMENT ON FUNCTION hlculid_unmask(uuid) IS 'the id a masked uuid stands for, under the current key: WHERE id = hlculid_unmask($1) is a primary-key lookup';
COMMENT ON FUNCTION hlculid_unmask_any(uuid) IS 'the ids a masked uuid stands for under every key of hlculid.mask_key_file, current first (key rotation): WHERE id IN (SELECT hlculid_unmask_any($1))';
COMMENT ON FUNCTION hlculid_mask_bigint(bigint) IS 'a bigint id as shown outside: a keyed permutation of the positive bigints';
COMMENT ON FUNCTION hlculid_unmask_bigint(bigint) IS 'the bigint id a masked bigint stands for, under the current key';
COMMENT ON FUNCTION hlculid_unmask_bigint_any(bigint) IS 'the bigint ids a masked bigint stands for under every key of hlculid.mask_key_file';
