-- A worker of before 0012, still running during a rolling upgrade, saves decisions without
-- `expires_at`: against 0012's NOT NULL its insert failed, the job was retried, and on enough of
-- those workers it ran out of attempts with the event's moderation unsaved. A default makes those
-- inserts succeed. It is the receipt-less best guess, now plus the default EVENTS_RETENTION_DAYS
-- (a default cannot read the row's event): the decision goes about when its event does. Today's
-- code always names the column. Only the catalogue changes: no row is rewritten.
ALTER TABLE moderation_decisions ALTER COLUMN expires_at SET DEFAULT now() + interval '30 days';
