import { expect } from 'chai';
import { MongoClient, type Db } from 'mongodb';
import { MEMBERSHIPS, membershipId, type MembershipDoc } from '../../../shared/tray/tray-record.ts';
import { ensureWorkerIndexes } from '../../../tray-service/store/ensure-worker-indexes.ts';
import { processJob, type ProcessOptions } from '../../../tray-service/worker/process-job.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import {
  commentEvent,
  minute,
  postEvent,
  reactionEvent,
  type TestEnvelope,
} from '../worker/event-builder.ts';
import { jobDataOf } from '../worker/worker-harness.ts';

const options: ProcessOptions = { eventsRetentionDays: 30, trayRetentionDays: 90, fanOutBatch: 10_000 };

// The worker's targets, counted with the driver's command monitoring: a comment event costs at most 4
// database commands; a post fanned out to a large community at most 30 (bench:worker measures
// the 10,000-member case; 300 members here keep the suite fast, since FerretDB updates each matched document in its own transaction; one batch either way).
describe('database commands per event (command monitoring)', () => {
  const dbName = uniqueName('test');
  let client: MongoClient | undefined;
  let db: Db | undefined;
  const commands: string[] = [];

  before(async function () {
    this.timeout(120_000);
    client = new MongoClient(testStack().mongoUri, { monitorCommands: true });
    client.on('commandStarted', (event) => commands.push(event.commandName));
    await client.connect();
    db = client.db(dbName);
    await ensureWorkerIndexes(db);
    const members: MembershipDoc[] = Array.from({ length: 300 }, (_, index) => ({
      _id: membershipId('c-big', `u-m${index}`),
      communityId: 'c-big',
      userId: `u-m${index}`,
      active: true,
      since: Date.parse(minute(-60)),
      updatedAt: Date.parse(minute(-60)),
    }));
    await db.collection<MembershipDoc>(MEMBERSHIPS).insertMany(members);
  });
  after(async () => {
    await db?.dropDatabase().catch(() => undefined);
    await client?.close();
  });

  async function countCommands(envelope: TestEnvelope): Promise<string[]> {
    commands.length = 0;
    await processJob(db!, jobDataOf(envelope), options);
    return [...commands];
  }

  describe('a comment creating its record', () => {
    it('costs at most 4 commands', async () => {
      expect(
        await countCommands(commentEvent({ postId: 'p-b1', commentId: 'cm-b1' })),
      ).to.have.length.at.most(4);
    });
  });

  describe('a comment grouped into an existing record', () => {
    it('costs at most 4 commands', async () => {
      const used = await countCommands(
        commentEvent({ postId: 'p-b1', commentId: 'cm-b2', author: 'u-dee', createdAt: minute(9) }),
      );
      expect(used, used.join(',')).to.have.length.at.most(4);
    });
  });

  describe('a reaction grouped into an existing record', () => {
    it('costs at most 4 commands', async () => {
      await countCommands(reactionEvent({ postId: 'p-b1', reactionId: 'r-b1' }));
      const used = await countCommands(
        reactionEvent({ postId: 'p-b1', reactionId: 'r-b2', author: 'u-eve', createdAt: minute(9) }),
      );
      expect(used, used.join(',')).to.have.length.at.most(4);
    });
  });

  describe('a post fanned out to 300 members', () => {
    it('costs at most 30 commands for new records, and again when grouped into them', async function () {
      this.timeout(240_000);
      const first = await countCommands(
        postEvent({ postId: 'p-f1', communityId: 'c-big', author: 'u-m0', createdAt: minute(1) }),
      );
      expect(first, first.join(',')).to.have.length.at.most(30);
      const second = await countCommands(
        postEvent({ postId: 'p-f2', communityId: 'c-big', author: 'u-m1', createdAt: minute(2) }),
      );
      expect(second, second.join(',')).to.have.length.at.most(30);
      const grouped = await db!
        .collection('tray_records')
        .countDocuments({ targetId: 'c-big', actorsCount: 2 });
      expect(grouped).to.equal(298);
    });
  });
});
