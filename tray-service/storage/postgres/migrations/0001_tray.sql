-- The tray's records and what they are computed from (docs/postgres-tray-records.md).
-- Times are epoch milliseconds (bigint). Ids compare byte-wise (COLLATE "C"), as the grouping core
-- compares them, so ties between equal times break the same way in SQL as in the pure domain code.
-- Every primary key and unique constraint carries its table's distribution column (user_id for
-- per-user tables, community_id / target_id for community and target tables), so the schema can be
-- distributed with Citus as it is.

-- The record key v_tarid_uid (tray-service/domain/record-key.ts): each part escaped, then joined.
CREATE FUNCTION tray_record_key(verb text, target_id text, user_id text) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT replace(replace(verb, '%', '%25'), '_', '%5F') || '_' ||
               replace(replace(target_id, '%', '%25'), '_', '%5F') || '_' ||
               replace(replace(user_id, '%', '%25'), '_', '%5F') $$;

-- One user's record of one verb and target (a record group is every user's record of one verb and target).
CREATE TABLE tray_records (
  user_id text COLLATE "C" NOT NULL,
  key text COLLATE "C" NOT NULL,
  verb text COLLATE "C" NOT NULL,
  target_id text COLLATE "C" NOT NULL,
  target_type text NOT NULL,
  target_name text NOT NULL,
  parent_target_id text,
  last_action_id text COLLATE "C" NOT NULL,
  last_action_segment_no bigint,
  -- json, not jsonb: stored and returned as text, so a fan-out returning 10,000 records spends no
  -- time printing jsonb (the writes build both from jsonb, so equal values are equal texts).
  feed json NOT NULL,
  mention_in text,
  -- At most 3 snapshots, newest first: a record stays this size however many act on its target.
  actors json NOT NULL,
  actors_count integer NOT NULL,
  count_from bigint NOT NULL,
  last_update bigint NOT NULL,
  has_read boolean NOT NULL DEFAULT false,
  unread_at bigint NOT NULL,
  changed_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (user_id, key)
);
-- History pages (v3 pageAfter, v2 pageNumber) and count: a user's records newest first, LIMIT.
CREATE INDEX tray_records_page ON tray_records (user_id, last_update DESC, key DESC) INCLUDE (expires_at, verb);
-- Unread count and mark-all-read: a user's unread records by unreadAt.
CREATE INDEX tray_records_unread ON tray_records (user_id, unread_at) INCLUDE (expires_at) WHERE NOT has_read;
-- No more indexes on this table: a fan-out rewrites every member's record, and each index costs
-- it one more insertion per member. changedSince reads the user's rows by tray_records_page (a
-- reconnect, not a hot path); the periodic purge scans the table.

-- The distinct actors of each record group, each at their latest action: kept once per target,
-- not per recipient; every recipient's actors and actorsCount are computed from them.
CREATE TABLE tray_target_actors (
  verb text COLLATE "C" NOT NULL,
  target_id text COLLATE "C" NOT NULL,
  actor_id text COLLATE "C" NOT NULL,
  name text NOT NULL,
  image_url text,
  avatar_custom_url text,
  at bigint NOT NULL,
  action_id text COLLATE "C" NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (target_id, verb, actor_id)
);
-- A write's group actors newest first (top 3) and the count of those at or after a countFrom.
CREATE INDEX tray_target_actors_newest ON tray_target_actors (target_id, verb, at DESC, action_id DESC);
-- applyProfiles: the groups a deleted user acted in.
CREATE INDEX tray_target_actors_actor ON tray_target_actors (actor_id);
-- purgeExpiredRecords: actors whose latest action is past retention.
CREATE INDEX tray_target_actors_expiry ON tray_target_actors (expires_at);

-- Every join and leave, one row per (community, user, time, kind): a redelivery inserts nothing.
CREATE TABLE tray_membership_changes (
  community_id text COLLATE "C" NOT NULL,
  user_id text COLLATE "C" NOT NULL,
  at bigint NOT NULL,
  joined boolean NOT NULL,
  PRIMARY KEY (community_id, user_id, at, joined)
);
-- applyProfiles: the communities a deleted user has changes in.
CREATE INDEX tray_membership_changes_user ON tray_membership_changes (user_id);

-- Memberships loaded from the platform's own list (importBatch): a join at `since`, and a join at
-- `as_of`, the list's time (a leave stored before it is overridden, one after it stands).
CREATE TABLE tray_imported_members (
  community_id text COLLATE "C" NOT NULL,
  user_id text COLLATE "C" NOT NULL,
  since bigint NOT NULL,
  as_of bigint NOT NULL,
  PRIMARY KEY (community_id, user_id)
);
-- applyProfiles: the communities a deleted user was imported into.
CREATE INDEX tray_imported_members_user ON tray_imported_members (user_id);

-- Membership intervals [from_at, to_at) folded from the two tables above (membershipIntervals);
-- to_at is 9223372036854775807 while still a member. What a fan-out joins a post's createdAt with.
CREATE TABLE tray_memberships (
  community_id text COLLATE "C" NOT NULL,
  user_id text COLLATE "C" NOT NULL,
  from_at bigint NOT NULL,
  to_at bigint NOT NULL,
  PRIMARY KEY (community_id, user_id, from_at)
);

-- A community's posts, kept while their records can live: a join processed late finds the posts
-- that fall inside the membership it opened.
CREATE TABLE tray_community_posts (
  community_id text COLLATE "C" NOT NULL,
  action_id text COLLATE "C" NOT NULL,
  at bigint NOT NULL,
  activity jsonb NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (community_id, action_id)
);
-- A late join's backfill: a community's posts in a time range.
CREATE INDEX tray_community_posts_at ON tray_community_posts (community_id, at);
-- purgeExpiredRecords.
CREATE INDEX tray_community_posts_expiry ON tray_community_posts (expires_at);

-- The latest profile of each user (user.didUpdate / user.didDelete); older deliveries are ignored.
CREATE TABLE tray_profiles (
  user_id text COLLATE "C" PRIMARY KEY,
  display_name text NOT NULL,
  image_url text,
  avatar_custom_url text,
  deleted boolean NOT NULL,
  updated_at bigint NOT NULL
);

-- One latest time per user, never moving backwards: last read, and last delete-all.
CREATE TABLE tray_last_read (
  user_id text COLLATE "C" PRIMARY KEY,
  at bigint NOT NULL
);
CREATE TABLE tray_clears (
  user_id text COLLATE "C" PRIMARY KEY,
  at bigint NOT NULL
);
