import type pg from 'pg';
import type { InboxRecord } from '../../domain/inbox-record.ts';
import type { Removal } from '../../domain/removal.ts';
import { removalVoids } from '../../domain/removal-voids.ts';
import type { ActorSnapshot, TrayVerb } from '../../domain/tray-record.ts';
import {
  EMPTY_REMOVAL_TALLY,
  recordCounts,
  removalChange,
  tallyRemovalChanges,
  type RemovalTally,
} from '../../domain/removal-tray-change.ts';
import type { RemovedRecord } from '../port.ts';
import { exactActorsOfRow } from './exact-actors-sql.ts';
import { actorsSinceSql, actorTimesSql } from './actors-since-sql.ts';
import { writeClock } from '../write-clock.ts';
import { MUTE_END } from './held-back-sql.ts';
import { groupLock, lockKeys, postLock, profileLock } from './lock-keys.ts';
import { toInboxRecord, type InboxRow } from './inbox-row.ts';
import { deletedMarkSql } from './deleted-actor-sql.ts';
import { postHoldersSql } from './postgres-memberships.ts';
import type { MemberRange, UnreturnedParts } from './written-after-commit.ts';

/** A kept action on one of the removals' posts (tray_group_actions). */
interface ActionRow {
  target_id: string;
  verb: TrayVerb;
  action_id: string;
  recipient: string;
  actor_id: string;
  parent_target_id: string | null;
  mention_in: 'post' | 'comment' | null;
  community_id: string | null;
}

const groupKey = (row: Pick<ActionRow, 'verb' | 'target_id'>) => JSON.stringify([row.verb, row.target_id]);

const ACTION_COLUMNS = `t.target_id, t.verb, t.action_id, t.recipient, t.actor_id, t.parent_target_id,
  t.mention_in, t.community_id`;

/**
 * A deleted community post's kept copy, as the action of its community's `post` group. The fan-out
 * keeps a post (in a transaction of its own) before it writes the group's actions, so a deletion
 * that commits in between finds no group action of the post; the kept copy alone says that the
 * exact counts of the community's `post` records (exact-actors-sql.ts) may have counted it.
 */
const KEPT_POST = `SELECT t.community_id, 'post' COLLATE "C", t.action_id, '' COLLATE "C", t.actor_id,
         NULL COLLATE "C", NULL, t.community_id
       FROM tray_community_posts t
       WHERE r.kind = 'post' AND t.community_id = r.community_id AND t.action_id = r.id`;

/**
 * The kept actions each removal may void, with what removalVoids reads of each: a deleted post's
 * every action (by its post), and of a comment or reaction only the actions it is (by its id, the
 * post's index) or that are on it (by their target, the primary key), and a deleted community post's
 * kept copy (KEPT_POST). A superset of what
 * removalVoids takes: it decides. A comment deletion so reads its own few actions, never the post's.
 */
async function candidateActions(
  client: pg.PoolClient,
  removals: readonly Removal[],
  store?: { now: number; retentionMs: number },
): Promise<ActionRow[]> {
  // With `store`, the tombstones are stored by the same statement (one round trip less): its reads
  // see every write that committed before the post's lock was taken, which is all they need.
  const storing = `, stored AS (INSERT INTO tray_removals (post_id, kind, id, at, expires_at, community_id)
       SELECT post_id, kind, id, at, expires_at, community_id FROM r ON CONFLICT DO NOTHING)`;
  const found = await client.query<ActionRow>(
    `WITH r AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::text[])
       AS r(kind, id, post_id, at, expires_at, community_id))${store ? storing : ''}
     SELECT DISTINCT t.target_id, t.verb, t.action_id, t.recipient, t.actor_id, t.parent_target_id, t.mention_in,
       t.community_id
     FROM r CROSS JOIN LATERAL (
       SELECT ${ACTION_COLUMNS} FROM tray_group_actions t WHERE r.kind = 'post' AND t.post_id = r.id
       UNION ALL
       SELECT ${ACTION_COLUMNS} FROM tray_group_actions t
       WHERE r.kind <> 'post' AND t.post_id = r.post_id AND t.action_id = r.id
       UNION ALL
       SELECT ${ACTION_COLUMNS} FROM tray_group_actions t
       WHERE r.kind = 'comment' AND t.target_id = r.id AND t.post_id = r.post_id
       UNION ALL
       ${KEPT_POST}
     ) AS t`,
    [
      removals.map((removal) => removal.kind),
      removals.map((removal) => removal.id),
      removals.map((removal) => removal.postId),
      removals.map((removal) => removal.at),
      removals.map((removal) => (store ? Math.max(removal.at, store.now) + store.retentionMs : 0)),
      removals.map((removal) => removal.communityId ?? null),
    ],
  );
  return found.rows;
}

const voids = (removals: readonly Removal[], row: ActionRow) =>
  removals.some((removal) =>
    removalVoids(removal, {
      verb: row.verb,
      targetId: row.target_id,
      lastActionId: row.action_id,
      ...(row.parent_target_id === null ? {} : { parentTargetId: row.parent_target_id }),
      ...(row.mention_in === null ? {} : { mentionIn: row.mention_in }),
    }),
  );

/** The voided actions gone from every table that keeps actions, in one statement. */
const DELETE_VOIDED = `WITH v AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
         AS v(target_id, verb, action_id, recipient, actor_id, community_id)),
     ga AS (DELETE FROM tray_group_actions t USING v
            WHERE t.target_id = v.target_id AND t.verb = v.verb AND t.action_id = v.action_id
              AND t.recipient = v.recipient),
     pa AS (DELETE FROM tray_personal_actions t USING v
            WHERE v.recipient <> '' AND t.user_id = v.recipient AND t.community_id = v.community_id
              AND t.verb = v.verb AND t.target_id = v.target_id AND t.actor_id = v.actor_id
              AND t.action_id = v.action_id)
     DELETE FROM tray_community_posts t USING v
     WHERE v.verb = 'post' AND t.community_id = v.target_id AND t.action_id = v.action_id`;

/**
 * Each actor of the groups who lost an action, at their newest action left (or gone): the group
 * actors are each actor's latest action, so they are read again from every kept action. Returns,
 * per group, the latest expiry among the actor rows it replaced (RENEW_NEWEST_ACTOR).
 */
const REFOLD_ACTORS = `WITH a AS (SELECT DISTINCT * FROM unnest($1::text[], $2::text[], $3::text[]) AS a(target_id, verb, actor_id)),
     gone AS (DELETE FROM tray_target_actors t USING a
              WHERE t.target_id = a.target_id AND t.verb = a.verb AND t.actor_id = a.actor_id
              RETURNING t.target_id, t.verb, t.expires_at),
     refolded AS (
       INSERT INTO tray_target_actors
         (verb, target_id, actor_id, name, image_url, avatar_custom_url, actor_deleted, at, action_id, expires_at)
       SELECT DISTINCT ON (g.target_id, g.verb, g.actor_id)
         g.verb, g.target_id, g.actor_id, g.name, g.image_url, g.avatar_custom_url, g.actor_deleted, g.at, g.action_id,
         g.expires_at
       FROM a JOIN tray_group_actions g
         ON g.target_id = a.target_id AND g.verb = a.verb AND g.actor_id = a.actor_id
       ORDER BY g.target_id, g.verb, g.actor_id, g.at DESC, g.action_id DESC
       ON CONFLICT (target_id, verb, actor_id) DO UPDATE SET name = excluded.name, image_url = excluded.image_url,
         avatar_custom_url = excluded.avatar_custom_url, actor_deleted = excluded.actor_deleted, at = excluded.at,
         action_id = excluded.action_id, expires_at = excluded.expires_at)
     SELECT target_id, verb, max(expires_at)::text AS expires_at FROM gone GROUP BY target_id, verb`;

/**
 * A removal leaves a record's lastUpdate where it was (the floor), above the newest action it still
 * counts when it took the newest one: the record lives until that lastUpdate + retention, and the
 * kept actions it counts must too. The purge keeps a group's rows until its newest actor's expiry
 * (purge-kept-in-batches.ts), so that actor takes the expiry of the rows the removal replaced when
 * it is sooner. One row per group, under the group's lock the removal holds.
 */
const RENEW_NEWEST_ACTOR = `UPDATE tray_target_actors t SET expires_at = k.keep
     FROM unnest($1::text[], $2::text[], $3::bigint[]) AS k(target_id, verb, keep)
     CROSS JOIN LATERAL (SELECT n.actor_id FROM tray_target_actors n
                         WHERE n.target_id = k.target_id AND n.verb = k.verb
                         ORDER BY n.at DESC, n.action_id DESC LIMIT 1) AS newest
     WHERE t.target_id = k.target_id AND t.verb = k.verb AND t.actor_id = newest.actor_id
       AND t.expires_at < k.keep`;

const SNAPSHOT = `jsonb_strip_nulls(jsonb_build_object('userId', t.actor_id, 'name', t.name,
  'imageUrl', t.image_url, 'avatarCustomUrl', t.avatar_custom_url, 'deleted', ${deletedMarkSql('t.actor_deleted')},
  'at', t.at))`;

/**
 * Every unexpired record of the groups computed again from what it still counts: the members'
 * `post` records of a community (postHoldersSql: anyone with a membership interval or an away span there), and the recipients' records of
 * every other group. A record whose recipient was away since its countFrom, or has a mute that
 * may have held back some of its group's actions since then, counts exactly (exact-actors-sql.ts);
 * every other counts its group's actors from countFrom on. Only actors,
 * actorsCount and the last action's id and segment change (with changedAt); a record left with
 * none is deleted. Returns each record changed (`rec`) or deleted.
 */
function recomputeSql(members: boolean): string {
  const exact = exactActorsOfRow('r');
  // Without a `post` group the members' branch finds nobody, but the planner cannot know that: it
  // estimates a community's worth of records and reads tray_records whole for one comment's record.
  // Those of the statement's part only ($8, $9: after and through, by id; null: open).
  const ofMembers = `SELECT mb.user_id, grp.verb, grp.target_id, grp.community_id
           FROM grp CROSS JOIN LATERAL (${postHoldersSql('grp.target_id')}) AS mb WHERE grp.verb = 'post'
             AND ($8::text IS NULL OR mb.user_id > $8) AND ($9::text IS NULL OR mb.user_id <= $9)
           UNION`;
  return `WITH grp AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS g(verb, target_id, community_id)),
     d AS (${members ? ofMembers : ''}
           SELECT DISTINCT x.user_id, grp.verb, grp.target_id, grp.community_id
           FROM unnest($4::text[], $5::text[], $6::text[]) AS x(user_id, verb, target_id)
           JOIN grp ON grp.verb = x.verb AND grp.target_id = x.target_id),
     r AS (SELECT t.user_id, t.key, t.verb, t.target_id, t.count_from, d.community_id,
             t.actors::json AS old_actors, t.actors_count AS old_count, t.last_action_id AS old_last
           FROM d JOIN tray_records t
             ON t.user_id = d.user_id AND t.key = tray_record_key(d.verb, d.target_id, d.user_id)
           WHERE t.expires_at > $7),
     -- Each group's actors' times once, in order (actors-since-sql.ts), and its newest four actors
     -- with the segment of each one's action: a record's actors are the first three of them from
     -- its countFrom on, its recipient left out (one row per actor: four are enough), as in the
     -- grouping upsert. Read per record, they cost a scan of the group's actors per member
     -- wherever the planner misjudged the table's size (BENCHMARKS.md).
     g AS MATERIALIZED (
       SELECT grp.verb, grp.target_id, cardinality(s.ats) AS total, s.ats[1] AS min_at, s.ats, n.top4
       FROM grp CROSS JOIN LATERAL (SELECT ${actorTimesSql('grp.verb', 'grp.target_id')} AS ats) AS s
       CROSS JOIN LATERAL (
         SELECT coalesce(jsonb_agg(jsonb_build_object('snap', l.snap, 'actorId', l.actor_id,
                  'actionId', l.action_id, 'at', l.at, 'seg', l.seg) ORDER BY l.at DESC, l.action_id DESC),
                  '[]'::jsonb) AS top4
         FROM (SELECT t.at, t.action_id, t.actor_id, ${SNAPSHOT} AS snap,
                      (SELECT ga.seg FROM tray_group_actions ga
                       WHERE ga.target_id = t.target_id AND ga.verb = t.verb AND ga.action_id = t.action_id
                       LIMIT 1) AS seg
               FROM tray_target_actors t WHERE t.target_id = grp.target_id AND t.verb = grp.verb
               ORDER BY t.at DESC, t.action_id DESC LIMIT 4) AS l) AS n),
     x AS (SELECT r.*, e.exact FROM r LEFT JOIN LATERAL (
             SELECT ${exact} AS exact
             WHERE (r.community_id IS NOT NULL
                    AND EXISTS (SELECT 1 FROM tray_member_away a
                                WHERE a.community_id = r.community_id AND a.user_id = r.user_id
                                  AND a.to_at > r.count_from))
                -- A mute of the recipient's that ends after countFrom and could cover the group's
                -- actions (any but another community's): one primary-key range per record.
                OR EXISTS (SELECT 1 FROM tray_mutes m
                           WHERE m.user_id = r.user_id AND ${MUTE_END} > r.count_from
                             AND (m.target_type <> 'community' OR m.target_id = r.community_id))
             OFFSET 0) AS e ON true),
     y AS (
       SELECT x.user_id, x.key, x.old_actors, x.old_count, x.old_last,
         CASE WHEN x.exact IS NOT NULL THEN x.exact->'actors' ELSE top.actors END AS actors,
         CASE WHEN x.exact IS NOT NULL THEN (x.exact->>'count')::int
              ELSE ${actorsSinceSql({ summary: 'g', countFrom: 'x.count_from', verb: 'x.verb', target: 'x.target_id', own: 'own' })} END AS actors_count,
         CASE WHEN x.exact IS NOT NULL THEN x.exact->'newest'->>'lastActionId' ELSE top.newest END AS last_action_id,
         CASE WHEN x.exact IS NOT NULL THEN (x.exact->'newest'->>'at')::bigint ELSE top.newest_at END AS last_action_at,
         CASE WHEN x.exact IS NOT NULL THEN (x.exact->'newest'->>'lastActionSegmentNo')::bigint
              ELSE top.seg END AS seg
       FROM x JOIN g ON g.verb = x.verb AND g.target_id = x.target_id
       LEFT JOIN tray_target_actors own
         ON own.target_id = x.target_id AND own.verb = x.verb AND own.actor_id = x.user_id
       CROSS JOIN LATERAL (
         SELECT coalesce(jsonb_agg(l.e->'snap' ORDER BY l.o), '[]'::jsonb)::json AS actors,
                (array_agg(l.e->>'actionId' ORDER BY l.o))[1] AS newest,
                (array_agg((l.e->>'at')::bigint ORDER BY l.o))[1] AS newest_at,
                (array_agg((l.e->>'seg')::bigint ORDER BY l.o))[1] AS seg
         FROM (SELECT e, o FROM jsonb_array_elements(g.top4) WITH ORDINALITY AS a(e, o)
               WHERE (e->>'at')::bigint >= x.count_from AND e->>'actorId' <> x.user_id
               ORDER BY o LIMIT 3) AS l) AS top),
     gone AS (DELETE FROM tray_records t USING y
              WHERE t.user_id = y.user_id AND t.key = y.key AND (y.actors_count = 0 OR y.last_action_id IS NULL)
              RETURNING t.user_id, t.key, t.actors::json AS old_actors, t.actors_count AS old_count,
                t.last_action_id AS old_last),
     changed AS (
       UPDATE tray_records t SET actors = y.actors, actors_count = y.actors_count,
         last_action_id = y.last_action_id, last_action_segment_no = y.seg,
         last_action_at = nullif(y.last_action_at, t.last_update), update_floor = t.last_update,
         changed_at = GREATEST(t.changed_at + 1, $7)
       FROM y
       WHERE t.user_id = y.user_id AND t.key = y.key AND y.actors_count > 0 AND y.last_action_id IS NOT NULL
         AND (t.actors::text <> y.actors::text OR t.actors_count <> y.actors_count
              OR t.last_action_id <> y.last_action_id OR t.last_action_segment_no IS DISTINCT FROM y.seg)
       RETURNING t.*, y.old_actors, y.old_count, y.old_last)
     SELECT user_id, key, NULL::json AS rec, old_actors, old_count, old_last FROM gone
     UNION ALL
     SELECT user_id, key, json_build_object('user_id', user_id, 'key', key, 'verb', verb, 'target_id', target_id,
       'target_type', target_type, 'target_name', target_name, 'parent_target_id', parent_target_id,
       'last_action_id', last_action_id, 'last_action_segment_no', last_action_segment_no::text, 'feed', feed,
       'mention_in', mention_in, 'actors', actors, 'actors_count', actors_count,
       'last_update', last_update::text, 'has_read', has_read, 'unread_at', unread_at::text,
       'changed_at', changed_at::text, 'is_seen', is_seen, 'archived_at', archived_at::text,
       'snoozed_until', snoozed_until::text) AS rec, old_actors, old_count, old_last
     FROM changed`;
}

/** Members one statement computes the `post` records of again unless told otherwise. */
export const REMOVAL_MEMBERS_PER_STATEMENT = 10_000;

/**
 * The id that ends the part of the communities' post holders after `after` (none: from the
 * first): the `perStatement`-th of them in id order, or null when fewer are left. Each community's
 * first ones are read by its primary keys (postHoldersSql's page), never all of them.
 */
async function partEnd(
  client: pg.PoolClient,
  communities: readonly string[],
  after: string | null,
  perStatement: number,
): Promise<string | null> {
  const end = await client.query<{ user_id: string }>(
    `SELECT h.user_id FROM unnest($1::text[]) AS c(id)
     CROSS JOIN LATERAL (${postHoldersSql('c.id', { after: '$2', limit: '$3' })}) AS h
     ORDER BY h.user_id OFFSET $3 - 1 LIMIT 1`,
    [communities, after ?? '', perStatement],
  );
  return end.rows[0]?.user_id ?? null;
}

export interface RemovalsApplied {
  written: InboxRecord[];
  removed: RemovedRecord[];
  /** Kept actions taken out. */
  voided: number;
  /** Every record changed or removed, counted; the first kept with their counts (the event detail's). */
  tally: RemovalTally;
  /**
   * The members' `post` records changed once recordsHeld were held: not returned, to be read back
   * after the commit (writtenAfterCommit), one entry per community.
   */
  unreturned: UnreturnedParts[];
}

/** A recomputed record: as it is now (`rec`, null when deleted) and its counts before. */
interface RecomputedRow {
  user_id: string;
  key: string;
  rec: InboxRow | null;
  old_actors: ActorSnapshot[];
  old_count: number;
  old_last: string;
}

/**
 * Removals on PostgreSQL (docs/tray-rules.md#inbox), in the caller's transaction: the posts'
 * removal locks and the record groups of their kept actions are locked, the tombstones stored,
 * the voided actions (removal.ts decides which) deleted from every table that keeps actions, the
 * group actors refolded, and every record of a group that lost an action computed again by one
 * set-based statement. A redelivered removal finds nothing left to void and changes nothing.
 */
export async function applyRemovals(
  client: pg.PoolClient,
  removals: readonly Removal[],
  options: {
    now: number;
    /** The write clock (WriteContext.clock): the records' changedAt is stamped once the locks are had. */
    clock?: (() => number) | undefined;
    retentionMs: number;
    /** Members whose `post` records one statement computes again (TRAY_FANOUT_BATCH). */
    membersPerStatement?: number;
    /**
     * Changed records returned at most (one part more): a deleted post of a community of millions
     * changes every member's record, about 800 bytes each, held until the commit. Past it the
     * parts' records are counted and left to be read back (`unreturned`). Default: all returned.
     */
    recordsHeld?: number;
  },
): Promise<RemovalsApplied> {
  const none = { written: [], removed: [], voided: 0, tally: EMPTY_REMOVAL_TALLY, unreturned: [] };
  if (removals.length === 0) return none;
  const postIds = [...new Set(removals.map((removal) => removal.postId))];
  const locked = new Set<string>();
  const lockGroups = async (rows: readonly ActionRow[], posts: readonly string[] = []) => {
    const keys = [...posts.map(postLock), ...rows.map((row) => groupLock(row.verb, row.target_id))].filter(
      (key) => !locked.has(key),
    );
    await lockKeys(client, keys);
    for (const key of keys) locked.add(key);
  };
  // Locked before the tombstones are stored; read again after: a write that committed meanwhile
  // may have added a group (taking its lock too is safe: a deadlock is retried whole).
  await lockGroups(await candidateActions(client, removals), postIds);
  const candidates = await candidateActions(client, removals, options);
  await lockGroups(candidates);
  const voided = candidates.filter((row) => voids(removals, row));
  if (voided.length === 0) return none;
  // The voided actions' actors are put back at their newest action left (REFOLD_ACTORS), under the
  // name that kept action holds. A deletion of one of them renames those rows under their profile's
  // lock: held shared here, before any row is touched, the removal either reads the renamed rows or
  // commits before the deletion's renames begin (which then see the rows it put back). Without it,
  // a row put back while the deletion's rename waited was never renamed: the deleted user named again.
  await lockKeys(client, [], [...new Set(voided.map((row) => row.actor_id))].map(profileLock));
  // Stamped now that the locks are held, as the fan-out is: a removal that waited seconds behind a
  // fan-out's locks would land with a stamp a stream's catch-up takes for one it had sent
  // (docs/live-tray.md#event-ids-and-resuming).
  const stampedAt = writeClock(options)();

  const groups = new Map<string, ActionRow>();
  for (const row of voided) groups.set(groupKey(row), row);
  const touched = [...groups.values()];
  // Whom each group's records belong to besides a community's members: read before the voided
  // actions go, so a group left with none still finds its records.
  const recipients = await client.query<{ recipient: string; verb: string; target_id: string }>(
    `SELECT DISTINCT t.recipient, t.verb, t.target_id
     FROM unnest($1::text[], $2::text[]) AS g(verb, target_id)
     JOIN tray_group_actions t ON t.target_id = g.target_id AND t.verb = g.verb AND t.recipient <> ''`,
    [touched.map((row) => row.verb), touched.map((row) => row.target_id)],
  );
  await client.query(DELETE_VOIDED, [
    voided.map((row) => row.target_id),
    voided.map((row) => row.verb),
    voided.map((row) => row.action_id),
    voided.map((row) => row.recipient),
    voided.map((row) => row.actor_id),
    voided.map((row) => row.community_id),
  ]);
  const replaced = await client.query<{ target_id: string; verb: string; expires_at: string }>(
    REFOLD_ACTORS,
    [voided.map((row) => row.target_id), voided.map((row) => row.verb), voided.map((row) => row.actor_id)],
  );
  await client.query(RENEW_NEWEST_ACTOR, [
    replaced.rows.map((row) => row.target_id),
    replaced.rows.map((row) => row.verb),
    replaced.rows.map((row) => row.expires_at),
  ]);
  const communities = touched.filter((row) => row.verb === 'post').map((row) => row.target_id);
  const perStatement = options.membersPerStatement ?? REMOVAL_MEMBERS_PER_STATEMENT;
  const recordsHeld = options.recordsHeld ?? Infinity;
  const written: InboxRecord[] = [];
  const removed: RemovedRecord[] = [];
  const unreturned: MemberRange[] = [];
  let tally = EMPTY_REMOVAL_TALLY;
  // The members' `post` records a part at a time (by id), each in a statement of its own in this
  // transaction, so a community of any size stays inside the statement timeout; the other
  // recipients' records with the first part (always returned: nothing is held before it).
  for (let after: string | null = null, first = true; ; first = false) {
    const through: string | null =
      communities.length === 0 ? null : await partEnd(client, communities, after, perStatement);
    const returning = written.length < recordsHeld;
    const result = await client.query<RecomputedRow>(recomputeSql(communities.length > 0), [
      touched.map((row) => row.verb),
      touched.map((row) => row.target_id),
      touched.map((row) => (row.verb === 'post' ? row.target_id : row.community_id)),
      first ? recipients.rows.map((row) => row.recipient) : [],
      first ? recipients.rows.map((row) => row.verb) : [],
      first ? recipients.rows.map((row) => row.target_id) : [],
      stampedAt,
      // The members' part, when there are members: no other statement reads them.
      ...(communities.length > 0 ? [after, through] : []),
    ]);
    const changes = result.rows.map((row) => {
      const identity = { userId: row.user_id, key: row.key };
      const before = recordCounts({
        actorsCount: row.old_count,
        actors: row.old_actors,
        lastActionId: row.old_last,
      });
      const record = row.rec ? toInboxRecord(row.rec) : undefined;
      if (!record) removed.push(identity);
      else if (returning) written.push(record);
      return removalChange(identity, before, record && recordCounts(record));
    });
    tally = tallyRemovalChanges(changes, tally);
    if (!returning) unreturned.push({ after, through });
    if (through === null) break;
    after = through;
  }
  return {
    written,
    removed,
    voided: voided.length,
    tally,
    unreturned:
      unreturned.length === 0
        ? []
        : communities.map((communityId) => ({
            communityId,
            verb: 'post',
            targetId: communityId,
            ranges: unreturned,
            since: stampedAt,
          })),
  };
}
