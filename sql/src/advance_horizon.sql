-- hlculid_advance_horizon (0.4.0; bounded by the clock in 0.5.0). Its own source, as CREATE OR
-- REPLACE, so that the install script (through src/horizon/published.rs, before horizons.sql) and the
-- 0.4.0 -> 0.5.0 upgrade script (which keeps the function's OID and grants) share one text.

-- Raises the row of a publisher to `horizon`; never lowers it. Returns the row's horizon. A
-- horizon further ahead of this server's clock than hlculid.max_clock_skew is refused, as
-- hlculid_observe refuses such an id: a row that far ahead would make events still to be made
-- "final" for every reader of the watermark, for good (a row is never lowered).
--
-- The only way to write hlculid.hlculid_horizons (0.5.0): SECURITY DEFINER, as the superuser who
-- installed the extension, with INSERT, UPDATE, DELETE and TRUNCATE on the table granted to no
-- one else and EXECUTE on this function not to PUBLIC (horizon_grants.sql), so the bound above is
-- kept in this one place. What a caller can make it do is exactly that: raise one row within the
-- bound. Every name in it is schema-qualified and every call exact-typed. The settings it
-- reads are the server's only: a session cannot SET hlculid.max_clock_skew once the preloaded
-- library defined it (55P02), but without the preload the library defines no setting, and any
-- session may SET a placeholder of that name ('1000 years'); so the setting counts only when
-- pg_settings lists it (placeholders are not listed), and is 500ms otherwise.
CREATE OR REPLACE FUNCTION hlculid_advance_horizon(publisher int4, horizon pg_catalog.hlculid)
RETURNS pg_catalog.hlculid
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    result pg_catalog.hlculid;
    skew pg_catalog.interval := '500ms';
    clock pg_catalog.timestamptz := pg_catalog.clock_timestamp();
BEGIN
    IF $1 IS NULL OR $2 IS NULL THEN
        RAISE EXCEPTION 'hlculid_advance_horizon needs a publisher and a horizon'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Pass the publisher id (0 to 65535) and the id below which it has sent every event.';
    END IF;
    IF $1 OPERATOR(pg_catalog.<) 0 OR $1 OPERATOR(pg_catalog.>) 65535 THEN
        RAISE EXCEPTION 'publisher id % is out of range', $1
            USING ERRCODE = 'numeric_value_out_of_range',
                  DETAIL = 'A publisher id is 0 to 65535.';
    END IF;
    -- preloaded: the server's hlculid.max_clock_skew, and this server's clock, its logical time
    -- (it may run ahead of the wall clock)
    IF EXISTS (SELECT FROM pg_catalog.pg_settings s
               WHERE s.name OPERATOR(pg_catalog.=) 'hlculid.max_clock_skew'::pg_catalog.text) THEN
        skew := pg_catalog.current_setting('hlculid.max_clock_skew'::pg_catalog.text)::pg_catalog.interval;
        clock := GREATEST(clock, (SELECT c.logical_time FROM pg_catalog.hlculid_clock() c));
    END IF;
    IF pg_catalog.hlculid_ts($2) OPERATOR(pg_catalog.>) (clock OPERATOR(pg_catalog.+) skew) THEN
        RAISE EXCEPTION 'horizon % is % ahead of this server''s clock', $2, pg_catalog.hlculid_ts($2) OPERATOR(pg_catalog.-) clock
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = pg_catalog.format('A horizon may be at most hlculid.max_clock_skew (%s) ahead of the clock: events below it would count as arrived before they are made.'::pg_catalog.text, skew),
                  HINT = 'Fix the publisher''s clock, or raise hlculid.max_clock_skew.';
    END IF;
    INSERT INTO hlculid.hlculid_horizons AS h (publisher, horizon, updated_at)
    VALUES ($1, $2, pg_catalog.clock_timestamp())
    ON CONFLICT ON CONSTRAINT hlculid_horizons_pkey DO UPDATE
        SET horizon = excluded.horizon, updated_at = excluded.updated_at
        WHERE h.horizon OPERATOR(pg_catalog.<) excluded.horizon;
    SELECT h.horizon INTO result FROM hlculid.hlculid_horizons h WHERE h.publisher OPERATOR(pg_catalog.=) $1;
    RETURN result;
END
$fn$;
