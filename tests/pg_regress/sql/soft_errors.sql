-- PostgreSQL 16+: input errors are soft where the caller asks
SELECT pg_input_is_valid('017FC21C5E7A-0000-000A-AAA111111111', 'hlculid') AS good,
       pg_input_is_valid('017FC21C5E7A-0000-000A-AAA11111111Z', 'hlculid') AS bad,
       pg_input_is_valid('', 'hlculid') AS empty;
SELECT * FROM pg_input_error_info('017FC21C5E7A-0000-000A-AAA11111111Z', 'hlculid');
SELECT * FROM pg_input_error_info('80000000000000000000000000', 'hlculid');
