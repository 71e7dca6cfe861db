-- A stored battle is about 3 KB of JSON, above PostgreSQL's TOAST threshold, so every body is
-- compressed when it is written and decompressed when a re-sighting or a tool reads it. The
-- default method, pglz, cost a bulk fill about a quarter of PostgreSQL's time on the battles
-- table (docs/benchmarks.md, "Ingest on a PostgreSQL configured for the machine"); lz4 does the
-- same at several times the speed. Bodies written before keep their pglz form (both are read
-- the same way). A PostgreSQL built without lz4 keeps pglz: the statement is skipped there.
DO $$
BEGIN
    ALTER TABLE battles ALTER COLUMN body SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
    RAISE NOTICE 'lz4 is not available in this PostgreSQL; battle bodies stay compressed with pglz';
END
$$;
