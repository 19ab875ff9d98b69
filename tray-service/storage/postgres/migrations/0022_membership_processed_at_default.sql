-- A worker of before 0018, still running during a rolling upgrade, stores joins and leaves without
-- `processed_at`: 0018 dropped its default, so they got NULL, which the prune never takes as
-- settled (prunableChanges) and a late leave's span reads as open-ended. A default makes such an
-- insert take its own time, when it was processed. Today's code always names the column. The
-- catalogue change rewrites no row, and commits at once: its lock (ACCESS EXCLUSIVE) is held by
-- this migration alone, never across the read of the whole table that 0024 makes for the rows
-- already left without a time.
ALTER TABLE tray_membership_changes
  ALTER COLUMN processed_at SET DEFAULT (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
