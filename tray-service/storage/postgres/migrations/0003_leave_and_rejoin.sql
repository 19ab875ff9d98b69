-- Leaving and rejoining a community (docs/tray-rules.md#leaving-and-rejoining-a-community): a member
-- gets nothing of the community's targets while away, whatever order joins, leaves and actions
-- arrive in. What that needs besides the membership intervals: the away time itself, and each
-- action on a community's target kept with its time, so a record can be computed again when a
-- leave arrives late and a late join can add what it precedes (docs/postgres-tray-records.md).

-- Away spans [from_at, to_at) of a user in a community (awaySpans): from their first join or leave
-- the tray has on, every time outside their membership intervals; to_at is 9223372036854775807
-- while still away. Folded with tray_memberships from the same changes.
CREATE TABLE tray_member_away (
  community_id text COLLATE "C" NOT NULL,
  user_id text COLLATE "C" NOT NULL,
  from_at bigint NOT NULL,
  to_at bigint NOT NULL,
  PRIMARY KEY (community_id, user_id, from_at)
);
-- (The primary key serves every query: a recipient's spans in one community, whether an action's
-- time falls in one, whether one ends after a record's countFrom.)

-- The spans of the memberships stored so far, folded in SQL the way awaySpans folds them: the
-- gaps between a member's intervals from their first change on, and after their last interval.
INSERT INTO tray_member_away (community_id, user_id, from_at, to_at)
WITH known AS (
  SELECT community_id, user_id, min(at) AS since
  FROM (SELECT community_id, user_id, at FROM tray_membership_changes
        UNION ALL SELECT community_id, user_id, since FROM tray_imported_members) AS e
  GROUP BY community_id, user_id
),
gaps AS (
  SELECT k.community_id, k.user_id,
         coalesce(lag(m.to_at) OVER (PARTITION BY k.community_id, k.user_id ORDER BY m.from_at), k.since) AS from_at,
         m.from_at AS to_at
  FROM known k JOIN tray_memberships m USING (community_id, user_id)
  UNION ALL
  SELECT k.community_id, k.user_id, coalesce(last.to_at, k.since), 9223372036854775807
  FROM known k
  LEFT JOIN LATERAL (SELECT m.to_at FROM tray_memberships m
                     WHERE m.community_id = k.community_id AND m.user_id = k.user_id
                     ORDER BY m.from_at DESC LIMIT 1) AS last ON true
  WHERE last.to_at IS DISTINCT FROM 9223372036854775807
)
SELECT community_id, user_id, from_at, to_at FROM gaps WHERE from_at < to_at;

-- Every action on a community's target addressed to one user (comments, replies, reactions,
-- mentions), kept while records live, the newest 16 of each actor per record: a late leave
-- computes the user's records of the community again from them, a late join adds those it precedes.
-- Actions on user feeds are not kept (memberships never change their records).
CREATE TABLE tray_personal_actions (
  user_id text COLLATE "C" NOT NULL,
  verb text COLLATE "C" NOT NULL,
  target_id text COLLATE "C" NOT NULL,
  actor_id text COLLATE "C" NOT NULL,
  action_id text COLLATE "C" NOT NULL,
  community_id text COLLATE "C" NOT NULL,
  at bigint NOT NULL,
  -- The activity as the mapping made it: the actor's snapshot and the record's latest-action fields.
  activity jsonb NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (user_id, community_id, verb, target_id, actor_id, action_id)
);
-- (The primary key serves every look-up: a user's actions on one community's targets, a late
-- join's and a late leave's; a record's actions; one actor's, pruned to 16. One index fewer for
-- each comment to insert into.)
-- No index by actor: a deleted user's snapshots are found by a scan, as in tray_records (deletions
-- are rare, and every index costs each comment one more insertion).
-- purgeExpiredRecords.
CREATE INDEX tray_personal_actions_expiry ON tray_personal_actions (expires_at);

-- A community's posts by their author: a record computed again names each author at their post,
-- and a deleted user's snapshots are rewritten there too (by a scan, as above).
ALTER TABLE tray_community_posts
  ADD COLUMN actor_id text COLLATE "C" GENERATED ALWAYS AS (activity->'actor'->>'userId') STORED;
