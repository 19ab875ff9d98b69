/** The SQL expressions naming one delivery of one action to one recipient. */
export interface DeliveryRef {
  /** The recipient, whose mutes are read. */
  user: string;
  /** The action's actor (a `user` mute). */
  actor: string;
  /** The verb of the record the action counts in (a mention passes post and community mutes). */
  verb: string;
  /** The post the action belongs to (domain/activity-post.ts; a `post` mute), or NULL. */
  post: string;
  /** The community of the action's target (a `community` mute), or NULL on a user feed. */
  community: string;
  /** The action's platform time. */
  at: string;
}

/** A span's end (removed or ended by itself), or bigint's largest value while it has none. */
export const MUTE_END = `coalesce(least(m.until_at, m.removed_at), 9223372036854775807)`;

/**
 * A boolean SQL expression: whether one of the recipient's mute spans in `mutes` (tray_mutes, read
 * by its primary key, or a relation with the same columns) held the action back. The rule is the domain's
 * (domain/mute.ts muteCovers, muteInForceAt): a span covers the action when it mutes its actor, or,
 * unless the action is a mention, its post or its community; and holds it back when it was in force
 * at the action's time, whenever the action is delivered.
 */
export function heldBackSql(ref: DeliveryRef, mutes = 'tray_mutes'): string {
  const { user, actor, verb, post, community, at } = ref;
  return `EXISTS (SELECT 1 FROM ${mutes} m
    WHERE m.user_id = ${user}
      AND m.created_at <= ${at} AND (m.until_at IS NULL OR ${at} < m.until_at)
      AND (m.removed_at IS NULL OR ${at} < m.removed_at)
      AND ((m.target_type = 'user' AND m.target_id = ${actor})
        OR (${verb} <> 'mention' AND ((m.target_type = 'post' AND m.target_id = ${post})
                                     OR (m.target_type = 'community' AND m.target_id = ${community})))))`;
}

/**
 * A CTE body over the activities `p` of a fan-out (upsert-group-records.ts): every mute span, of any
 * user, that could hold back one of the posts or any other post the community's `post` records
 * count: mutes of the community, of the posts' authors and every earlier author of the group
 * (tray_target_actors), and of every kept post of the community. Read by target
 * (migrations/0007_mute_targets.sql), never per member, so a fan-out reads as many rows as there
 * are mutes on those targets, whatever its audience's size.
 */
export const MUTES_ON_TARGETS = `SELECT m.user_id, m.target_type, m.target_id, m.created_at, m.until_at, m.removed_at
  FROM (SELECT 'user'::text AS target_type, p.actor_id AS target_id FROM p
        UNION SELECT 'post', p.post_id FROM p WHERE p.post_id IS NOT NULL
        UNION SELECT 'community', p.community_id FROM p WHERE p.community_id IS NOT NULL
        UNION SELECT 'user', t.actor_id FROM (SELECT DISTINCT verb, target_id FROM p) AS k
              JOIN tray_target_actors t ON t.target_id = k.target_id AND t.verb = k.verb
        UNION SELECT 'post', cp.action_id FROM (SELECT DISTINCT target_id FROM p WHERE verb = 'post') AS k
              JOIN tray_community_posts cp ON cp.community_id = k.target_id) AS c
  JOIN tray_mutes m ON m.target_type = c.target_type AND m.target_id = c.target_id`;

/**
 * The same for personal activities (each addressed to one user): the recipients' own spans (the
 * primary key; a few recipients, most with no mute at all) that could hold back one of the
 * activities or another action of their groups: on their actors, posts or communities, or on any
 * actor of their groups (tray_target_actors). Reading by target instead would look up every
 * earlier actor of every group in the batch, for recipients who mostly mute nothing.
 */
export const MUTES_OF_RECIPIENTS = `SELECT m.user_id, m.target_type, m.target_id, m.created_at, m.until_at, m.removed_at
  FROM (SELECT DISTINCT p.recipient FROM p WHERE p.recipient IS NOT NULL) AS r
  JOIN tray_mutes m ON m.user_id = r.recipient
  WHERE CASE m.target_type
    WHEN 'community' THEN m.target_id IN (SELECT p.community_id FROM p)
    WHEN 'post' THEN m.target_id IN (SELECT p.post_id FROM p)
    ELSE m.target_id IN (SELECT p.actor_id FROM p)
      OR EXISTS (SELECT 1 FROM (SELECT DISTINCT verb, target_id FROM p) AS k
                 JOIN tray_target_actors t
                   ON t.target_id = k.target_id AND t.verb = k.verb AND t.actor_id = m.target_id)
  END`;
