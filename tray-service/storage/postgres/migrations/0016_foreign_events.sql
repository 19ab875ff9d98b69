-- `foreign`: an event from a webhook that is not the platform's (TRAY_PLATFORM_WEBHOOKS), stored for
-- the events console and moderation and never applied to the tray. Rows stored before hold one of
-- the four statuses the old check allowed, all of which the new one allows, so the check is added
-- NOT VALID: the table is not scanned (it may hold millions of events), and every row written from
-- now on is checked as before.
ALTER TABLE stored_events DROP CONSTRAINT stored_events_status_check;
ALTER TABLE stored_events ADD CONSTRAINT stored_events_status_check
  CHECK (status IN ('applied', 'stored', 'unknown', 'invalid', 'foreign')) NOT VALID;
