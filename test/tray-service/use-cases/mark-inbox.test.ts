import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { DAY_MS } from '../../../shared/time/durations.ts';
import type { InboxRecord } from '../../../tray-service/domain/inbox-record.ts';
import { InvalidUntilError } from '../../../tray-service/domain/invalid-until-error.ts';
import type { InboxMark } from '../../../tray-service/storage/port.ts';
import type { TrayRecord } from '../../../tray-service/domain/tray-record.ts';
import { TRAY_RECORDS } from '../../../tray-service/storage/mongodb/collections/collection-names.ts';
import type { TrayRecordDoc } from '../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import { markAll } from '../../../tray-service/use-cases/mark-all.ts';
import { markInbox } from '../../../tray-service/use-cases/mark-inbox.ts';
import { markLastRead } from '../../../tray-service/use-cases/last-read.ts';
import { StorageBusyError } from '../../../tray-service/storage/storage-busy-error.ts';
import { isStorageUnavailable } from '../../../tray-service/storage/storage-unavailable.ts';
import { claimFor } from '../storage/mongodb/support/claim-for.ts';
import { testStack } from '../../support/test-stack.ts';
import { seedRecords } from '../../support/seed-tray.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';

const NOW = Date.UTC(2026, 0, 15, 12);

/** The changes the use case announced, each mark with its records. */
function announced() {
  const marks: [InboxMark, readonly InboxRecord[]][] = [];
  return {
    marks,
    inboxMarked: async (mark: InboxMark, records: readonly InboxRecord[]) => void marks.push([mark, records]),
  };
}

describe('markInbox (POST v3/records/*, every transport)', () => {
  const suite = useTrayStorage();

  describe('a snooze', () => {
    const refused: [string, number, string][] = [
      ['ending now', NOW, 'until: expected a time later than now'],
      ['ending in the past', NOW - 1, 'until: expected a time later than now'],
      ['ending more than 90 days on', NOW + 90 * DAY_MS + 1, 'until: expected at most 90 days from now'],
    ];
    for (const [what, until, message] of refused) {
      it(`${what} is refused with INVALID_UNTIL naming the problem, and changes and announces nothing`, async () => {
        const [record] = await seedRecords(suite.storage, [{ userId: 'u-snooze', lastUpdate: NOW - 60_000 }]);
        const changes = announced();
        const mark: InboxMark = { kind: 'snooze', ids: [record!], until };
        await expect(
          markInbox(suite.storage, changes, { userId: 'u-snooze', mark, now: NOW, retentionDays: 90 }),
        )
          .to.be.rejectedWith(InvalidUntilError, message)
          .and.eventually.include({ code: 'INVALID_UNTIL' });
        const page = await suite.storage.inbox!.page('u-snooze', 'snoozed', undefined, 10, NOW);
        expect(page.records).to.deep.equal([]);
        expect(changes.marks).to.deep.equal([]);
      });
    }

    it('ending exactly 90 days on snoozes the record until then', async () => {
      const [record] = await seedRecords(suite.storage, [
        { userId: 'u-snooze-90', lastUpdate: NOW - 60_000 },
      ]);
      const changes = announced();
      const until = NOW + 90 * DAY_MS;
      const mark: InboxMark = { kind: 'snooze', ids: [record!], until };
      expect(
        await markInbox(suite.storage, changes, { userId: 'u-snooze-90', mark, now: NOW, retentionDays: 90 }),
      ).to.equal(1);
      const page = await suite.storage.inbox!.page('u-snooze-90', 'snoozed', undefined, 10, NOW);
      expect(page.records.map((one) => one.snoozedUntil)).to.deep.equal([until]);
      expect(changes.marks).to.have.length(1);
    });
  });
});

// MongoDB writes the records of a mark one compare-and-set at a time: a record held by a writer that
// died (its claim of the next version, taken over only after 60 s) stops the mark after the
// others were written. Those are announced before the call fails, as markAll's are.
describe('markInbox, markAll and markLastRead on MongoDB, failing part-way', function () {
  this.timeout(60_000);
  const suite = useTrayStorage('mongodb');
  let client: MongoClient | undefined;
  after(async () => client?.close());

  /** Seeds two records of `userId`; a stalled writer holds the second's next version. */
  const seedOneHeld = async (userId: string) => {
    const keys = await seedRecords(suite.storage, [
      { userId, targetId: 'p-free', lastUpdate: NOW - 60_000 },
      { userId, targetId: 'p-held', lastUpdate: NOW - 30_000 },
    ]);
    client ??= await MongoClient.connect(testStack().mongoUri);
    const db = client.db(suite.env.MONGODB_DB);
    const held = await db.collection<TrayRecordDoc>(TRAY_RECORDS).findOne({ userId, targetId: 'p-held' });
    if (!held) throw new Error('the held record was not seeded');
    await claimFor(db, 'a-writer-that-died', held._id, held.version + 1);
    return keys;
  };

  // markAll reads a large backlog a thousand records at a time and marks each batch; a batch that
  // failed reported its own records only, so the batches before it were read for good but never
  // announced, and a retry found nothing left to announce.
  it('markAll of more than one batch announces every batch it changed, then fails as the write did', async () => {
    const userId = 'u-part-many';
    await seedRecords(
      suite.storage,
      Array.from({ length: 1_000 }, (_, n) => ({
        userId,
        targetId: `p-many-${n}`,
        lastUpdate: NOW - 90_000 + n,
      })),
    );
    // Seeded last, so read in the second batch: a stalled writer holds its next version.
    await seedOneHeld(userId);
    const readChanges: (readonly TrayRecord[])[] = [];
    await expect(
      markAll(suite.storage, { markedRead: async (records) => void readChanges.push(records) }, userId, NOW),
    ).to.be.rejected;
    const db = client!.db(suite.env.MONGODB_DB);
    const stored = await db.collection<TrayRecordDoc>(TRAY_RECORDS).find({ userId, hasRead: true }).toArray();
    const announcedIds = readChanges.flat().map((record) => record.targetId);
    expect(stored.length, 'records marked read').to.equal(1_001);
    // Each once: the first batch as it was stored, the failed one's changes with the failure.
    expect(announcedIds.sort()).to.deep.equal(stored.map((record) => record.targetId).sort());
    expect(readChanges, 'announcements').to.have.lengthOf(2);
  });

  // v2/last-read's seen mark announces nothing, so a part-way failure is its cause: a busy
  // storage answers 503 (with Retry-After) where a PartialWriteError was a 500 no client retries.
  it('markLastRead fails with the write’s own error, which the API answers as storage unavailable', async () => {
    await seedOneHeld('u-part-last-read');
    // The last-read time is stored before the seen mark fails: the unread count changed with it,
    // and the user's streams must recount, or their badges keep the old count.
    const recounted: string[] = [];
    const changes = { lastRead: async (userId: string) => void recounted.push(userId) };
    const failed = await markLastRead(suite.storage, changes, 'u-part-last-read', NOW).then(
      () => expect.fail('the seen mark went through a held record'),
      (error: unknown) => error,
    );
    expect(failed).to.be.instanceOf(StorageBusyError);
    expect(isStorageUnavailable(failed)).to.equal(true);
    expect(recounted).to.deep.equal(['u-part-last-read']);
  });

  it('announces the records it changed, then fails as the write did', async () => {
    const [free, held] = await seedOneHeld('u-part-archive');
    await seedOneHeld('u-part-read');
    const inboxChanges = announced();
    const readChanges: (readonly TrayRecord[])[] = [];
    const archive: InboxMark = { kind: 'archive', ids: [free!, held!] };
    const [archived, read] = await Promise.allSettled([
      markInbox(suite.storage, inboxChanges, {
        userId: 'u-part-archive',
        mark: archive,
        now: NOW,
        retentionDays: 90,
      }),
      markAll(
        suite.storage,
        { markedRead: async (records) => void readChanges.push(records) },
        'u-part-read',
        NOW,
      ),
    ]);
    expect(archived.status).to.equal('rejected');
    expect(read.status).to.equal('rejected');
    expect(inboxChanges.marks.map(([, records]) => records.map((record) => record.targetId))).to.deep.equal([
      ['p-free'],
    ]);
    expect(readChanges.map((records) => records.map((record) => record.targetId))).to.deep.equal([
      ['p-free'],
    ]);
    // What was announced is what is stored.
    const page = await suite.storage.inbox!.page('u-part-archive', 'archived', undefined, 10, NOW);
    expect(page.records.map((record) => record.targetId)).to.deep.equal(['p-free']);
  });
});
