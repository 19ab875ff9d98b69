import { expect } from 'chai';
import { MongoClient, type Db, type Document } from 'mongodb';
import { TRAY_RECORDS } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { type TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import { createMongoRecords } from '../../../../../tray-service/storage/mongodb/records/mongo-records.ts';
import { workerCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { processJob, type ProcessOptions } from '../support/process-job.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { uniqueName } from '../../../../support/suite-resources.ts';
import { testStack } from '../../../../support/test-stack.ts';
import { membershipEvent, minute, postEvent, type TestEnvelope } from '../../../worker/event-builder.ts';
import { jobDataOf } from '../../../worker/worker-harness.ts';

const options: ProcessOptions = { eventsRetentionDays: 30, trayRetentionDays: 90, fanOutBatch: 10_000 };
const members = Array.from({ length: 40 }, (_, index) => `u-g${index}`);

// A post to a community rewrites every member's record: each by compare-and-set on its own
// version, all of them in unordered bulk writes (one command for the 38 here).
describe('post fan-out grouped into existing records', function () {
  this.timeout(120_000);
  const dbName = uniqueName('test');
  let client: MongoClient | undefined;
  let db: Db | undefined;
  const updates: Document[] = [];
  const commands: Document[] = [];

  before(async () => {
    client = new MongoClient(testStack().mongoUri, { monitorCommands: true });
    client.on('commandStarted', (event) => {
      if (event.commandName === 'update' && event.command.update === TRAY_RECORDS) {
        commands.push(event.command);
        updates.push(...(event.command.updates as Document[]));
      }
    });
    await client.connect();
    db = client.db(dbName);
    await ensureTestCollections(db, workerCollections);
    await run(membershipEvent('join', members, 'c-g'), minute(-60));
    await run(postEvent({ postId: 'p-g1', communityId: 'c-g', author: 'u-g0', createdAt: minute(1) }));
    // One member reads theirs: their record moves to another version than the others'.
    await createMongoRecords(db, { lastRead: { latest: async () => 0 } }).markRead(
      'u-g5',
      'post',
      'c-g',
      Date.now(),
    );
    updates.length = 0;
    commands.length = 0;
    await run(postEvent({ postId: 'p-g2', communityId: 'c-g', author: 'u-g1', createdAt: minute(2) }));
  });
  after(async () => {
    await db?.dropDatabase().catch(() => undefined);
    await client?.close();
  });
  const run = (envelope: TestEnvelope, receivedAt?: string) =>
    processJob(db!, jobDataOf(envelope, receivedAt), options);

  it('writes each member’s existing record on its own version, in one unordered bulk write', () => {
    expect(commands, 'update commands').to.have.length(1);
    expect(commands[0]?.ordered).to.equal(false);
    // Every member but the second post's author (u-g1) and the first's (u-g0, whose record is new).
    const expected = members
      .filter((userId) => userId !== 'u-g0' && userId !== 'u-g1')
      .map((userId) => `post_c-g_${userId}`);
    expect(updates.map((u) => (u.q as Document)._id).sort()).to.deep.equal(expected.sort());
    for (const update of updates)
      expect(Object.keys(update.q as Document).sort()).to.deep.equal(['_id', 'version']);
  });

  it('leaves every member but the author with both posters counted, unread again', async () => {
    const records = await db!
      .collection<TrayRecordDoc>(TRAY_RECORDS)
      .find({ group: '["post","c-g"]' })
      .toArray();
    const byUser = new Map(records.map((record) => [record.userId, record]));
    expect(records).to.have.length(members.length);
    for (const userId of members.slice(2)) {
      expect(byUser.get(userId), userId).to.include({ actorsCount: 2, hasRead: false, lastActionId: 'p-g2' });
    }
    // u-g0 posted first, so only u-g1 counts for them; u-g1's record still shows u-g0's post only.
    expect(byUser.get('u-g0')).to.include({ actorsCount: 1, lastActionId: 'p-g2' });
    expect(byUser.get('u-g1')).to.include({ actorsCount: 1, lastActionId: 'p-g1' });
  });
});
