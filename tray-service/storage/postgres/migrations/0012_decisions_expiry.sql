-- Moderation decisions expire with the event they are about: a decision names a user and quotes
-- their content, so it is kept as long as the event is (EVENTS_RETENTION_DAYS), not for ever.
-- Each decision carries its event's expiry, copied when it is saved (docs/decisions.md): the purge
-- then reads one index of this table, in batches, as it does for stored_events, instead of
-- looking up each decision's event (an anti-join over millions of rows at every purge).
ALTER TABLE moderation_decisions ADD COLUMN expires_at timestamptz;
-- Decisions saved before this version: their event's expiry while the event is stored; an event
-- already purged has expired, and its decisions get the receipt plus 30 days (the default
-- EVENTS_RETENTION_DAYS; the migration cannot read the setting), mostly already past, so the
-- next purge takes them.
UPDATE moderation_decisions d
SET expires_at = COALESCE(
  (SELECT e.expires_at FROM stored_events e WHERE e.key = d.event_key),
  d.event_received_at + interval '30 days');
ALTER TABLE moderation_decisions ALTER COLUMN expires_at SET NOT NULL;
-- purgeExpired: the expired decisions, oldest expiry first, deleted in batches. A decision still
-- `pending` delivery is not in it: the purge leaves it until it is delivered or given up
-- (decision-delivery.ts), and the purge's condition is this index's, so it reads the index alone.
-- A plain CREATE INDEX, as every migration's (each runs in a transaction: migrate.ts).
CREATE INDEX moderation_decisions_expiry ON moderation_decisions (expires_at) WHERE delivery <> 'pending';
