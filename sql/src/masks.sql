-- Masks (0.5.0): what \df+ says of them. The functions are Rust (src/types/mask.rs); one source for
-- these comments, which the install script takes through src/types/mask.rs and the 0.4.0 -> 0.5.0
-- upgrade script includes.
COMMENT ON FUNCTION hlculid_mask(hlculid) IS 'the id as shown outside: a keyed permutation (the key of hlculid.mask_key_file) printed as a uuid, revealing neither time, order, counter nor publisher';
COMMENT ON FUNCTION hlculid_unmask(uuid) IS 'the id a masked uuid stands for, under the current key: WHERE id = hlculid_unmask($1) is a primary-key lookup';
COMMENT ON FUNCTION hlculid_unmask_any(uuid) IS 'the ids a masked uuid stands for under every key of hlculid.mask_key_file, current first (key rotation): WHERE id IN (SELECT hlculid_unmask_any($1))';
COMMENT ON FUNCTION hlculid_mask_bigint(bigint) IS 'a bigint id as shown outside: a keyed permutation of the positive bigints';
COMMENT ON FUNCTION hlculid_unmask_bigint(bigint) IS 'the bigint id a masked bigint stands for, under the current key';
COMMENT ON FUNCTION hlculid_unmask_bigint_any(bigint) IS 'the bigint ids a masked bigint stands for under every key of hlculid.mask_key_file';
-- Who may mask and unmask (0.5.0): not PUBLIC. Unmasking is the key's whole secret put to use:
-- any role that can call hlculid_unmask learns the id (its time, order and publisher) behind a
-- masked value, and any role that can call hlculid_mask can make the masked form of any id it
-- can type. Grant them to the roles that serve ids outside (docs/masks.md, docs/security.md).
REVOKE EXECUTE ON FUNCTION hlculid_mask(pg_catalog.hlculid) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION hlculid_unmask(pg_catalog.uuid) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION hlculid_unmask_any(pg_catalog.uuid) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION hlculid_mask_bigint(pg_catalog.int8) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION hlculid_unmask_bigint(pg_catalog.int8) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION hlculid_unmask_bigint_any(pg_catalog.int8) FROM PUBLIC;
