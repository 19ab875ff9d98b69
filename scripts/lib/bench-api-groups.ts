import { DAY_MS } from '../../shared/time/durations.ts';
import type { SeedGroup } from './seed-bench-records.ts';

/** The users `bench:api` measures, beside everyone else's records. */
export const BENCH_USER = 'bench-user';
export const BENCH_DENSE = 'bench-dense';
export const BENCH_ARCHIVE = 'bench-archive';
/** The records' retention: lastUpdate + 90 days. */
export const RETENTION_MS = 90 * DAY_MS;
/** Everyone else has about this many records each. */
const RECORDS_PER_OTHER_USER = 100;

export interface BenchApiSizes {
  total: number;
  /** bench-user's records, and bench-archive's in its inbox. */
  userRecords: number;
  denseRecords: number;
  /** bench-archive's archived and snoozed records. */
  archived: number;
  snoozed: number;
  now: number;
}

/** The bench users' records together: the table holds total - this of everyone else's. */
export const benchUsersRecords = (sizes: Omit<BenchApiSizes, 'total' | 'now'>): number =>
  2 * sizes.userRecords + sizes.denseRecords + sizes.archived + sizes.snoozed;

/**
 * What `bench:api` seeds (lib/seed-bench-records.ts): everyone else, about 100 records a user
 * spread over the retention; `bench-user`, records spread over the retention, half read;
 * `bench-dense`, records all within one minute, none read; `bench-archive`, an inbox like
 * bench-user's with archived and snoozed records among it. Every 3 records of a user share one
 * lastUpdate, like bursts of activity.
 */
export function benchApiGroups(sizes: BenchApiSizes): { groups: SeedGroup[]; otherUsers: number } {
  const { total, userRecords, denseRecords, archived, snoozed, now } = sizes;
  const others = total - benchUsersRecords(sizes);
  const retention = RETENTION_MS;
  const otherUsers = Math.max(1, Math.round(others / RECORDS_PER_OTHER_USER));
  const top = now - 60_000;
  /** lastUpdate of record i of `count` spread over the retention; every 3 share one, like bursts. */
  const spread = (count: number, perUser = 'i') =>
    `${top} - ((${perUser}) / 3 * 3)::bigint * ${Math.floor((retention - DAY_MS) / Math.max(1, count))}`;
  const plainGroup = { archivedAt: 'NULL::bigint', snoozedUntil: 'NULL::bigint' };
  const groups: SeedGroup[] = [
    {
      // Everyone else: 1 in 3 read, 1 in 3 unread but seen, 1 in 20 archived, 1 in 500 snoozed.
      count: others,
      user: `'u' || (i % ${otherUsers})`,
      lastUpdate: spread(Math.ceil(others / otherUsers), `i / ${otherUsers}`),
      read: 'i % 3 = 0',
      seen: 'i % 3 <> 2',
      archivedAt: 'CASE WHEN i % 20 = 7 THEN lu + 30000 END',
      snoozedUntil: `CASE WHEN i % 500 = 11 THEN ${now + 7 * DAY_MS}::bigint END`,
    },
    {
      count: userRecords,
      user: `'${BENCH_USER}'`,
      lastUpdate: spread(userRecords),
      read: `i > ${userRecords / 2}`,
      seen: `i > ${userRecords / 2} OR i % 4 = 0`,
      ...plainGroup,
    },
    {
      count: denseRecords,
      user: `'${BENCH_DENSE}'`,
      lastUpdate: `${top} - (i / 3 * 3)::bigint * 50`,
      read: 'false',
      seen: 'i % 5 = 0',
      ...plainGroup,
    },
    // bench-archive: its inbox, archived and snoozed records each spread over the retention, so
    // they interleave in time and every view's page lies among the others' records.
    {
      count: userRecords,
      user: `'${BENCH_ARCHIVE}'`,
      lastUpdate: spread(userRecords),
      read: 'i % 2 = 0',
      seen: 'i % 2 = 0 OR i % 3 = 0',
      ...plainGroup,
    },
    {
      count: archived,
      user: `'${BENCH_ARCHIVE}'`,
      lastUpdate: `${spread(archived)} - 1`,
      read: 'i % 4 <> 0',
      seen: 'true',
      archivedAt: 'lu + 30000',
      snoozedUntil: 'NULL::bigint',
    },
    {
      count: snoozed,
      user: `'${BENCH_ARCHIVE}'`,
      lastUpdate: `${spread(snoozed)} - 2`,
      read: 'false',
      seen: 'true',
      archivedAt: 'NULL::bigint',
      snoozedUntil: `${now + 7 * DAY_MS}::bigint`,
    },
  ];
  return { groups, otherUsers };
}
