//! `COMMENT ON` for every function users call, so `\df+` explains them. Added in 0.1.1
//! (`sql/hlculid--0.1.0--0.1.1.sql` carries the same statements for upgrades; later functions'
//! comments are in the upgrade script of the version that added them).

use pgrx::prelude::*;

extension_sql!(
    r#"
COMMENT ON FUNCTION hlculid_generate() IS 'next id from this server''s hybrid logical clock: greater than every id the server returned before';
COMMENT ON FUNCTION hlculid_observe(hlculid) IS 'HLC receive rule: every id generated here afterwards sorts after the given id';
COMMENT ON FUNCTION hlculid_generate_at(timestamptz) IS 'id for a given time (backfills); consecutive calls of one backend for the same millisecond give increasing ids';
COMMENT ON FUNCTION hlculid_generate_n(integer) IS 'n ids (1 to 65536) from one step of the clock, increasing, greater than every id the server returned before';
COMMENT ON FUNCTION hlculid_create_partitions(regclass, timestamptz, timestamptz, interval) IS 'creates the missing range partitions of a table keyed on an hlculid that cover a time span, one per interval (UTC), named after their period';
COMMENT ON FUNCTION hlculid_drop_partitions(regclass, timestamptz, boolean) IS 'detaches, and unless told to keep them drops, the partitions whose rows are all older than the given time';
COMMENT ON FUNCTION hlculid_clock() IS 'state of this server''s hybrid logical clock';
COMMENT ON FUNCTION hlculid_clock_recover(hlculid) IS 'superuser: after a damaged high-water mark, every id issued afterwards sorts after the given one';
COMMENT ON FUNCTION hlculid_clock_recover(hlculid, boolean) IS 'superuser: hlculid_clock_recover(floor), and with allow_future => true a floor further ahead of the wall clock than hlculid.max_clock_skew';
COMMENT ON FUNCTION hlculid_clock_bound() IS 'the run-ahead bound of this server''s clock: the bound, how far generation has pushed the clock, waits at the bound';
COMMENT ON FUNCTION hlculid_generate_bigint() IS 'next bigint id from this server''s clock: [0][42-bit ms][11-bit counter][10-bit publisher], ordered with its 128-bit ids';
COMMENT ON FUNCTION hlculid_generate_bigint_n(integer) IS 'n bigint ids (1 to 65536) from one step of the clock, increasing';
COMMENT ON FUNCTION hlculid_bigint_ts(bigint) IS 'time embedded in a bigint id, to the millisecond';
COMMENT ON FUNCTION hlculid_bigint_counter(bigint) IS 'counter field of a bigint id (0-2047)';
COMMENT ON FUNCTION hlculid_bigint_publisher(bigint) IS 'publisher field of a bigint id (0-1023)';
COMMENT ON FUNCTION hlculid_bigint_decode(bigint) IS 'all fields of a bigint id: ts, counter, publisher';
COMMENT ON FUNCTION hlculid_bigint_min(timestamptz) IS 'smallest bigint id of the millisecond containing the time';
COMMENT ON FUNCTION hlculid_bigint_max(timestamptz) IS 'largest bigint id of the millisecond containing the time';
COMMENT ON FUNCTION hlculid_from_bigint(bigint) IS 'the 128-bit id with a bigint id''s time, counter and publisher (random bits 0)';
COMMENT ON FUNCTION hlculid_to_bigint(hlculid) IS 'the bigint id with an id''s time, counter and publisher (random bits dropped)';
COMMENT ON FUNCTION hlculid_in_range(hlculid, tstzrange) IS 'true when the id''s time lies in the range (the function behind hlculid <@ tstzrange)';
COMMENT ON FUNCTION hlculid_range_min(tstzrange) IS 'smallest id whose time lies in the range (the largest id when none does)';
COMMENT ON FUNCTION hlculid_range_max(tstzrange) IS 'largest id whose time lies in the range (the smallest id when none does)';
COMMENT ON OPERATOR <@ (hlculid, tstzrange) IS 'the id''s time lies in the range: estimated from the column''s histogram, an index range scan on the key';
COMMENT ON FUNCTION hlculid_generate_tx() IS 'next id of the current transaction''s group: one clock value per transaction and an offset counting from 1, so a transaction''s ids sort together, in the order they were made';
COMMENT ON FUNCTION hlculid_tx(hlculid) IS 'the transaction''s own id of an id made by hlculid_generate_tx: the same id with offset (low 32 bits) 0';
COMMENT ON FUNCTION hlculid_tx_offset(hlculid) IS 'offset of an id made by hlculid_generate_tx in its transaction (its low 32 bits): 1 for the first id';
COMMENT ON PROCEDURE hlculid_backfill(regclass, name, name, integer, integer) IS 'fills the NULL ids of a table from a time column, in time order, one committed batch at a time, with a publisher id reserved for backfills';
COMMENT ON FUNCTION hlculid_ts(hlculid) IS 'time embedded in the id, to the millisecond';
COMMENT ON FUNCTION hlculid_counter(hlculid) IS 'logical counter field of the id (0-65535)';
COMMENT ON FUNCTION hlculid_publisher(hlculid) IS 'publisher field of the id (0-65535)';
COMMENT ON FUNCTION hlculid_random(hlculid) IS '48 random bits of the id';
COMMENT ON FUNCTION hlculid_decode(hlculid) IS 'all fields of the id: ts, counter, publisher, random';
COMMENT ON FUNCTION hlculid_from_parts(timestamptz, integer, integer, bigint) IS 'builds an id from its fields';
COMMENT ON FUNCTION hlculid_min(timestamptz) IS 'smallest id of the millisecond containing the time';
COMMENT ON FUNCTION hlculid_max(timestamptz) IS 'largest id of the millisecond containing the time';
COMMENT ON FUNCTION hlculid_to_ulid(hlculid) IS 'the id as a 26-character Crockford base32 ULID';
COMMENT ON FUNCTION hlculid_to_uuidv7(hlculid) IS 'the id as an RFC 9562 version 7 uuid: same time, counter and publisher, top 42 random bits; keeps the order of ids';
COMMENT ON FUNCTION hlculid_from_uuidv7(uuid) IS 'the id a version 7 uuid stands for: exact time, counter and publisher, in the order of the uuids';
COMMENT ON FUNCTION hlculid_acting_as_owner(oid) IS 'internal: whether the current user is the owner of the table inside a security-restricted operation (what the partition helpers'' and the backfill''s bodies check)';
"#,
    name = "hlculid_comments",
    finalize
);
