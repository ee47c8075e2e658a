-- Named consumers (0.6.0): a position per consumer in a table of the extension, moved in the
-- caller's transaction (commit acknowledges, rollback gives the rows again), retries with a
-- delay and an attempt count, dead letters, and the view for monitoring. One source for the
-- install script (through src/horizon/consumers.rs) and the 0.5.0 -> 0.6.0 upgrade script. The waits
-- (hlculid_wait, hlculid_consumer_wait) are Rust: src/horizon/wait.rs.
--
-- Security: every function here is SECURITY INVOKER, so the consumed table is read with the
-- caller's privileges. A consumer is keyed by (owner, consumer): names are per role, and every
-- function finds `consumer` among the calling role's (current_user's) consumers only, superusers
-- included. The three tables are PUBLIC's to read and write under row-level security: a role
-- sees, locks and writes only the rows it owns (as pg_cron's cron.job). Superusers and the
-- tables' owner bypass row-level security, so the functions filter by owner themselves too. A
-- consumer's table, id column and owner are fixed at its creation (the guard trigger). Every
-- name is schema-qualified.

-- One row per consumer: the table it reads, its position (the last id it consumed; NULL: none
-- yet, from the start of the table).
CREATE TABLE hlculid.hlculid_consumer_positions (
    consumer text NOT NULL,
    relation regclass NOT NULL,
    id_column name NOT NULL,
    owner regrole NOT NULL,
    position pg_catalog.hlculid,
    max_attempts int4 NOT NULL CHECK (max_attempts OPERATOR(pg_catalog.>=) 1),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (owner, consumer)
);

-- Rows whose handling failed, due again at due_at. `delivered_in`: the transaction that gave the
-- row out again; once that transaction committed without scheduling it again (the handler
-- succeeded), the consumer's next call in another transaction clears it (a rollback undoes the
-- mark; hlculid_consume_retry in that transaction schedules it again, its count kept).
CREATE TABLE hlculid.hlculid_consumer_retries (
    consumer text NOT NULL,
    owner regrole NOT NULL,
    id pg_catalog.hlculid NOT NULL,
    attempts int4 NOT NULL,
    due_at timestamptz NOT NULL,
    last_error text,
    delivered_in xid8,
    PRIMARY KEY (owner, consumer, id),
    FOREIGN KEY (owner, consumer) REFERENCES hlculid.hlculid_consumer_positions ON DELETE CASCADE
);

-- Rows that failed max_attempts times, parked until hlculid_dead_letter_requeue.
CREATE TABLE hlculid.hlculid_dead_letters (
    consumer text NOT NULL,
    owner regrole NOT NULL,
    relation regclass NOT NULL,
    id pg_catalog.hlculid NOT NULL,
    attempts int4 NOT NULL,
    last_error text,
    parked_at timestamptz NOT NULL,
    PRIMARY KEY (owner, consumer, id),
    FOREIGN KEY (owner, consumer) REFERENCES hlculid.hlculid_consumer_positions ON DELETE CASCADE
);

-- Rows (not the tables) are the user's: pg_dump dumps them.
SELECT pg_catalog.pg_extension_config_dump('hlculid.hlculid_consumer_positions', '');
SELECT pg_catalog.pg_extension_config_dump('hlculid.hlculid_consumer_retries', '');
SELECT pg_catalog.pg_extension_config_dump('hlculid.hlculid_dead_letters', '');

GRANT SELECT, INSERT, UPDATE, DELETE ON hlculid.hlculid_consumer_positions,
    hlculid.hlculid_consumer_retries, hlculid.hlculid_dead_letters TO PUBLIC;

-- Each role's rows are its own: it neither reads (last_error), locks (FOR UPDATE) nor writes
-- (a planted retry) another role's. pg_dump by a role that is not a superuser then needs
-- --enable-row-security (docs/reading-events.md).
ALTER TABLE hlculid.hlculid_consumer_positions ENABLE ROW LEVEL SECURITY;
ALTER TABLE hlculid.hlculid_consumer_retries ENABLE ROW LEVEL SECURITY;
ALTER TABLE hlculid.hlculid_dead_letters ENABLE ROW LEVEL SECURITY;
CREATE POLICY hlculid_consumer_owner ON hlculid.hlculid_consumer_positions
    USING (owner OPERATOR(pg_catalog.=) pg_catalog.to_regrole(pg_catalog.quote_ident(CURRENT_USER::pg_catalog.text)))
    WITH CHECK (owner OPERATOR(pg_catalog.=) pg_catalog.to_regrole(pg_catalog.quote_ident(CURRENT_USER::pg_catalog.text)));
CREATE POLICY hlculid_consumer_owner ON hlculid.hlculid_consumer_retries
    USING (owner OPERATOR(pg_catalog.=) pg_catalog.to_regrole(pg_catalog.quote_ident(CURRENT_USER::pg_catalog.text)))
    WITH CHECK (owner OPERATOR(pg_catalog.=) pg_catalog.to_regrole(pg_catalog.quote_ident(CURRENT_USER::pg_catalog.text)));
CREATE POLICY hlculid_consumer_owner ON hlculid.hlculid_dead_letters
    USING (owner OPERATOR(pg_catalog.=) pg_catalog.to_regrole(pg_catalog.quote_ident(CURRENT_USER::pg_catalog.text)))
    WITH CHECK (owner OPERATOR(pg_catalog.=) pg_catalog.to_regrole(pg_catalog.quote_ident(CURRENT_USER::pg_catalog.text)));

-- A consumer's table, id column and owner are fixed at its creation: row-level security lets a
-- role change them on its own rows, and a superuser bypasses it (hlculid_consumer_reset moves
-- only the position).
CREATE FUNCTION hlculid_consumer_guard()
RETURNS trigger
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF NEW.owner OPERATOR(pg_catalog.<>) OLD.owner THEN
        RAISE EXCEPTION 'cannot give consumer "%" to another role', OLD.consumer
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'A consumer belongs to the role that created it.',
                  HINT = 'Create a consumer as the other role.';
    END IF;
    IF NEW.relation OPERATOR(pg_catalog.<>) OLD.relation OR NEW.id_column OPERATOR(pg_catalog.<>) OLD.id_column THEN
        RAISE EXCEPTION 'cannot change the table or id column of consumer "%"', OLD.consumer
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'A consumer reads the table and id column it was created with.',
                  HINT = 'Drop it and create it again, or create another consumer.';
    END IF;
    RETURN NEW;
END
$fn$;

CREATE TRIGGER hlculid_consumer_guard BEFORE UPDATE
    ON hlculid.hlculid_consumer_positions FOR EACH ROW EXECUTE FUNCTION pg_catalog.hlculid_consumer_guard();

-- Where a consumer of `tbl` starts: after `start_after`; at `start_at` (the rows of that
-- millisecond on, or from the horizon when that is earlier: "from now" keeps the rows of
-- transactions running now); neither: the start of the table (NULL). Returns the position, the
-- last id counted as consumed.
CREATE FUNCTION hlculid_consumer_start(tbl regclass, start_after pg_catalog.hlculid, start_at timestamptz)
RETURNS pg_catalog.hlculid
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    b pg_catalog.hlculid;
    h pg_catalog.hlculid;
    bytes bytea;
    i int4 := 15;
    v int4;
BEGIN
    IF $2 IS NOT NULL AND $3 IS NOT NULL THEN
        RAISE EXCEPTION 'a consumer starts after an id or at a time, not both'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass start_after or start_at.';
    END IF;
    IF $3 IS NULL THEN
        RETURN $2;
    END IF;
    b := pg_catalog.hlculid_min($3);
    IF $1 IS NOT NULL AND pg_catalog.hlculid_citus_table($1) THEN
        h := pg_catalog.hlculid_cluster_horizon();
        IF h IS NULL THEN
            RAISE EXCEPTION 'the cluster horizon is not known now'
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = 'A distributed transaction has been pending longer than hlculid_cluster_horizon() waits.',
                      HINT = 'Try again, or start the consumer after an id.';
        END IF;
    ELSE
        h := pg_catalog.hlculid_horizon();
    END IF;
    IF h OPERATOR(pg_catalog.<) b THEN
        b := h;
    END IF;
    -- the id just below b: its 16 bytes less one
    bytes := pg_catalog.uuid_send(b::pg_catalog.uuid);
    WHILE i OPERATOR(pg_catalog.>=) 0 LOOP
        v := pg_catalog.get_byte(bytes, i);
        IF v OPERATOR(pg_catalog.>) 0 THEN
            RETURN pg_catalog.set_byte(bytes, i, v OPERATOR(pg_catalog.-) 1)::pg_catalog.hlculid;
        END IF;
        bytes := pg_catalog.set_byte(bytes, i, 255);
        i := i OPERATOR(pg_catalog.-) 1;
    END LOOP;
    RETURN NULL;
END
$fn$;

-- The calling role's consumer's row for a call: NULL name 22004, unknown 42704 (another role's
-- consumer of that name is not the caller's); locked (FOR UPDATE) when `lock_it`, so that the
-- sessions of one consumer take turns.
CREATE FUNCTION hlculid_consumer_row(consumer text, lock_it bool)
RETURNS hlculid.hlculid_consumer_positions
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    c hlculid.hlculid_consumer_positions;
BEGIN
    IF $1 IS NULL THEN
        RAISE EXCEPTION 'a consumer name cannot be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT * INTO c FROM hlculid.hlculid_consumer_positions p
    WHERE p.owner OPERATOR(pg_catalog.=) pg_catalog.to_regrole(pg_catalog.quote_ident(CURRENT_USER::pg_catalog.text)) AND p.consumer OPERATOR(pg_catalog.=) $1;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'consumer "%" does not exist', $1
            USING ERRCODE = 'undefined_object',
                  DETAIL = 'Consumer names are per role: another role''s consumer of that name is not the caller''s.',
                  HINT = 'hlculid_consume creates a consumer at its first call; hlculid_consumer_create at a chosen start.';
    END IF;
    IF $2 THEN
        SELECT * INTO c FROM hlculid.hlculid_consumer_positions p
        WHERE p.owner OPERATOR(pg_catalog.=) c.owner AND p.consumer OPERATOR(pg_catalog.=) $1 FOR UPDATE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'consumer "%" does not exist', $1
                USING ERRCODE = 'undefined_object',
                      DETAIL = 'It was dropped meanwhile.';
        END IF;
    END IF;
    RETURN c;
END
$fn$;

CREATE FUNCTION hlculid_consumer_create(consumer text, tbl regclass,
                                        start_after pg_catalog.hlculid DEFAULT NULL,
                                        start_at timestamptz DEFAULT NULL,
                                        max_attempts int4 DEFAULT 5, id_column name DEFAULT 'id')
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    pos pg_catalog.hlculid;
BEGIN
    IF $1 IS NULL OR $2 IS NULL OR $6 IS NULL THEN
        RAISE EXCEPTION 'hlculid_consumer_create needs a consumer name, a table and an id column'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF $5 IS NULL OR $5 OPERATOR(pg_catalog.<) 1 THEN
        RAISE EXCEPTION 'a consumer cannot make % attempts', coalesce($5::pg_catalog.text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'max_attempts is 1 or more.';
    END IF;
    -- the table and its column, as every read checks them, with the caller's privileges (by
    -- OID: 0.5.0 named its row type, a name the schema's owner could swap for her view's)
    PERFORM pg_catalog.hlculid_read_checks($2, $6, true);
    pos := pg_catalog.hlculid_consumer_start($2, $3, $4);
    INSERT INTO hlculid.hlculid_consumer_positions AS c
        (consumer, relation, id_column, owner, position, max_attempts, created_at, updated_at)
    VALUES ($1, $2, $6, pg_catalog.to_regrole(pg_catalog.quote_ident(CURRENT_USER::pg_catalog.text)), pos, $5, pg_catalog.clock_timestamp(), pg_catalog.clock_timestamp())
    ON CONFLICT ON CONSTRAINT hlculid_consumer_positions_pkey DO NOTHING;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'consumer "%" already exists', $1
            USING ERRCODE = 'duplicate_object',
                  HINT = 'Move it with hlculid_consumer_reset, or drop it first.';
    END IF;
END
$fn$;

-- (On Citus its shard queries go outside transaction blocks, src/horizon/cluster.rs: an open
-- transaction that only reads is no distributed transaction, which the cluster horizon would wait for.)
CREATE FUNCTION hlculid_consume(consumer text, table_row anyelement, max_rows int4 DEFAULT 1000)
RETURNS SETOF anyelement
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET citus.select_opens_transaction_block = off
AS $fn$
DECLARE
    rel regclass;
    c hlculid.hlculid_consumer_positions;
    due pg_catalog.hlculid[];
    h pg_catalog.hlculid;
    more int4;
    q text;
BEGIN
    -- the readers' one READ COMMITTED rule (src/horizon/read_committed.rs), naming this reader
    PERFORM pg_catalog.hlculid_require_read_committed('hlculid_consume');
    IF $1 IS NULL THEN
        RAISE EXCEPTION 'a consumer name cannot be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF $3 IS NULL OR $3 OPERATOR(pg_catalog.<) 1 THEN
        RAISE EXCEPTION 'hlculid_consume cannot read % rows', coalesce($3::pg_catalog.text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'max_rows is 1 or more.';
    END IF;
    SELECT t.typrelid::pg_catalog.regclass INTO rel FROM pg_catalog.pg_type t
    WHERE t.oid OPERATOR(pg_catalog.=) pg_catalog.pg_typeof($2) AND t.typrelid OPERATOR(pg_catalog.<>) 0::pg_catalog.oid;
    IF rel IS NULL THEN
        RAISE EXCEPTION 'hlculid_consume needs a row of the table to read, not a value of type %', pg_catalog.pg_typeof($2)
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'Pass NULL cast to the table''s row type: hlculid_consume(''name'', NULL::events).';
    END IF;
    -- a consumer unknown so far starts at the start of the table (two first calls at once: one
    -- creates it, the other finds it)
    IF NOT EXISTS (SELECT FROM hlculid.hlculid_consumer_positions p
                   WHERE p.owner OPERATOR(pg_catalog.=) pg_catalog.to_regrole(pg_catalog.quote_ident(CURRENT_USER::pg_catalog.text)) AND p.consumer OPERATOR(pg_catalog.=) $1) THEN
        BEGIN
            PERFORM pg_catalog.hlculid_consumer_create($1, rel);
        EXCEPTION WHEN duplicate_object THEN
            NULL;
        END;
    END IF;
    c := pg_catalog.hlculid_consumer_row($1, true);
    IF c.relation OPERATOR(pg_catalog.<>) rel THEN
        RAISE EXCEPTION 'consumer "%" reads %, not %', $1, c.relation, rel
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = pg_catalog.format('Pass a row of its table: hlculid_consume(%L, NULL::%s).', $1, c.relation);
    END IF;
    -- the table locked and its id column checked before any read of it (the ninth review: the
    -- retries' read came first, and a column changed by the table's owner to a type of hers
    -- ran her cast as the caller); the read below checks it again, under the same lock
    PERFORM pg_catalog.hlculid_read_checks(c.relation, c.id_column, false);
    -- retries given out by another transaction, which committed without scheduling them again:
    -- their handling succeeded
    DELETE FROM hlculid.hlculid_consumer_retries r
    WHERE r.owner OPERATOR(pg_catalog.=) c.owner AND r.consumer OPERATOR(pg_catalog.=) $1
      AND r.delivered_in OPERATOR(pg_catalog.<>) pg_catalog.pg_current_xact_id();
    -- first the retries that are due, oldest first
    due := ARRAY(SELECT r.id FROM hlculid.hlculid_consumer_retries r
                 WHERE r.owner OPERATOR(pg_catalog.=) c.owner AND r.consumer OPERATOR(pg_catalog.=) $1
                   AND r.delivered_in IS NULL AND r.due_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp()
                 ORDER BY r.due_at, r.id USING OPERATOR(pg_catalog.<) LIMIT $3);
    IF pg_catalog.cardinality(due) OPERATOR(pg_catalog.>) 0 THEN
        UPDATE hlculid.hlculid_consumer_retries r SET delivered_in = pg_catalog.pg_current_xact_id()
        WHERE r.owner OPERATOR(pg_catalog.=) c.owner AND r.consumer OPERATOR(pg_catalog.=) $1 AND r.id OPERATOR(pg_catalog.=) ANY (due);
        -- read only if its name still gives the table when parsed (src/base/read_guard.rs)
        q := pg_catalog.format(
            'SELECT t.* FROM %s t JOIN pg_catalog.unnest($1) WITH ORDINALITY d(id, n) ON t.%I OPERATOR(pg_catalog.=) d.id ORDER BY d.n',
            c.relation, c.id_column);
        PERFORM pg_catalog.hlculid_expect_reads(c.relation::pg_catalog.oid, q);
        RETURN QUERY EXECUTE q USING due;
    END IF;
    more := $3 OPERATOR(pg_catalog.-) pg_catalog.cardinality(due);
    IF more OPERATOR(pg_catalog.<=) 0 THEN
        RETURN;
    END IF;
    -- then the rows after the position, below the horizon taken in this statement, read (with
    -- the position moved) in the next: hlculid_read's rule
    IF pg_catalog.hlculid_citus_table(c.relation) THEN
        h := pg_catalog.hlculid_cluster_horizon();
    ELSE
        h := pg_catalog.hlculid_horizon();
    END IF;
    RETURN QUERY EXECUTE pg_catalog.format(
        'WITH r AS (SELECT * FROM pg_catalog.hlculid_read_below($1, $2, $3, $4, $5)), '
        'm AS (UPDATE hlculid.hlculid_consumer_positions p '
        '      SET position = (SELECT pg_catalog.max(r.%1$I) FROM r), updated_at = pg_catalog.clock_timestamp() '
        '      WHERE p.owner OPERATOR(pg_catalog.=) $7 AND p.consumer OPERATOR(pg_catalog.=) $6 AND EXISTS (SELECT FROM r)) '
        'SELECT * FROM r ORDER BY r.%1$I USING OPERATOR(pg_catalog.<)', c.id_column)
    USING $2, c.position, h, more, c.id_column, $1, c.owner;
END
$fn$;

CREATE FUNCTION hlculid_consume_retry(consumer text, id pg_catalog.hlculid,
                                      delay interval DEFAULT '10 s', error text DEFAULT NULL)
RETURNS bool
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    c hlculid.hlculid_consumer_positions;
    tries int4;
BEGIN
    IF $2 IS NULL THEN
        RAISE EXCEPTION 'hlculid_consume_retry needs the id of the row to retry'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF $3 IS NULL OR $3 OPERATOR(pg_catalog.<) '0'::pg_catalog.interval THEN
        RAISE EXCEPTION 'hlculid_consume_retry cannot delay a retry by %', coalesce($3::pg_catalog.text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'delay is an interval of 0 or more.';
    END IF;
    c := pg_catalog.hlculid_consumer_row($1, true);
    SELECT r.attempts INTO tries FROM hlculid.hlculid_consumer_retries r
    WHERE r.owner OPERATOR(pg_catalog.=) c.owner AND r.consumer OPERATOR(pg_catalog.=) $1 AND r.id OPERATOR(pg_catalog.=) $2;
    tries := coalesce(tries, 0) OPERATOR(pg_catalog.+) 1;
    IF tries OPERATOR(pg_catalog.>=) c.max_attempts THEN
        DELETE FROM hlculid.hlculid_consumer_retries r
        WHERE r.owner OPERATOR(pg_catalog.=) c.owner AND r.consumer OPERATOR(pg_catalog.=) $1 AND r.id OPERATOR(pg_catalog.=) $2;
        INSERT INTO hlculid.hlculid_dead_letters AS d (consumer, owner, relation, id, attempts, last_error, parked_at)
        VALUES ($1, c.owner, c.relation, $2, tries, $4, pg_catalog.clock_timestamp())
        ON CONFLICT ON CONSTRAINT hlculid_dead_letters_pkey DO UPDATE
            SET attempts = excluded.attempts, last_error = excluded.last_error, parked_at = excluded.parked_at;
        RETURN false;
    END IF;
    INSERT INTO hlculid.hlculid_consumer_retries AS r (consumer, owner, id, attempts, due_at, last_error, delivered_in)
    VALUES ($1, c.owner, $2, tries, pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) $3, $4, NULL)
    ON CONFLICT ON CONSTRAINT hlculid_consumer_retries_pkey DO UPDATE
        SET attempts = excluded.attempts, due_at = excluded.due_at, last_error = excluded.last_error,
            delivered_in = NULL;
    -- a waiter of this consumer in another session learns of the retry at this commit
    IF pg_catalog.has_table_privilege(c.relation, 'SELECT') THEN
        PERFORM pg_catalog.hlculid_wake_waiters_at_commit(c.relation);
    END IF;
    RETURN true;
END
$fn$;

CREATE FUNCTION hlculid_consumer_reset(consumer text, start_after pg_catalog.hlculid DEFAULT NULL,
                                       start_at timestamptz DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    c hlculid.hlculid_consumer_positions;
BEGIN
    c := pg_catalog.hlculid_consumer_row($1, true);
    UPDATE hlculid.hlculid_consumer_positions p
    SET position = pg_catalog.hlculid_consumer_start(c.relation, $2, $3), updated_at = pg_catalog.clock_timestamp()
    WHERE p.owner OPERATOR(pg_catalog.=) c.owner AND p.consumer OPERATOR(pg_catalog.=) $1;
    -- its retries belonged to the old position (dead letters stay)
    DELETE FROM hlculid.hlculid_consumer_retries r
    WHERE r.owner OPERATOR(pg_catalog.=) c.owner AND r.consumer OPERATOR(pg_catalog.=) $1;
    -- a waiter of this consumer checks again from the new position at this commit
    IF pg_catalog.has_table_privilege(c.relation, 'SELECT') THEN
        PERFORM pg_catalog.hlculid_wake_waiters_at_commit(c.relation);
    END IF;
END
$fn$;

CREATE FUNCTION hlculid_consumer_drop(consumer text)
RETURNS bool
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    rel regclass;
BEGIN
    IF $1 IS NULL THEN
        RAISE EXCEPTION 'a consumer name cannot be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- the calling role's consumer of that name; its retries and dead letters go with it (ON
    -- DELETE CASCADE)
    DELETE FROM hlculid.hlculid_consumer_positions p
    WHERE p.owner OPERATOR(pg_catalog.=) pg_catalog.to_regrole(pg_catalog.quote_ident(CURRENT_USER::pg_catalog.text)) AND p.consumer OPERATOR(pg_catalog.=) $1
    RETURNING p.relation INTO rel;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    -- a waiter of this consumer learns at this commit that it is gone (a table the role can no
    -- longer read: its waiter finds out at its timeout)
    IF pg_catalog.has_table_privilege(rel, 'SELECT') THEN
        PERFORM pg_catalog.hlculid_wake_waiters_at_commit(rel);
    END IF;
    RETURN true;
END
$fn$;

CREATE FUNCTION hlculid_dead_letter_requeue(consumer text, id pg_catalog.hlculid DEFAULT NULL)
RETURNS int8
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    c hlculid.hlculid_consumer_positions;
    n int8;
BEGIN
    c := pg_catalog.hlculid_consumer_row($1, true);
    WITH parked AS (
        DELETE FROM hlculid.hlculid_dead_letters d
        WHERE d.owner OPERATOR(pg_catalog.=) c.owner AND d.consumer OPERATOR(pg_catalog.=) $1
          AND ($2 IS NULL OR d.id OPERATOR(pg_catalog.=) $2)
        RETURNING d.id, d.last_error)
    INSERT INTO hlculid.hlculid_consumer_retries AS r (consumer, owner, id, attempts, due_at, last_error, delivered_in)
    SELECT $1, c.owner, parked.id, 0, pg_catalog.clock_timestamp(), parked.last_error, NULL FROM parked
    ON CONFLICT ON CONSTRAINT hlculid_consumer_retries_pkey DO UPDATE
        SET attempts = 0, due_at = excluded.due_at, last_error = excluded.last_error, delivered_in = NULL;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n OPERATOR(pg_catalog.>) 0 THEN
        -- the requeued rows are due now: a waiter of this consumer learns of them at this commit
        IF pg_catalog.has_table_privilege(c.relation, 'SELECT') THEN
            IF pg_catalog.has_table_privilege(c.relation, 'SELECT') THEN
        PERFORM pg_catalog.hlculid_wake_waiters_at_commit(c.relation);
    END IF;
        END IF;
    END IF;
    RETURN n;
END
$fn$;

-- Each consumer with its position, how far behind the horizon it is, its retries and dead
-- letters, and what holds the horizon back. For pg_monitor (it shows what
-- hlculid.hlculid_horizon_holders shows); a consumer's owner reads its own rows from the tables.
-- The horizon is NULL where it cannot be taken: a table Citus manages (the cluster horizon
-- costs a round trip to every node), a REPEATABLE READ transaction, a standby.
CREATE VIEW hlculid.hlculid_consumers AS
SELECT p.consumer,
       p.relation,
       p.id_column,
       p.owner,
       p.position,
       pg_catalog.hlculid_ts(p.position) AS position_ts,
       h.horizon,
       CASE WHEN p.position IS NOT NULL AND h.horizon IS NOT NULL THEN
           GREATEST('0'::pg_catalog.interval,
                    pg_catalog.hlculid_ts(h.horizon) OPERATOR(pg_catalog.-) pg_catalog.hlculid_ts(p.position))
       END AS lag,
       (SELECT pg_catalog.count(*) FROM hlculid.hlculid_consumer_retries r
        WHERE r.owner OPERATOR(pg_catalog.=) p.owner AND r.consumer OPERATOR(pg_catalog.=) p.consumer
          AND r.delivered_in IS NULL) AS pending_retries,
       (SELECT pg_catalog.count(*) FROM hlculid.hlculid_dead_letters d
        WHERE d.owner OPERATOR(pg_catalog.=) p.owner AND d.consumer OPERATOR(pg_catalog.=) p.consumer) AS dead_letters,
       o.pid AS held_by_pid,
       o.held_for,
       p.updated_at
FROM hlculid.hlculid_consumer_positions p
CROSS JOIN LATERAL (
    SELECT CASE WHEN pg_catalog.current_setting('transaction_isolation'::pg_catalog.text) OPERATOR(pg_catalog.=) 'read committed'::pg_catalog.text
                     AND NOT pg_catalog.pg_is_in_recovery()
                     AND NOT pg_catalog.hlculid_citus_table(p.relation)
                THEN pg_catalog.hlculid_horizon() END AS horizon) h
LEFT JOIN LATERAL (
    SELECT x.pid,
           x.lag AS held_for
    FROM hlculid.hlculid_horizon_holders x
    ORDER BY x.holds_at USING OPERATOR(pg_catalog.<) LIMIT 1) o ON true;

REVOKE ALL ON hlculid.hlculid_consumers FROM PUBLIC;
GRANT SELECT ON hlculid.hlculid_consumers TO pg_monitor;

COMMENT ON TABLE hlculid.hlculid_consumer_positions IS 'one row per named consumer: the table it reads and its position (the last id it consumed)';
COMMENT ON TABLE hlculid.hlculid_consumer_retries IS 'rows whose handling failed, due again at due_at, with their attempt count';
COMMENT ON TABLE hlculid.hlculid_dead_letters IS 'rows that failed max_attempts times, parked until hlculid_dead_letter_requeue';
COMMENT ON VIEW hlculid.hlculid_consumers IS 'each consumer: position, lag behind the horizon, pending retries, dead letters, and the transaction holding the horizon back';
COMMENT ON FUNCTION hlculid_consumer_guard() IS 'the trigger that keeps a consumer''s table, id column and owner as they were created';
COMMENT ON FUNCTION hlculid_consumer_start(regclass, hlculid, timestamptz) IS 'where a consumer of the table starts: after an id, at a time (or the horizon, when earlier), or at the start (NULL)';
COMMENT ON FUNCTION hlculid_consumer_row(text, bool) IS 'the calling role''s consumer''s row, checked (exists) and locked for the call when asked';
COMMENT ON FUNCTION hlculid_consumer_create(text, regclass, hlculid, timestamptz, int4, name) IS 'creates a named consumer of a table: from the start, after an id, or at a time (now(): from now)';
COMMENT ON FUNCTION hlculid_consume(text, anyelement, int4) IS 'a consumer''s next rows: its due retries, then the rows after its position below the horizon, in id order; moves the position in the caller''s transaction';
COMMENT ON FUNCTION hlculid_consume_retry(text, hlculid, interval, text) IS 'gives a row whose handling failed back to the consumer after a delay, or parks it in hlculid_dead_letters after max_attempts';
COMMENT ON FUNCTION hlculid_consumer_reset(text, hlculid, timestamptz) IS 'moves a consumer to the start, after an id, or to a time; drops its pending retries';
COMMENT ON FUNCTION hlculid_consumer_drop(text) IS 'drops a consumer with its retries and dead letters; false when there was none';
COMMENT ON FUNCTION hlculid_dead_letter_requeue(text, hlculid) IS 'puts a consumer''s parked rows (one, or all) back as due retries with a fresh attempt count';
COMMENT ON FUNCTION hlculid_wait(anyelement, hlculid, interval) IS 'waits on shared memory until hlculid_read(table_row, after, 1) would return a row (true) or the timeout passes (false)';
COMMENT ON FUNCTION hlculid_consumer_wait(text, interval) IS 'waits on shared memory until hlculid_consume would return a row for the consumer (true) or the timeout passes (false)';
COMMENT ON FUNCTION hlculid_wake_waiters_at_commit(oid) IS 'wakes the hlculid_wait and hlculid_consumer_wait calls waiting on a table when the calling transaction commits (needs SELECT on it): the consumer functions call it when they move a position or schedule a retry';
COMMENT ON FUNCTION hlculid_writing_commits() IS 'on a node with Citus preloaded: how many transactions committed here since the server started having written anything (NULL elsewhere); the cluster horizon''s worker reads it each round, and waiters on a table Citus manages read the table again only when some node''s count moved';
