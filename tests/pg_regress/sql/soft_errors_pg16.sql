-- PostgreSQL 16+: input errors are soft where the caller asks
SELECT pg_input_is_valid('017FC21C5E7A-0000-000A-AAA111111111', 'hlculid') AS good,
       pg_input_is_valid('017FC21C5E7A-0000-000A-AAA11111111Z', 'hlculid') AS bad,
       pg_input_is_valid('', 'hlculid') AS empty;
SELECT * FROM pg_input_error_info('017FC21C5E7A-0000-000A-AAA11111111Z', 'hlculid');
SELECT * FROM pg_input_error_info('80000000000000000000000000', 'hlculid');
-- a random uuid in the uuid's spelling is refused softly too, with the uuid cast's SQLSTATE (0.4.0)
SELECT pg_input_is_valid('8f3c1f0e-6b1d-4a2b-9c3d-5e6f70819203', 'hlculid') AS random_uuid_text,
       pg_input_is_valid('8f3c1f0e-6b1d-4a2b-cc3d-5e6f70819203', 'hlculid') AS other_variant;
SELECT sql_error_code, message FROM pg_input_error_info('8f3c1f0e-6b1d-4a2b-9c3d-5e6f70819203', 'hlculid');
