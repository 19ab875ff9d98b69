-- Stored events, moderation decisions, global bans and the legacy block list.
--
-- Distribution (docs/scaling.md): every primary key and unique constraint carries the column a
-- Citus cluster would distribute its table by, so the schema distributes as it is:
--   stored_events         key        (the receiver's dedupe key)
--   moderation_decisions  id         (derived from the event's key, rule and subject)
--   user_bans             user_id
--   block_list            netid_uid  (the owner's side of an entry)
-- Identifiers that pages are ordered by use COLLATE "C": byte order, the same on every database
-- whatever its locale, and the order MongoDB gives the same ids.

-- Every verified delivery once, for moderation and analytics. `data` is the event's payload as
-- jsonb, so analytics teams can query it with their own SQL (data->>'communityId', ...).
CREATE TABLE stored_events (
  key text COLLATE "C" PRIMARY KEY,
  event text NOT NULL,
  webhook text NOT NULL,
  data jsonb NOT NULL,
  received_at timestamptz NOT NULL,
  stored_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  status text NOT NULL CHECK (status IN ('applied', 'stored', 'unknown', 'invalid')),
  error text
);
-- GET /admin/events and its export without filters, and since/until ranges: newest first.
CREATE INDEX stored_events_received ON stored_events (received_at DESC, key DESC);
-- ... ?event= : one event name, newest first.
CREATE INDEX stored_events_event_received ON stored_events (event, received_at DESC, key DESC);
-- ... ?webhook= : one webhook, newest first.
CREATE INDEX stored_events_webhook_received ON stored_events (webhook, received_at DESC, key DESC);
-- ... ?status= : e.g. the events the mapping found invalid, newest first.
CREATE INDEX stored_events_status_received ON stored_events (status, received_at DESC, key DESC);
-- purgeExpired: the expired events, oldest expiry first, deleted in batches.
CREATE INDEX stored_events_expiry ON stored_events (expires_at);

-- What the moderation rules decided about stored events (admin API, decision delivery).
CREATE TABLE moderation_decisions (
  id text COLLATE "C" PRIMARY KEY,
  event_key text COLLATE "C" NOT NULL,
  event text NOT NULL,
  event_received_at timestamptz NOT NULL,
  rule text NOT NULL,
  action text NOT NULL,
  reason text NOT NULL,
  subject_type text NOT NULL,
  subject_id text NOT NULL,
  user_id text,
  decided_at timestamptz NOT NULL,
  delivery text NOT NULL CHECK (delivery IN ('off', 'pending', 'delivered', 'failed')),
  delivery_attempts integer NOT NULL,
  delivered_at timestamptz,
  last_error text
);
-- GET /admin/moderation/decisions without filters, and since/until: newest first.
CREATE INDEX moderation_decisions_decided ON moderation_decisions (decided_at DESC, id DESC);
-- ... ?userId= : everything decided about one user (the basis of a ban).
CREATE INDEX moderation_decisions_user_decided ON moderation_decisions (user_id, decided_at DESC, id DESC);
-- ... ?rule=
CREATE INDEX moderation_decisions_rule_decided ON moderation_decisions (rule, decided_at DESC, id DESC);
-- ... ?action=
CREATE INDEX moderation_decisions_action_decided ON moderation_decisions (action, decided_at DESC, id DESC);
-- ... ?delivery= : e.g. the failed deliveries an operator should look at.
CREATE INDEX moderation_decisions_delivery_decided ON moderation_decisions (delivery, decided_at DESC, id DESC);
-- ... ?eventKey= : the decisions about one stored event.
CREATE INDEX moderation_decisions_event_key ON moderation_decisions (event_key, decided_at DESC, id DESC);

-- Each user's newest global ban change: the highest rank wins (domain/ban-change.ts), whatever
-- the order the changes arrive in. Read whole at start-up (the ban cache); the primary key
-- serves the upsert.
CREATE TABLE user_bans (
  user_id text PRIMARY KEY,
  banned boolean NOT NULL,
  changed_at bigint NOT NULL,
  rank bigint NOT NULL
);

-- Who a user has blocked (the legacy block-list API). The primary key serves every query: an
-- owner's page in blocked-id order and the check of a list of ids.
CREATE TABLE block_list (
  netid_uid text COLLATE "C" NOT NULL,
  blocked_user_id text COLLATE "C" NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (netid_uid, blocked_user_id)
);
