-- Removals (docs/tray-rules.md#inbox): a deleted post, comment or reaction takes the actions it
-- voids out of every record that counted them. tray_target_actors keeps each actor's latest
-- action only, and tray_personal_actions only actions on a community's targets (16 per actor):
-- neither tells what a record counts once an actor's latest action is gone. So every counted
-- action of every record group is kept here for the records' retention, on user feeds as in
-- communities, with whom it reached ('' for a community's post: its members).
CREATE TABLE tray_group_actions (
  target_id text COLLATE "C" NOT NULL,
  verb text COLLATE "C" NOT NULL,
  action_id text COLLATE "C" NOT NULL,
  recipient text COLLATE "C" NOT NULL,
  actor_id text COLLATE "C" NOT NULL,
  name text NOT NULL,
  image_url text,
  avatar_custom_url text,
  at bigint NOT NULL,
  seg bigint,
  parent_target_id text COLLATE "C",
  mention_in text,
  -- The post the action belongs to (domain/activity-post.ts): where a removal looks.
  post_id text COLLATE "C",
  community_id text COLLATE "C",
  expires_at bigint NOT NULL,
  PRIMARY KEY (target_id, verb, action_id, recipient)
);
-- A removal's candidates: the actions on one post.
CREATE INDEX tray_group_actions_post ON tray_group_actions (post_id);
-- applyProfiles: a deleted user's actions are renamed.
CREATE INDEX tray_group_actions_actor ON tray_group_actions (actor_id);
-- purgeExpiredRecords.
CREATE INDEX tray_group_actions_expiry ON tray_group_actions (expires_at);

-- What was kept before: each actor's latest action per group, and the kept personal actions.
INSERT INTO tray_group_actions (target_id, verb, action_id, recipient, actor_id, name, image_url,
  avatar_custom_url, at, seg, parent_target_id, mention_in, post_id, community_id, expires_at)
SELECT target_id, verb, action_id, '', actor_id, name, image_url, avatar_custom_url, at, NULL, NULL, NULL,
       CASE WHEN verb = 'post' THEN action_id WHEN verb IN ('comment', 'reaction', 'mention') THEN target_id END,
       CASE WHEN verb = 'post' THEN target_id END, expires_at
FROM tray_target_actors
ON CONFLICT DO NOTHING;
INSERT INTO tray_group_actions (target_id, verb, action_id, recipient, actor_id, name, image_url,
  avatar_custom_url, at, seg, parent_target_id, mention_in, post_id, community_id, expires_at)
SELECT target_id, verb, action_id, user_id, actor_id, activity->'actor'->>'name',
       activity->'actor'->>'imageUrl', activity->'actor'->>'avatarCustomUrl', at,
       (activity->>'lastActionSegmentNo')::bigint, activity->>'parentTargetId', activity->>'mentionIn',
       CASE WHEN verb IN ('comment', 'reaction') THEN target_id
            WHEN verb IN ('mentreply', 'mentreact') THEN activity->>'parentTargetId'
            WHEN activity->>'mentionIn' = 'comment' THEN activity->>'parentTargetId'
            ELSE target_id END,
       community_id, expires_at
FROM tray_personal_actions
ON CONFLICT DO NOTHING;

-- One tombstone per removal, kept for the records' retention: an action it voids that arrives
-- later (retries, the spool, replay) is a no-op. Looked up by the post of the arriving actions.
CREATE TABLE tray_removals (
  post_id text COLLATE "C" NOT NULL,
  kind text COLLATE "C" NOT NULL,
  id text COLLATE "C" NOT NULL,
  at bigint NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (post_id, kind, id)
);
CREATE INDEX tray_removals_expiry ON tray_removals (expires_at);

-- The time of the action a record names, when it is older than lastUpdate: a removal takes the
-- newest action away but never moves lastUpdate back, and a later action is the newest when it is
-- newer than what the record names (NULL: lastUpdate is that time).
ALTER TABLE tray_records ADD COLUMN last_action_at bigint;
-- The lastUpdate a removal left: no later recomputation (a late leave taking actions away) moves
-- lastUpdate below it (docs/tray-rules.md#inbox). 0: no removal touched the record.
ALTER TABLE tray_records ADD COLUMN update_floor bigint NOT NULL DEFAULT 0;
