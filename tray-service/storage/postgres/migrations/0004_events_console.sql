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

-- GET /admin/stats/events-per-minute: per minute of receipt, the events received by name
-- ({"post.didCreate": 12, ...}), counted by the same statement that stores them. One row a minute,
-- so a day's chart is 1,440 rows whatever the number of event names.
CREATE TABLE stored_event_minutes (
  minute timestamptz PRIMARY KEY,
  counts jsonb NOT NULL,
  expires_at timestamptz NOT NULL
);
-- purgeExpired: minutes whose every event has expired.
CREATE INDEX stored_event_minutes_expiry ON stored_event_minutes (expires_at);

-- GET /admin/stats/lag: per minute of receipt, a histogram of acknowledgement-to-tray lags (the
-- non-empty buckets of tray-service/domain/lag-histogram.ts's bounds, {"13": 40, "14": 2}) and the
-- largest one, counted by the statement that records the event applied.
CREATE TABLE stored_event_lag_minutes (
  minute timestamptz PRIMARY KEY,
  count integer NOT NULL,
  buckets jsonb NOT NULL,
  max_ms bigint NOT NULL,
  expires_at timestamptz NOT NULL
);
-- purgeExpired: minutes whose every event has expired.
CREATE INDEX stored_event_lag_minutes_expiry ON stored_event_lag_minutes (expires_at);
