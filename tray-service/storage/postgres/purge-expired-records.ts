import type pg from 'pg';
import { purgeEach, type PurgeOutcome } from '../purge-each.ts';
import { purgeInBatches, type ExpiringTable } from './purge-in-batches.ts';
import {
  keptByGroup,
  keptByThread,
  keptByUserRecords,
  purgeKeptInBatches,
  type KeptTable,
} from './purge-kept-in-batches.ts';

/** Rows deleted per statement: short statements, short locks, bounded WAL per transaction. */
export const PURGE_RECORDS_BATCH = 1_000;

/**
 * How long past its expiry a row is kept before the purge deletes it. The grouped upsert UPDATEs a
 * record its snapshot read as live and never re-inserts it (so one delete-all removed meanwhile
 * stays deleted), and counts a group's actors and kept actions from whatever rows are there. A
 * purge whose clock runs ahead of a writer's (another instance, a `now` taken before the statement)
 * would delete rows that writer still reads as live: the record with the new action, or actors it
 * still counts. The margin dwarfs any such skew; readers skip expired rows, so it only delays
 * reclaiming space.
 */
export const PURGE_GRACE_MS = 3_600_000;

/**
 * Each table of the tray's retention: by its primary key (how a batch names its rows) the tables
 * whose rows go at their own expiry; the kept actions and group actors by their record group, the
 * removals' tombstones by their post's thread and community, and the mute spans by their owner's
 * records, which live as long as a record built from or judged by them can
 * (purge-kept-in-batches.ts). Records and kept actions go first: what they kept alive is judged
 * without them. `needs`: the steps that must have run first (purgeEach).
 */
const EXPIRING: readonly ((ExpiringTable | KeptTable) & { needs?: readonly string[] })[] = [
  { table: 'tray_records', key: 'user_id, key' },
  keptByGroup('tray_target_actors', 'x.target_id', 'x.verb'),
  // A community's posts are the group of its `post` records (the community is their target).
  keptByGroup('tray_community_posts', 'x.community_id', "'post'"),
  keptByGroup('tray_personal_actions', 'x.target_id', 'x.verb'),
  keptByGroup('tray_group_actions', 'x.target_id', 'x.verb'),
  // A tombstone is kept until its thread's kept actions expire, which their steps move out to
  // their group's expiry: after one of those failed, it could go while its group still lives.
  { ...keptByThread('tray_removals'), needs: ['tray_target_actors', 'tray_group_actions'] },
  { table: 'tray_removal_outcomes', key: 'event_key' },
  { table: 'tray_removal_changes', key: 'event_key, user_id, key' },
  // An ended span (until or removal; least() passes over the one that is NULL).
  keptByUserRecords('tray_mutes', 'least(x.until_at, x.removed_at)'),
];

/**
 * Deletes what expired PURGE_GRACE_MS before `now`: records (TRAY_RETENTION_DAYS after their lastUpdate), the group
 * actors, community posts, kept personal and group actions (once their group's newest actor expired
 * too), removals' tombstones (once nothing could take what they void again) and ended mute spans
 * (once no record they judge lives). Readers already skip expired records, so the
 * purge only reclaims space and may leave a row being written for the next run. Each table is
 * purged on its own, past one that fails (purgeEach); returns how many records went, and the
 * tables that failed.
 */
export async function purgeExpiredRecords(
  pool: pg.Pool,
  now: Date,
  batch = PURGE_RECORDS_BATCH,
): Promise<PurgeOutcome> {
  const at = now.getTime() - PURGE_GRACE_MS;
  return purgeEach(
    EXPIRING.map((expiring) => ({
      table: expiring.table,
      ...(expiring.needs ? { needs: expiring.needs } : {}),
      purge: () =>
        'keptUntil' in expiring
          ? purgeKeptInBatches(pool, expiring, at, batch)
          : purgeInBatches(pool, expiring, at, batch),
    })),
    'tray_records',
  );
}
