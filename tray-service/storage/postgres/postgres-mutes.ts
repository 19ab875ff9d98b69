import type pg from 'pg';
import { DAY_MS } from '../../../shared/time/durations.ts';
import type { Mute, MuteTargetType } from '../../domain/mute.ts';
import type { MuteTarget } from '../../domain/mute-changes.ts';
import type { InboxPort } from '../port.ts';
import { MUTE_END } from './held-back-sql.ts';
import { inTransaction } from './in-transaction.ts';
import { lockKeys, muteLock } from './lock-keys.ts';

/** A span still in force with no end of its own is kept until it ends (bigint's largest value). */
const NEVER = '9223372036854775807';

export const MUTE_COLUMNS = 'user_id, target_type, target_id, created_at, until_at, removed_at';

/** The user $1's spans in force at the parameter `at` (domain/mute.ts muteInForceAt). */
const inForceAt = (at: string) => `user_id = $1 AND created_at <= ${at}
  AND (until_at IS NULL OR until_at > ${at}) AND (removed_at IS NULL OR removed_at > ${at})`;

/**
 * When a PUT or DELETE of ($2, $3) asked at $4 takes effect: never before the target's latest span
 * start or removal (domain/mute-changes.ts muteChangeTime). Read under the user's lock.
 */
async function changeTime(client: pg.PoolClient, userId: string, target: MuteTarget, now: number) {
  // GREATEST ignores NULLs: a span not removed counts by its start, no span at all leaves `now`.
  const { rows } = await client.query<{ at: string }>(
    `SELECT GREATEST($4::bigint, max(GREATEST(created_at, removed_at)))::text AS at FROM tray_mutes
     WHERE user_id = $1 AND target_type = $2 AND target_id = $3`,
    [userId, target.targetType, target.targetId, now],
  );
  return Number(rows[0]?.at ?? now);
}

/** The span of the user's mute of ($2, $3) in force at $4. */
const IN_FORCE = `target_type = $2 AND target_id = $3 AND ${inForceAt('$4')}`;

export interface MuteRow {
  user_id: string;
  target_type: string;
  target_id: string;
  created_at: string;
  until_at: string | null;
  removed_at: string | null;
}

export function toMute(row: MuteRow): Mute {
  return {
    userId: row.user_id,
    targetType: row.target_type as MuteTargetType,
    targetId: row.target_id,
    createdAt: Number(row.created_at),
    until: row.until_at === null ? null : Number(row.until_at),
    removedAt: row.removed_at === null ? null : Number(row.removed_at),
  };
}

/**
 * Mutes in tray_mutes (migrations/0005_inbox.sql), one row per span, each statement on the
 * primary key; a PUT and a DELETE run under the user's advisory lock (lock-keys.ts muteLock), so
 * they act one after another. A span is kept `retentionDays` after it ends, so deliveries dated
 * inside it stay held back for as long as records live.
 */
export function createPostgresMutes(
  pool: pg.Pool,
): Pick<InboxPort, 'putMute' | 'removeMute' | 'mutesInForce'> {
  return {
    async putMute(
      userId,
      target: MuteTarget,
      until,
      requestedAt,
      retentionDays,
      maxInForce,
      maxSpansPerTarget,
      maxSpansPerUser,
    ) {
      const keep = retentionDays * DAY_MS;
      return inTransaction(pool, async (client) => {
        // The count below and the insert are read committed: two PUTs of one user at once would
        // each count without the other's new span and both go past the limit. The user's lock,
        // held until commit, makes the second count after the first committed.
        await lockKeys(client, [muteLock(userId)]);
        const now = await changeTime(client, userId, target, requestedAt);
        // One statement: the span in force gets the new end; without one a new span starts now,
        // if fewer than $7 are in force (counted up to $7, on the primary key's user prefix).
        const result = await client.query<MuteRow>(
          `WITH current AS (
             UPDATE tray_mutes SET until_at = $5,
               expires_at = CASE WHEN $5::bigint IS NULL THEN ${NEVER} ELSE $5::bigint + $6 END
             WHERE ${IN_FORCE}
             RETURNING ${MUTE_COLUMNS}),
           in_force AS (
             SELECT count(*) AS n FROM (
               SELECT 1 FROM tray_mutes
               WHERE ${inForceAt('$4')}
               LIMIT $7) AS counted),
           kept AS (
             SELECT count(*) AS n FROM (
               SELECT 1 FROM tray_mutes m
               WHERE m.user_id = $1 AND m.target_type = $2 AND m.target_id = $3
                 -- In force or ended within the retention (domain/mute.ts countsTowardSpanLimit).
                 AND ${MUTE_END} > $4::bigint - $6
               LIMIT $8) AS counted),
           -- The user's spans of any targets in force or ended within the retention, by their end
           -- (on the primary key's user prefix): not by their expiry, which the purge moves past
           -- the retention while a record of the user counts from before the end.
           kept_by_user AS (
             SELECT count(*) AS n FROM (
               SELECT 1 FROM tray_mutes m WHERE m.user_id = $1 AND ${MUTE_END} > $4::bigint - $6
               LIMIT $9) AS counted),
           started AS (
             INSERT INTO tray_mutes (user_id, target_type, target_id, created_at, until_at, removed_at, expires_at)
             SELECT $1, $2, $3, $4, $5, NULL,
                    CASE WHEN $5::bigint IS NULL THEN ${NEVER} ELSE $5::bigint + $6 END
             WHERE NOT EXISTS (SELECT 1 FROM current) AND (SELECT n FROM in_force) < $7
               AND (SELECT n FROM kept) < $8 AND (SELECT n FROM kept_by_user) < $9
             -- Removed at this very millisecond and put again: the span goes on.
             ON CONFLICT (user_id, target_type, target_id, created_at) DO UPDATE
               SET until_at = excluded.until_at, removed_at = NULL, expires_at = excluded.expires_at
             RETURNING ${MUTE_COLUMNS})
           SELECT * FROM current UNION ALL SELECT * FROM started`,
          [
            userId,
            target.targetType,
            target.targetId,
            now,
            until,
            keep,
            maxInForce,
            // bigint's largest: no limit (LIMIT takes it as a count).
            Number.isFinite(maxSpansPerTarget ?? Infinity) ? maxSpansPerTarget : NEVER,
            Number.isFinite(maxSpansPerUser ?? Infinity) ? maxSpansPerUser : NEVER,
          ],
        );
        const [row] = result.rows;
        if (row) return toMute(row);
        // Neither updated nor inserted: no span in force, and a limit reached. Which one is read
        // under the same lock, so nothing of the user's changed since.
        const reached = await client.query<{ in_force: boolean; of_target: boolean }>(
          `SELECT
             (SELECT count(*) >= $3 FROM (
                SELECT 1 FROM tray_mutes WHERE ${inForceAt('$2')} LIMIT $3) AS counted) AS in_force,
             (SELECT count(*) >= $7 FROM (
                SELECT 1 FROM tray_mutes m
                WHERE m.user_id = $1 AND m.target_type = $4 AND m.target_id = $5 AND ${MUTE_END} > $2::bigint - $6
                LIMIT $7) AS counted) AS of_target`,
          [
            userId,
            now,
            maxInForce,
            target.targetType,
            target.targetId,
            keep,
            Number.isFinite(maxSpansPerTarget ?? Infinity) ? maxSpansPerTarget : NEVER,
          ],
        );
        const row0 = reached.rows[0];
        if (row0?.in_force) return 'too many';
        return row0?.of_target ? 'too many spans' : 'too many user spans';
      });
    },

    removeMute(userId, target, requestedAt, retentionDays) {
      return inTransaction(pool, async (client) => {
        // The user's lock, as a PUT takes it: a PUT whose statement began before this removal
        // committed would find the span no longer in force, yet count it in force by its snapshot
        // and answer 'too many' at the limit, which neither order of the two answers.
        await lockKeys(client, [muteLock(userId)]);
        const now = await changeTime(client, userId, target, requestedAt);
        const result = await client.query(
          `UPDATE tray_mutes SET removed_at = $4, expires_at = $4::bigint + $5 WHERE ${IN_FORCE}`,
          [userId, target.targetType, target.targetId, now, retentionDays * DAY_MS],
        );
        return (result.rowCount ?? 0) > 0;
      });
    },

    async mutesInForce(userId, now) {
      const result = await pool.query<MuteRow>(
        `SELECT ${MUTE_COLUMNS} FROM tray_mutes
         WHERE ${inForceAt('$2')}
         ORDER BY created_at, target_type, target_id`,
        [userId, now],
      );
      return result.rows.map(toMute);
    },
  };
}
