-- changedSince: a reconnecting live stream's catch-up, 100 records a page oldest change first.
-- Without it each page read the user's whole tray by its key and sorted it: 23 ms a page at 50,000
-- records (0.3 ms with it), and a mark-all-read of them left a catch-up of 500 such pages; every
-- reconnect, even with nothing to send, read the whole tray once.
-- It costs each record written one more index insertion (a fan-out of 10,000 members measured
-- within the run-to-run spread); no HOT update is lost, as with tray_records_expiry (0010).
-- A plain CREATE INDEX, as every migration's: it blocks writes to tray_records, not reads, while it
-- builds (docs/storage.md, "Pointing an adapter at your server").
CREATE INDEX tray_records_changes ON tray_records (user_id, changed_at, key);
