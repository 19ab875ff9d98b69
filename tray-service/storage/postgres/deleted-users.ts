import type pg from 'pg';
import type { InboxRecord } from '../../domain/inbox-record.ts';
import { DELETED_USER_NAME } from '../../domain/activity.ts';
import { deletedActorSql } from './deleted-actor-sql.ts';
import { INBOX_COLUMNS_OF_T, toInboxRecord, type InboxRow } from './inbox-row.ts';
import { postHoldersSql } from './postgres-memberships.ts';

/** Members of a community read per page, and so records rewritten per statement. */
export const DELETED_USER_PAGE = 5_000;

/**
 * A deleted user's snapshots in the kept personal actions and community posts, rewritten to
 * `Deleted user` (deleted-actor-sql.ts). Neither table has an index by actor (each comment would
 * pay one more insertion), so the rows are found through the user's kept actions, which every
 * action of theirs on a community's target is mirrored in (tray_group_actions_actor), and reached
 * by their primary keys: no table is read whole, however large.
 */
export async function renameKeptActivities(
  client: pg.Pool | pg.PoolClient,
  ids: readonly string[],
): Promise<void> {
  await client.query(
    `UPDATE tray_personal_actions t SET activity = jsonb_set(t.activity, '{actor}', ${deletedActorSql('t.actor_id')})
     FROM (SELECT DISTINCT recipient, community_id, verb, target_id, actor_id, action_id
           FROM tray_group_actions WHERE actor_id = ANY($1::text[]) AND recipient <> '' AND community_id IS NOT NULL) g
     WHERE t.user_id = g.recipient AND t.community_id = g.community_id AND t.verb = g.verb
       AND t.target_id = g.target_id AND t.actor_id = g.actor_id AND t.action_id = g.action_id
       AND t.activity->'actor' <> ${deletedActorSql('t.actor_id')}`,
    [ids],
  );
  // Every kept post of theirs in each community they have one kept action of a post in: by the
  // primary key's community_id. Migration 0006 kept only each author's latest post as an action,
  // so older kept posts of theirs have none of their own.
  await client.query(
    `UPDATE tray_community_posts t SET activity = jsonb_set(t.activity, '{actor}', ${deletedActorSql('t.actor_id')})
     FROM (SELECT DISTINCT target_id
           FROM tray_group_actions WHERE actor_id = ANY($1::text[]) AND verb = 'post' AND recipient = '') g
     WHERE t.community_id = g.target_id AND t.actor_id = ANY($1::text[])
       AND t.activity->'actor' <> ${deletedActorSql('t.actor_id')}`,
    [ids],
  );
}

/**
 * The records (by user_id and key, from the subquery `keys`, whose own parameters are `$4` on,
 * `keyParams`) whose actors name a deleted user (`ids`) as before, rewritten to `Deleted user`
 * without images, marked deleted, each `at` kept; their changed_at moves. Returns them.
 */
async function renameRecords(
  pool: pg.Pool,
  ids: readonly string[],
  now: number,
  keys: string,
  keyParams: readonly unknown[],
): Promise<InboxRecord[]> {
  const { rows } = await pool.query<InboxRow>(
    `UPDATE tray_records t SET changed_at = GREATEST(t.changed_at + 1, $3), actors = (
       SELECT jsonb_agg(CASE WHEN e->>'userId' = ANY($1::text[])
                             THEN jsonb_build_object('userId', e->'userId', 'name', $2::text, 'deleted', true,
                                                     'at', e->'at')
                             ELSE e END ORDER BY o)::json
       FROM jsonb_array_elements(t.actors::jsonb) WITH ORDINALITY AS x(e, o))
     FROM (${keys}) n
     WHERE t.user_id = n.user_id AND t.key = n.key
       AND EXISTS (SELECT 1 FROM jsonb_array_elements(t.actors::jsonb) AS e
                   WHERE e->>'userId' = ANY($1::text[])
                     AND e - 'at' <> jsonb_build_object('userId', e->'userId', 'name', $2::text, 'deleted', true))
     RETURNING ${INBOX_COLUMNS_OF_T}`,
    [ids, DELETED_USER_NAME, now, ...keyParams],
  );
  return rows.map(toInboxRecord);
}

/**
 * Records of actions kept before migration 0006, which copied each actor's latest action of a
 * record group without whom it reached (recipient '' for every verb, where it now means a
 * community's post only): the record of such a comment or reaction cannot be told from the kept
 * action. Only when the deleted users have one, the records are read whole, `page` primary keys at
 * a time (each statement well inside the statement timeout), passing over a record whose actors'
 * text holds none of the ids before parsing it.
 */
async function renameLegacyRecords(
  pool: pg.Pool,
  ids: readonly string[],
  now: Stamp,
  told: (records: InboxRecord[]) => Promise<void>,
  page: number,
): Promise<void> {
  const legacy = await pool.query(
    `SELECT 1 FROM tray_group_actions WHERE actor_id = ANY($1::text[]) AND recipient = '' AND verb <> 'post' LIMIT 1`,
    [ids],
  );
  if (legacy.rowCount === 0) return;
  let after = { user: '', key: '' };
  for (;;) {
    const keys = await pool.query<{ user_id: string; key: string }>(
      `SELECT user_id, key FROM tray_records WHERE (user_id, key) > ($1, $2) ORDER BY user_id, key LIMIT $3`,
      [after.user, after.key, page],
    );
    const last = keys.rows[keys.rows.length - 1];
    if (!last) return;
    await told(
      await renameRecords(
        pool,
        ids,
        stampOf(now),
        `SELECT k.user_id, k.key FROM unnest($4::text[], $5::text[]) AS k(user_id, key)
         JOIN tray_records c ON c.user_id = k.user_id AND c.key = k.key
         WHERE EXISTS (SELECT 1 FROM unnest($1::text[]) AS id WHERE strpos(c.actors::text, id) > 0)`,
        [keys.rows.map((row) => row.user_id), keys.rows.map((row) => row.key)],
      ),
    );
    if (keys.rows.length < page) return;
    after = { user: last.user_id, key: last.key };
  }
}

/**
 * The change time a rewrite stamps: a time, or the write clock read at each statement, so a
 * rename that waited behind other writers, or runs many pages, lands within a live stream's settle
 * window of when it is written (docs/live-tray.md#event-ids-and-resuming).
 */
export type Stamp = number | (() => number);

const stampOf = (now: Stamp) => (typeof now === 'function' ? now() : now);

/**
 * Rewrites a deleted user's snapshots in every record that names them and hands each batch of
 * rewritten records to `told`. A record names a user only while it counts an action of theirs,
 * and every counted action is kept (tray_group_actions, by tray_group_actions_actor): one addressed
 * to one user is that user's record of its group (`page` records a statement); a community post,
 * every member's `post` record of the community (postHoldersSql, by the primary keys, a page at a
 * time). So the statements read the records named, never the whole table, which the statement
 * timeout would stop at a few million records. A record expired with its whole group (its kept
 * actions purged) keeps the name until the purge deletes it; no reader returns it meanwhile.
 */
export async function renameInRecords(
  pool: pg.Pool,
  ids: readonly string[],
  now: Stamp,
  told: (records: InboxRecord[]) => Promise<void>,
  page = DELETED_USER_PAGE,
): Promise<void> {
  // The records their personal actions reached: the keys read at once (by tray_group_actions_actor,
  // a hundred bytes or so each), the records rewritten `page` at a time. One statement for all of
  // them met the statement timeout for a prolific account on every retry of the deletion.
  const reached = await pool.query<{ user_id: string; key: string }>(
    `SELECT DISTINCT recipient AS user_id, tray_record_key(verb, target_id, recipient) AS key
     FROM tray_group_actions WHERE actor_id = ANY($1::text[]) AND recipient <> '' ORDER BY 1, 2`,
    [ids],
  );
  for (let start = 0; start < reached.rows.length; start += page) {
    const part = reached.rows.slice(start, start + page);
    await told(
      await renameRecords(
        pool,
        ids,
        stampOf(now),
        `SELECT k.user_id, k.key FROM unnest($4::text[], $5::text[]) AS k(user_id, key)`,
        [part.map((row) => row.user_id), part.map((row) => row.key)],
      ),
    );
  }
  await renameLegacyRecords(pool, ids, now, told, page);
  const communities = await pool.query<{ community_id: string }>(
    `SELECT DISTINCT target_id AS community_id FROM tray_group_actions
     WHERE actor_id = ANY($1::text[]) AND verb = 'post' AND recipient = ''`,
    [ids],
  );
  // The members a fan-out reaches and those a join or leave processed after a post left holding it
  // (postHoldersSql), imported ones included (an import refolds its members).
  for (const { community_id: communityId } of communities.rows) {
    let after = '';
    for (;;) {
      const members = await pool.query<{ user_id: string }>(
        postHoldersSql('$1', { after: '$2', limit: '$3' }),
        [communityId, after, page],
      );
      const users = members.rows.map((row) => row.user_id);
      if (users.length > 0)
        await told(
          await renameRecords(
            pool,
            ids,
            stampOf(now),
            `SELECT u AS user_id, tray_record_key('post', $4::text, u) AS key FROM unnest($5::text[]) AS u`,
            [communityId, users],
          ),
        );
      if (users.length < page) break;
      after = users[users.length - 1] as string;
    }
  }
}
