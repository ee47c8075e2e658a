-- hlculid_advance_horizon (0.4.0; bounded by the clock in 0.5.0). Its own source, as CREATE OR
-- REPLACE, so that the install script (through src/watermark.rs, before horizons.sql) and the
-- 0.4.0 -> 0.5.0 upgrade script (which keeps the function's OID and grants) share one text.

-- Raises the row of a publisher to `horizon`; never lowers it. Returns the row's horizon. A
-- horizon further ahead of this server's clock than hlculid.max_clock_skew is refused, as
-- hlculid_observe refuses such an id: a row that far ahead would make events still to be made
-- "final" for every reader of the watermark, for good (a row is never lowered).
CREATE OR REPLACE FUNCTION hlculid_advance_horizon(publisher int4, horizon pg_catalog.hlculid)
RETURNS pg_catalog.hlculid
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    result pg_catalog.hlculid;
    skew interval := coalesce(nullif(current_setting('hlculid.max_clock_skew', true), ''), '500ms')::interval;
    clock timestamptz := clock_timestamp();
BEGIN
    IF $1 IS NULL OR $2 IS NULL THEN
        RAISE EXCEPTION 'hlculid_advance_horizon needs a publisher and a horizon'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Pass the publisher id (0 to 65535) and the id below which it has sent every event.';
    END IF;
    IF $1 < 0 OR $1 > 65535 THEN
        RAISE EXCEPTION 'publisher id % is out of range', $1
            USING ERRCODE = 'numeric_value_out_of_range',
                  DETAIL = 'A publisher id is 0 to 65535.';
    END IF;
    -- this server's clock: its logical time when preloaded (it may run ahead of the wall clock)
    IF current_setting('hlculid.publisher_id', true) IS NOT NULL THEN
        clock := greatest(clock, (SELECT c.logical_time FROM pg_catalog.hlculid_clock() c));
    END IF;
    IF pg_catalog.hlculid_ts($2) > clock + skew THEN
        RAISE EXCEPTION 'horizon % is % ahead of this server''s clock', $2, pg_catalog.hlculid_ts($2) - clock
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('A horizon may be at most hlculid.max_clock_skew (%s) ahead of the clock: events below it would count as arrived before they are made.', skew),
                  HINT = 'Fix the publisher''s clock, or raise hlculid.max_clock_skew.';
    END IF;
    INSERT INTO hlculid.hlculid_horizons AS h (publisher, horizon, updated_at)
    VALUES ($1, $2, clock_timestamp())
    ON CONFLICT ON CONSTRAINT hlculid_horizons_pkey DO UPDATE
        SET horizon = excluded.horizon, updated_at = excluded.updated_at
        WHERE h.horizon OPERATOR(pg_catalog.<) excluded.horizon;
    SELECT h.horizon INTO result FROM hlculid.hlculid_horizons h WHERE h.publisher = $1;
    RETURN result;
END
$fn$;
