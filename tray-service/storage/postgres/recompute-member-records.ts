import type pg from 'pg';
import type { InboxRecord } from '../../domain/inbox-record.ts';
import type { RemovedRecord } from '../port.ts';
import { exactActorsOfRow } from './exact-actors-sql.ts';
import { groupLock, lockKeys } from './lock-keys.ts';
import type { Member } from './postgres-memberships.ts';
import { INBOX_COLUMNS_OF_T, toInboxRecord, type InboxRow } from './inbox-row.ts';

/** The members' records of their communities' targets: their `post` record and those their kept actions name. */
const RECORDS_OF_MEMBERS = `m AS (SELECT DISTINCT * FROM unnest($1::text[], $2::text[]) AS m(community_id, user_id)),
  k AS (SELECT m.user_id, m.community_id, 'post'::text AS verb, m.community_id AS target_id FROM m
        UNION
        SELECT pa.user_id, pa.community_id, pa.verb, pa.target_id
        FROM m JOIN tray_personal_actions pa ON pa.user_id = m.user_id AND pa.community_id = m.community_id)`;

/**
 * After a leave (docs/tray-rules.md#leaving-and-rejoining-a-community), computes each member's
 * unexpired records of the community's targets again from the kept actions, leaving out their
 * away time and what their mutes held back (exact-actors-sql.ts): actors who acted only then go,
 * a record whose latest action fell then takes its latest fields from its newest remaining
 * action, and a record with none left is deleted. A change is written with changedAt `now` but
 * keeps the read flag and unreadAt: nothing new happened.
 *
 * Locks the record groups first (lock-keys.ts), so a write of the same groups that began before
 * the leave's away spans were stored is done before this reads, and one that begins after sees
 * them. Runs in the caller's transaction; returns the records changed and those deleted (live
 * streams are told of both once it commits, as of a removal's).
 */
export async function recomputeMemberRecords(
  client: pg.PoolClient,
  members: readonly Member[],
  options: { now: number; retentionMs: number },
): Promise<{ written: InboxRecord[]; removed: RemovedRecord[] }> {
  if (members.length === 0) return { written: [], removed: [] };
  const communities = members.map((member) => member.communityId);
  const users = members.map((member) => member.userId);
  const groups = await client.query<{ verb: string; target_id: string }>(
    `WITH ${RECORDS_OF_MEMBERS} SELECT DISTINCT verb, target_id FROM k`,
    [communities, users],
  );
  await lockKeys(
    client,
    groups.rows.map((row) => groupLock(row.verb, row.target_id)),
  );
  const exact = exactActorsOfRow('r');
  const result = await client.query<InboxRow & { gone_user_id: string; gone_key: string | null }>(
    `WITH ${RECORDS_OF_MEMBERS},
     r AS (SELECT t.*, k.community_id FROM k
           JOIN tray_records t ON t.user_id = k.user_id AND t.key = tray_record_key(k.verb, k.target_id, k.user_id)
           WHERE t.expires_at > $3),
     -- The exact count once per record (OFFSET 0 keeps it from being inlined into each use below).
     x AS (SELECT r.user_id, r.key, e.exact,
                  EXISTS (SELECT 1 FROM tray_member_away a
                          WHERE a.community_id = r.community_id AND a.user_id = r.user_id
                            AND a.from_at <= coalesce(r.last_action_at, r.last_update)
                            AND coalesce(r.last_action_at, r.last_update) < a.to_at) AS latest_away
           FROM r CROSS JOIN LATERAL (SELECT ${exact} AS exact OFFSET 0) AS e),
     y AS (SELECT x.user_id, x.key, x.exact->'actors' AS actors, (x.exact->>'count')::int AS actors_count,
                  CASE WHEN x.latest_away THEN (x.exact->'newest')::jsonb END AS newest
           FROM x),
     gone AS (DELETE FROM tray_records t USING y
              WHERE t.user_id = y.user_id AND t.key = y.key AND y.actors_count = 0
              RETURNING t.user_id, t.key),
     changed AS (UPDATE tray_records t SET
       actors = y.actors, actors_count = y.actors_count,
       target_name = coalesce(y.newest->>'targetName', t.target_name),
       parent_target_id = CASE WHEN y.newest IS NULL THEN t.parent_target_id ELSE y.newest->>'parentTargetId' END,
       last_action_id = coalesce(y.newest->>'lastActionId', t.last_action_id),
       last_action_segment_no = CASE WHEN y.newest IS NULL THEN t.last_action_segment_no
                                     ELSE (y.newest->>'lastActionSegmentNo')::bigint END,
       feed = coalesce((y.newest->'feed')::json, t.feed),
       mention_in = CASE WHEN y.newest IS NULL THEN t.mention_in ELSE y.newest->>'mentionIn' END,
       -- A removal's floor holds: lastUpdate never goes below what the removal left.
       last_update = greatest(coalesce((y.newest->>'at')::bigint, t.last_update), t.update_floor),
       last_action_at = CASE WHEN y.newest IS NULL THEN t.last_action_at
                             ELSE nullif((y.newest->>'at')::bigint, greatest((y.newest->>'at')::bigint, t.update_floor)) END,
       expires_at = greatest(coalesce((y.newest->>'at')::bigint, t.last_update), t.update_floor) + $4,
       changed_at = GREATEST(t.changed_at + 1, $3)
     FROM y
     WHERE t.user_id = y.user_id AND t.key = y.key AND y.actors_count > 0
       AND (y.newest IS NOT NULL OR t.actors::text <> y.actors::text OR t.actors_count <> y.actors_count)
     RETURNING ${INBOX_COLUMNS_OF_T})
     -- Both in one result: a record is either changed or gone, never both, so each row holds one
     -- of them (a deleted record's row only its gone_user_id and gone_key).
     SELECT c.*, g.user_id AS gone_user_id, g.key AS gone_key
     FROM changed c FULL JOIN gone g ON g.user_id = c.user_id AND g.key = c.key`,
    [communities, users, options.now, options.retentionMs],
  );
  const written: InboxRecord[] = [];
  const removed: RemovedRecord[] = [];
  for (const row of result.rows)
    if (row.gone_key === null) written.push(toInboxRecord(row));
    else removed.push({ userId: row.gone_user_id, key: row.gone_key });
  return { written, removed };
}
