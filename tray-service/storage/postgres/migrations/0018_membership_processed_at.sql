-- When the tray processed each join and leave (epoch ms, the worker's clock): the prune keeps a
-- change processed within a day of its cutoff or later, since it may have been processed after an
-- action it is dated before (prunableChanges, docs/tray-engine.md#membership-by-time).
-- Rows stored before take the upgrade's time: later than they were processed, so the prune keeps
-- them until its cutoff is a day past the upgrade, which is safe (a leave among them may have been
-- processed late). A default that is not volatile is evaluated once and kept in the catalogue, so
-- adding the column rewrites no table, whatever its size; dropped afterwards, as every insert
-- names the time (postgres-memberships.ts).
ALTER TABLE tray_membership_changes
  ADD COLUMN processed_at bigint DEFAULT (extract(epoch FROM now()) * 1000)::bigint;
ALTER TABLE tray_membership_changes ALTER COLUMN processed_at DROP DEFAULT;
