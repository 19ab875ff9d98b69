-- When the tray processed each join and leave (epoch ms, the worker's clock): the prune keeps a
-- change processed within a day of its cutoff or later, since it may have been processed after an
-- action it is dated before (prunableChanges, docs/tray-engine.md#membership-by-time). A nullable
-- column with no default: no table rewrite. Rows stored before count as processed long ago, which
-- they were by the time any cutoff passes them.
ALTER TABLE tray_membership_changes ADD COLUMN processed_at bigint;
