import pg from 'pg';
import { connectMongo } from '../../../shared/mongo/connect-mongo.ts';
import {
  TRAY_RECORDS,
  MEMBERSHIP_CHANGES,
  TRAY_TARGET_ACTIONS,
} from '../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { recordGroup } from '../../../tray-service/storage/mongodb/records/storage-keys.ts';
import type { TrayMismatch } from './check-tray-against-model.ts';
import type { StorageTarget } from './storage-target.ts';

/** What one mismatching `post` record stands on, as the adapter holds it. */
interface Evidence {
  key: string;
  record: unknown;
  /** The member's joins and leaves: [at, joined, place in the processing order (MongoDB)]. */
  changes: unknown[];
  /** The community's kept posts: [actor, at, audience kind, action id, place (MongoDB)]. */
  kept: unknown[];
}

/** `post_<community>_<user>` of the bursts' ids (which hold no `_`), else undefined. */
function postRecordOf(key: string): { communityId: string; userId: string } | undefined {
  const [verb, communityId, userId, ...rest] = key.split('_');
  return verb === 'post' && communityId && userId && rest.length === 0 ? { communityId, userId } : undefined;
}

/**
 * Prints, for each mismatching `post` record, what the adapter holds beneath it: the record, the
 * member's joins and leaves, and the community's kept posts. A mismatch seen once in many runs
 * (a race under faults) then explains itself from the run's own log. Reads the adapter's own
 * tables or collections: evidence for a person, never an assertion.
 */
export async function printMismatchEvidence(
  target: StorageTarget,
  mismatches: readonly (TrayMismatch | object)[],
): Promise<void> {
  const keys = mismatches.flatMap((mismatch) =>
    'key' in mismatch && typeof mismatch.key === 'string' ? [mismatch.key] : [],
  );
  const records = [...new Set(keys)].flatMap((key) => {
    const found = postRecordOf(key);
    return found ? [{ key, ...found }] : [];
  });
  if (records.length === 0) return;
  const evidence: Evidence[] = [];
  if (target.engine === 'mongodb') {
    const { client, db } = await connectMongo(target.uri, target.db, { appName: 'reliability-evidence' });
    try {
      for (const { key, communityId, userId } of records) {
        evidence.push({
          key,
          record: await db.collection(TRAY_RECORDS).findOne(
            { userId, verb: 'post', targetId: communityId },
            {
              projection: {
                actors: 1,
                actorsCount: 1,
                countFrom: 1,
                lastUpdate: 1,
                version: 1,
                changedAt: 1,
              },
            },
          ),
          changes: (await db.collection(MEMBERSHIP_CHANGES).find({ communityId, userId }).toArray()).map(
            (change) => [change.at, change.joined, change.processed],
          ),
          kept: (
            await db
              .collection(TRAY_TARGET_ACTIONS)
              .find({ group: recordGroup('post', communityId) })
              .toArray()
          ).map((action) => [
            action.activity?.actor?.userId,
            action.at,
            action.activity?.audience?.kind,
            action.activity?.lastActionId,
            action.processed,
          ]),
        });
      }
    } finally {
      await client.close();
    }
  } else {
    const pool = new pg.Pool({ connectionString: target.url, max: 1 });
    try {
      for (const { key, communityId, userId } of records) {
        const record = await pool.query(
          `SELECT actors, actors_count, count_from, last_update, changed_at FROM tray_records
           WHERE user_id = $1 AND verb = 'post' AND target_id = $2`,
          [userId, communityId],
        );
        const changes = await pool.query(
          'SELECT at, joined FROM tray_membership_changes WHERE community_id = $1 AND user_id = $2',
          [communityId, userId],
        );
        const kept = await pool.query(
          'SELECT actor_id, at FROM tray_community_posts WHERE community_id = $1',
          [communityId],
        );
        evidence.push({
          key,
          record: record.rows[0],
          changes: changes.rows.map((row) => [row.at, row.joined]),
          kept: kept.rows.map((row) => [row.actor_id, row.at]),
        });
      }
    } finally {
      await pool.end();
    }
  }
  for (const one of evidence)
    process.stderr.write(`[reliability] mismatch evidence ${JSON.stringify(one)}\n`);
}
