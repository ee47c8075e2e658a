-- `tstzrange @> id` (0.5.0): the commutator of `id <@ tstzrange`, so a window can be written
-- either way round; the same estimator and the same index conditions (src/types/window/mod.rs). One source:
-- the install script takes it through src/types/window/mod.rs, the 0.4.0 -> 0.5.0 upgrade script includes it.
CREATE FUNCTION hlculid_range_contains(range tstzrange, id pg_catalog.hlculid) RETURNS boolean
    IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF
    SUPPORT pg_catalog.hlculid_in_range_support
    LANGUAGE c AS 'MODULE_PATHNAME', 'hlculid_range_contains_wrapper';
CREATE OPERATOR @> (
    LEFTARG = tstzrange,
    RIGHTARG = pg_catalog.hlculid,
    FUNCTION = pg_catalog.hlculid_range_contains,
    COMMUTATOR = OPERATOR(pg_catalog.<@),
    RESTRICT = pg_catalog.hlculid_in_range_sel,
    JOIN = pg_catalog.contjoinsel
);
COMMENT ON FUNCTION hlculid_range_contains(tstzrange, hlculid) IS 'true when the id''s time lies in the range (the function behind tstzrange @> hlculid)';
COMMENT ON OPERATOR @> (tstzrange, hlculid) IS 'the range holds the id''s time: the commutator of <@, estimated and indexed the same way';
