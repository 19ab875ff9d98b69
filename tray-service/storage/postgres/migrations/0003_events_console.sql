-- The events console (docs/operations.md#events-console-api): what its filters and charts read,
-- kept as events are stored, so no console query scans the events.
--
-- Distribution (docs/scaling.md): stored_events keeps its key; the two per-minute rollups are small
-- (one row per minute and event name, one per minute) and would be Citus reference tables.

-- The mapping's subject (the acting user, the community) and the moderation outcome, for the
-- filters; applied_at, when the worker finished applying the event (the lag chart). The filter
-- ?moderation=none reads stored_events_received: nearly every event has no decision.
ALTER TABLE stored_events
  ADD COLUMN user_id text COLLATE "C",
  ADD COLUMN community_id text COLLATE "C",
  ADD COLUMN moderation text NOT NULL DEFAULT 'none' CHECK (moderation IN ('none', 'flag', 'ban-request')),
  ADD COLUMN applied_at timestamptz;
-- GET /admin/events?userId= : one acting user's events, newest first.
CREATE INDEX stored_events_user_received ON stored_events (user_id, received_at DESC, key DESC)
  WHERE user_id IS NOT NULL;
-- GET /admin/events?communityId= : one community's events, newest first.
CREATE INDEX stored_events_community_received ON stored_events (community_id, received_at DESC, key DESC)
  WHERE community_id IS NOT NULL;
-- GET /admin/events?moderation=any|flag|ban-request : the few events a rule decided about, newest first.
CREATE INDEX stored_events_moderated_received ON stored_events (received_at DESC, key DESC)
  WHERE moderation <> 'none';

-- GET /admin/stats/events-per-minute: events per minute of receipt and name, counted by the same
-- statement that stores them.
CREATE TABLE stored_event_minutes (
  minute timestamptz NOT NULL,
  event text NOT NULL,
  count integer NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (minute, event)
);
-- purgeExpired: minutes whose every event has expired.
CREATE INDEX stored_event_minutes_expiry ON stored_event_minutes (expires_at);

-- GET /admin/stats/lag: per minute of receipt, a histogram of acknowledgement-to-tray lags (bucket
-- counts over tray-service/domain/lag-histogram.ts's bounds) and the largest one, counted by the
-- statement that records the event applied.
CREATE TABLE stored_event_lag_minutes (
  minute timestamptz PRIMARY KEY,
  count integer NOT NULL,
  buckets integer[] NOT NULL,
  max_ms bigint NOT NULL,
  expires_at timestamptz NOT NULL
);
-- purgeExpired: minutes whose every event has expired.
CREATE INDEX stored_event_lag_minutes_expiry ON stored_event_lag_minutes (expires_at);
