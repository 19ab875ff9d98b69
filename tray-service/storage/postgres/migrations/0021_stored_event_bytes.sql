-- The size of each stored payload (its jsonb as the insert built it, before any compression), so
-- a page of events read for an export or a replay can stop at a number of bytes, not only of rows:
-- 500 payloads of a megabyte each would otherwise be held at once. Rows stored before have none;
-- a page counts their stored (maybe compressed) size instead. Only the catalogue changes.
ALTER TABLE stored_events ADD COLUMN data_bytes integer;
