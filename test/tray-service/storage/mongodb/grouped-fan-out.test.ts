import { expect } from 'chai';
import { MongoClient, type Db, type Document } from 'mongodb';
import { TRAY_RECORDS, type TrayRecordDoc } from '../../../../shared/tray/tray-record.ts';
import { createRecordQueries } from '../../../../tray-service/storage/mongodb/record-queries.ts';
import { workerCollections } from '../../../../tray-service/storage/mongodb/tray-collections.ts';
import { processJob, type ProcessOptions } from './support/process-job.ts';
import { ensureTestCollections } from '../../../support/ensure-test-collections.ts';
import { uniqueName } from '../../../support/suite-resources.ts';
import { testStack } from '../../../support/test-stack.ts';
import { membershipEvent, minute, postEvent, type TestEnvelope } from '../../worker/event-builder.ts';
import { jobDataOf } from '../../worker/worker-harness.ts';

const options: ProcessOptions = { eventsRetentionDays: 30, trayRetentionDays: 90, fanOutBatch: 10_000 };
const members = Array.from({ length: 40 }, (_, index) => `u-g${index}`);

// A post to a community moves most members' records from one version to the same state: the
// worker writes them with one updateMany on {group, version} instead of one operation each, and
// leaves out by name the few records of that version that move elsewhere or not at all.
describe('post fan-out grouped into existing records', function () {
  this.timeout(120_000);
  const dbName = uniqueName('test');
  let client: MongoClient | undefined;
  let db: Db | undefined;
  const updates: Document[] = [];

  before(async () => {
    client = new MongoClient(testStack().mongoUri, { monitorCommands: true });
    client.on('commandStarted', (event) => {
      if (event.commandName === 'update' && event.command.update === TRAY_RECORDS)
        updates.push(...(event.command.updates as Document[]));
    });
    await client.connect();
    db = client.db(dbName);
    await ensureTestCollections(db, workerCollections);
    await run(membershipEvent('join', members, 'c-g'), minute(-60));
    await run(postEvent({ postId: 'p-g1', communityId: 'c-g', author: 'u-g0', createdAt: minute(1) }));
    // One member reads theirs: their record moves to another version than the others'.
    await createRecordQueries(db).markRead('u-g5', 'post', 'c-g', Date.now());
    updates.length = 0;
    await run(postEvent({ postId: 'p-g2', communityId: 'c-g', author: 'u-g1', createdAt: minute(2) }));
  });
  after(async () => {
    await db?.dropDatabase().catch(() => undefined);
    await client?.close();
  });
  const run = (envelope: TestEnvelope, receivedAt?: string) =>
    processJob(db!, jobDataOf(envelope, receivedAt), options);

  it('writes the members moving alike with one statement on the group, the others one by one', () => {
    const grouped = updates.filter((u) => (u.q as Document).group !== undefined);
    const single = updates.filter((u) => (u.q as Document).group === undefined);
    expect(grouped, JSON.stringify(updates.map((u) => u.q))).to.have.length(1);
    expect(grouped[0]?.multi).to.equal(true);
    // The author of the second post (not updated) is left out by name.
    expect((grouped[0]?.q as Document)._id).to.deep.equal({ $nin: ['post_c-g_u-g1'] });
    // u-g5 (read, another version) and u-g1's own record are not in the class; u-g0 is.
    expect(single.map((u) => (u.q as Document)._id)).to.deep.equal(['post_c-g_u-g5']);
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
