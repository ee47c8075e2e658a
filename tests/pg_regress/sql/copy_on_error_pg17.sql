-- COPY ... ON_ERROR ignore skips bad rows instead of failing (PostgreSQL 17+)
CREATE TABLE soft (id hlculid);
COPY soft FROM STDIN (ON_ERROR ignore);
017FC21C5E7A-0000-000A-AAA111111111
not-an-id
01FZ11RQKT000002NAM48H248H
\.
SELECT * FROM soft;
DROP TABLE soft;
