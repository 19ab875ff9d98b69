-- Who made an event's applied mark (one job attempt), so a rerun of that attempt whose first run
-- committed the mark and lost its answer learns it made it: the event is then counted and
-- announced once, not never. Rows marked before have none. Only the catalogue changes.
ALTER TABLE stored_events ADD COLUMN applied_by text;
