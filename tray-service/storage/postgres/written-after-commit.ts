import type pg from 'pg';
import { recordKey } from '../../domain/activity.ts';
import type { InboxRecord } from '../../domain/inbox-record.ts';
import type { TrayVerb } from '../../domain/tray-record.ts';
import { INBOX_COLUMNS, INBOX_COLUMNS_OF_T, toInboxRecord, type InboxRow } from './inbox-row.ts';
import { isPostgresUnavailable } from './postgres-unavailable.ts';
import { postHoldersSql } from './postgres-memberships.ts';
import { inTransaction } from './in-transaction.ts';
import { withRetry } from './with-retry.ts';

/** lock_not_available: lock_timeout ran out. */
const LOCK_NOT_AVAILABLE = '55P03';

/** Tries of one read-back statement, the waits doubling from READ_AGAIN_FIRST_MS (about 6 s in all). */
const READ_TRIES = 6;
const READ_AGAIN_FIRST_MS = 200;

/**
 * Failures a read-back statement can bring on itself (its own timeout, lock wait or memory): run
 * again, each would wait as long once more, with the job's fan-out slot held.
 */
const OWN_FAILURES = new Set(['57014', '55P03', '53200', '53000']);

/** A connection lost or not made, a server restarting or full of connections: may pass at once. */
const passes = (error: unknown) =>
  isPostgresUnavailable(error) && !OWN_FAILURES.has(String((error as { code?: unknown }).code));

/**
 * A read-back statement, run again while PostgreSQL cannot serve it (a lost connection, a
 * restart): the records are committed, so a job failed here would be retried, write nothing new
 * and tell nothing, and the members' open streams would miss them.
 */
async function readAgain<T extends pg.QueryResultRow>(
  pool: pg.Pool,
  text: string,
  params: unknown[],
): Promise<T[]> {
  const found = await withRetry(() => pool.query<T>(text, params), {
    attempts: READ_TRIES,
    retryable: passes,
    pauseMs: (tried) => READ_AGAIN_FIRST_MS * 2 ** (tried - 1),
  });
  return found.rows;
}

/** A part of a community's members by id: after `after` (none: from the first) through `through` (none: to the last). */
export interface MemberRange {
  after: string | null;
  through: string | null;
}

/**
 * What a fan-out or a removal wrote without returning it: its group's records of the members in
 * `ranges`, stamped `since` or later. A fan-out to a community of millions held every record it
 * wrote (about 800 bytes each) from its first statement until its commit, and so did the deletion
 * of its post, so past a bound their later parts return nothing and are read back after the
 * commit, a batch at a time (writtenAfterCommit).
 */
export interface UnreturnedParts {
  communityId: string;
  verb: TrayVerb;
  targetId: string;
  ranges: MemberRange[];
  since: number;
}

/** (user, key) pairs of records, as two arrays for unnest. */
export interface RecordPairs {
  userIds: readonly string[];
  keys: readonly string[];
}

/** How long stamping anew waits for a record another transaction holds: a mark holds it for milliseconds. */
const RESTAMP_LOCK_WAIT_MS = 200;

const RESTAMP = (locking: string) => `WITH free AS (
     SELECT t.user_id, t.key FROM tray_records t
     JOIN unnest($1::text[], $2::text[]) AS k (user_id, key) USING (user_id, key)
     WHERE t.changed_at >= $3 ORDER BY t.user_id, t.key FOR UPDATE OF t ${locking})
   UPDATE tray_records t SET changed_at = GREATEST(t.changed_at + 1, $4)
   FROM free WHERE t.user_id = free.user_id AND t.key = free.key
   RETURNING ${INBOX_COLUMNS_OF_T}`;

/** The records of the pairs changed at or after `since`, as readers now see them. */
async function readPairs(pool: pg.Pool, pairs: RecordPairs, since: number): Promise<InboxRecord[]> {
  // Pairs joined to the primary key, one index probe each (`= ANY` on both columns would probe
  // every user with every key).
  const rows = await readAgain<InboxRow>(
    pool,
    `SELECT ${INBOX_COLUMNS} FROM tray_records
     JOIN unnest($1::text[], $2::text[]) AS k (user_id, key) USING (user_id, key)
     WHERE changed_at >= $3`,
    [pairs.userIds, pairs.keys, since],
  );
  return rows.map(toInboxRecord);
}

/**
 * The records of the pairs changed at or after `since`, stamped anew at `at` (their changed_at
 * alone, a millisecond past their own where `at` is not later), as readers now see them: what a
 * write tells later than a stream's settle window after its stamp (tellWritten). Records another
 * transaction holds are skipped at first, then waited for RESTAMP_LOCK_WAIT_MS (a mark's: it would
 * announce only the mark, to a stream that never had the record); those held longer (a fan-out of
 * the same group, which stamps and tells them itself when it lands) are read as they are.
 */
export async function restamped(
  pool: pg.Pool,
  pairs: RecordPairs,
  since: number,
  at: number,
): Promise<InboxRecord[]> {
  const free = (
    await readAgain<InboxRow>(pool, RESTAMP('SKIP LOCKED'), [pairs.userIds, pairs.keys, since, at])
  ).map(toInboxRecord);
  const got = new Set(free.map((record) => `${record.userId}\u0000${record.key}`));
  const left: { userIds: string[]; keys: string[] } = { userIds: [], keys: [] };
  pairs.userIds.forEach((userId, index) => {
    const key = pairs.keys[index] ?? '';
    if (got.has(`${userId}\u0000${key}`)) return;
    left.userIds.push(userId);
    left.keys.push(key);
  });
  if (left.userIds.length === 0) return free;
  try {
    const waited = await inTransaction(pool, async (client) => {
      await client.query(`SET LOCAL lock_timeout = ${RESTAMP_LOCK_WAIT_MS}`);
      return (await client.query<InboxRow>(RESTAMP(''), [left.userIds, left.keys, since, at])).rows;
    });
    return [...free, ...waited.map(toInboxRecord)];
  } catch (error) {
    if ((error as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw error;
    return [...free, ...(await readPairs(pool, left, since))];
  }
}

/**
 * restamped, or `asIs` when stamping anew fails (its statement timed out behind a large write, say):
 * the records are committed, and told as they are they reach the streams open now, where a failure
 * would fail the job after its commit and its retry would tell nothing.
 */
export async function restampedOr(
  pool: pg.Pool,
  pairs: RecordPairs,
  since: number,
  at: number,
  asIs: () => Promise<InboxRecord[]>,
): Promise<InboxRecord[]> {
  try {
    return await restamped(pool, pairs, since, at);
  } catch {
    return asIs();
  }
}

/**
 * The records of `parts`, as readers now see them, `batch` members at a time: each member with a
 * membership row or an away span in a range (a member who left since still has one), their record
 * of the group if it changed at or after the write's stamp. A record changed since by a later write is read as
 * that write left it, which it announces too. `stampAnew`, asked before each batch: a time when the
 * batch is told too long after the write's stamp, at which it is stamped anew as it is read
 * (restamped).
 */
export async function* writtenAfterCommit(
  pool: pg.Pool,
  parts: UnreturnedParts,
  batch: number,
  stampAnew: () => number | undefined = () => undefined,
): AsyncGenerator<InboxRecord[]> {
  for (const range of parts.ranges) {
    let after = range.after;
    for (;;) {
      // The next batch after `after` by the holders' own index ranges (postHoldersSql's page: ''
      // sorts before every id), cut at `through` once read: `($2 IS NULL OR user_id > $2)` is no
      // index condition, and each batch would read the community's memberships from its first.
      const found = await readAgain<{ user_id: string }>(
        pool,
        `SELECT h.user_id FROM (${postHoldersSql('$1', { after: '$2', limit: '$3' })}) AS h
         WHERE $4::text IS NULL OR h.user_id <= $4 ORDER BY h.user_id`,
        [parts.communityId, after ?? '', batch, range.through],
      );
      const users = found.map((row) => row.user_id);
      if (users.length === 0) break;
      const pairs = {
        userIds: users,
        keys: users.map((userId) => recordKey(parts.verb, parts.targetId, userId)),
      };
      const at = stampAnew();
      const records =
        at === undefined
          ? await readPairs(pool, pairs, parts.since)
          : await restampedOr(pool, pairs, parts.since, at, () => readPairs(pool, pairs, parts.since));
      if (records.length > 0) yield records;
      if (users.length < batch) break;
      after = users.at(-1) ?? null;
    }
  }
}
