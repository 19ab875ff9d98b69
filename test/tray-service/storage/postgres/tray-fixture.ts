import type { Activity, MembershipChange } from '../../../../tray-service/domain/activity.ts';
import { migrate } from '../../../../tray-service/storage/postgres/migrate.ts';
import { createPostgresRecords } from '../../../../tray-service/storage/postgres/postgres-records.ts';
import { createPostgresWrites } from '../../../../tray-service/storage/postgres/postgres-writes.ts';
import type { TrayRecordsPort, TrayWritesPort, WriteContext } from '../../../../tray-service/storage/port.ts';
import type { InboxRecord } from '../../../../tray-service/domain/inbox-record.ts';
import type { TrayRecord } from '../../../../tray-service/domain/tray-record.ts';
import { DAY_MS } from '../../../../shared/time/durations.ts';

const MINUTE_MS = 60_000;
import { usePostgres, type SuitePostgres, type SuitePostgresOptions } from '../../../support/use-postgres.ts';

/** The tray's clock in these tests, and minutes of platform time around it. */
export const NOW = Date.UTC(2026, 10, 22, 12);
export const at = (minutes: number) => NOW + minutes * MINUTE_MS;
export const RETENTION_DAYS = 90;
export const RETENTION_MS = RETENTION_DAYS * DAY_MS;

/** A comment by `author` on `postId`, owned by `owner` (a `comment` record for the owner). */
export function comment(postId: string, author: string, minutes: number, owner = 'u-ana'): Activity {
  return {
    verb: 'comment',
    targetId: postId,
    targetType: 'post',
    targetName: 'Hiking Club',
    parentTargetId: 'c-hike',
    lastActionId: `cm-${postId}-${author}-${minutes}`,
    lastActionSegmentNo: minutes,
    feed: { kind: 'community', id: 'c-hike', name: 'Hiking Club' },
    communityId: 'c-hike',
    actor: { userId: author, name: author.toUpperCase(), imageUrl: `https://img/${author}` },
    at: at(minutes),
    audience: { kind: 'user', userId: owner },
  };
}

/** A post by `author` in `communityId` (a `post` record for every member at its time). */
export function post(
  communityId: string,
  author: string,
  minutes: number,
  id = `p-${author}-${minutes}`,
): Activity {
  return {
    verb: 'post',
    targetId: communityId,
    targetType: 'community',
    targetName: 'Hiking Club',
    lastActionId: id,
    feed: { kind: 'community', id: communityId, name: 'Hiking Club' },
    communityId,
    actor: { userId: author, name: author.toUpperCase() },
    at: at(minutes),
    audience: { kind: 'community', communityId },
  };
}

export const join = (communityId: string, userId: string, minutes: number): MembershipChange => ({
  communityId,
  userId,
  active: true,
  at: at(minutes),
});
export const leave = (communityId: string, userId: string, minutes: number): MembershipChange => ({
  communityId,
  userId,
  active: false,
  at: at(minutes),
});

export interface TrayFixture {
  readonly pg: SuitePostgres;
  readonly records: TrayRecordsPort;
  readonly writes: TrayWritesPort;
  /** Every record told to onWritten since the test started, with its inbox state. */
  readonly told: InboxRecord[];
  context(now?: number): WriteContext;
  /** The user's record of a verb and target, as readers see it (undefined when absent or expired). */
  record(userId: string, verb: string, targetId: string, now?: number): Promise<TrayRecord | undefined>;
}

/** A migrated database of the suite's own, emptied before each test. */
export function useTray(options: SuitePostgresOptions = {}): TrayFixture {
  const pg = usePostgres(options);
  let records: TrayRecordsPort | undefined;
  let writes: TrayWritesPort | undefined;
  const told: InboxRecord[] = [];
  before(async () => {
    await migrate(pg.pool);
    records = createPostgresRecords(pg.pool);
    writes = createPostgresWrites(pg.pool);
  });
  beforeEach(async () => {
    told.length = 0;
    await pg.pool.query(
      `TRUNCATE tray_records, tray_target_actors, tray_membership_changes, tray_imported_members,
                tray_memberships, tray_member_away, tray_community_posts, tray_personal_actions,
                tray_profiles, tray_last_read, tray_clears`,
    );
  });
  const fixture: TrayFixture = {
    pg,
    get records() {
      if (!records) throw new Error('useTray: used before the suite started');
      return records;
    },
    get writes() {
      if (!writes) throw new Error('useTray: used before the suite started');
      return writes;
    },
    told,
    context: (now = NOW) => ({
      now,
      retentionDays: RETENTION_DAYS,
      onWritten: async (written) => {
        told.push(...written);
      },
    }),
    async record(userId, verb, targetId, now = NOW) {
      const page = await fixture.records.pageNumber(userId, 1, 1000, now, []);
      return page.find((record) => record.verb === verb && record.targetId === targetId);
    },
  };
  return fixture;
}
