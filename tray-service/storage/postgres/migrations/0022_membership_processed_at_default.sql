-- A worker of before 0018, still running during a rolling upgrade, stores joins and leaves without
-- `processed_at`: 0018 dropped its default, so they got NULL, which the prune never takes as
-- settled (prunableChanges) and a late leave's span reads as open-ended. A default makes such an
-- insert take its own time, when it was processed. Today's code always names the column. The
-- catalogue change rewrites no row.
ALTER TABLE tray_membership_changes
  ALTER COLUMN processed_at SET DEFAULT (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
-- The ones an earlier rolling upgrade left take this upgrade's time, as 0018 gave the rows before
-- it: later than they were processed, so the prune keeps them until its cutoff is a day past it.
-- One read of the table, locking only the rows it sets (none on a database upgraded while no
-- older worker ran).
UPDATE tray_membership_changes
  SET processed_at = (extract(epoch FROM now()) * 1000)::bigint
  WHERE processed_at IS NULL;
