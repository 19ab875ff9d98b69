import { expect } from 'chai';
import { MongoClient, type Db } from 'mongodb';
import {
  MEMBERSHIP_CHANGES,
  MEMBERSHIPS,
  TRAY_RECORDS,
} from '../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import {
  membershipId,
  type MembershipDoc,
} from '../../../../tray-service/storage/mongodb/collections/memberships-collection.ts';
import { nextProcessed } from '../../../../tray-service/storage/mongodb/memberships/processing-order.ts';
import { workerCollections } from '../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { ensureTestCollections } from '../../../support/ensure-test-collections.ts';
import { processJob, type ProcessOptions } from './support/process-job.ts';
import { uniqueName } from '../../../support/suite-resources.ts';
import { testStack } from '../../../support/test-stack.ts';
import {
  commentEvent,
  membershipEvent,
  minute,
  postEvent,
  reactionEvent,
  reactionRemoveEvent,
  postDeleteEvent,
  type TestEnvelope,
} from '../../worker/event-builder.ts';
import { jobDataOf } from '../../worker/worker-harness.ts';

/** `count` members of `communityId` as an import stores them, members since an hour before the events. */
const importedMembers = (communityId: string, prefix: string, count: number): MembershipDoc[] =>
  Array.from({ length: count }, (_, index) => ({
    _id: membershipId(communityId, `${prefix}${index}`),
    communityId,
    userId: `${prefix}${index}`,
    active: true,
    since: Date.parse(minute(-60)),
    updatedAt: Date.parse(minute(-60)),
  }));

const options: ProcessOptions = { eventsRetentionDays: 30, trayRetentionDays: 90, fanOutBatch: 10_000 };

// Counted with the driver's command monitoring. A comment event on a user's feed costs at most 11
// database commands, each served by an index: store the event, read its post's removals before and
// after the write (docs/storage.md#removals), read which of its actor and recipient are deleted
// before and after the write (docs/tray-rules.md#deleted-users), add the action to its group's
// actors, read the mutes of its targets (one `$in`), read the record, read the group's actors, then
// insert the record or claim its next version and update it (an actor acting again on the same
// target costs one more, the prune of their older action). On a community's post it costs at most 7 more
// (docs/tray-rules.md#leaving-and-rejoining-a-community): take the action's place in the processing
// order (read the highest block, insert the next, read the one read again: processing-order.ts), keep the action with its time and place, read
// the recipient's joins and leaves and imported membership before computing, and their joins and
// leaves again after writing (a leave stored meanwhile is then applied by the places). A post fanned out to a
// large community costs at most 31, its mutes and its members' deletions read once per batch (bench:worker measures the 10,000-member case; 300 members keep
// the suite fast).
describe('database commands per event (command monitoring)', () => {
  const dbName = uniqueName('test');
  let client: MongoClient | undefined;
  let db: Db | undefined;
  const commands: string[] = [];
  /** Documents the finds (and their getMores) answered, by collection; the collection by request. */
  const documentsRead = new Map<string, number>();
  const readFrom = new Map<number, string>();

  before(async function () {
    this.timeout(120_000);
    client = new MongoClient(testStack().mongoUri, { monitorCommands: true });
    client.on('commandStarted', (event) => {
      commands.push(event.commandName);
      const collection: unknown = event.command.find ?? event.command.collection;
      if (typeof collection === 'string') readFrom.set(event.requestId, collection);
    });
    client.on('commandSucceeded', (event) => {
      const collection = readFrom.get(event.requestId);
      readFrom.delete(event.requestId);
      const cursor = (event.reply as { cursor?: { firstBatch?: unknown[]; nextBatch?: unknown[] } }).cursor;
      const read = (cursor?.firstBatch ?? cursor?.nextBatch ?? []).length;
      if (collection !== undefined)
        documentsRead.set(collection, (documentsRead.get(collection) ?? 0) + read);
    });
    await client.connect();
    db = client.db(dbName);
    await ensureTestCollections(db, workerCollections);
    await db.collection<MembershipDoc>(MEMBERSHIPS).insertMany(importedMembers('c-big', 'u-m', 300));
    // The processing order has begun, as everywhere but in a new database (its very first
    // allocation inserts the block before the first place too).
    await nextProcessed(db, 1);
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
    it('costs at most 11 commands on a user feed, 18 on a community’s post', async () => {
      const onFeed = await countCommands(commentEvent({ postId: 'p-u1', commentId: 'cm-u1', feed: 'user' }));
      expect(onFeed, onFeed.join(',')).to.have.length.at.most(11);
      const used = await countCommands(commentEvent({ postId: 'p-b1', commentId: 'cm-b1' }));
      expect(used, used.join(',')).to.have.length.at.most(18);
    });
  });

  describe('a comment grouped into an existing record', () => {
    // A user feed's action is kept too (tray_target_actions), so a removal can compute its record
    // again: one insert more than when only each actor's latest action was kept.
    it('costs at most 12 commands on a user feed, 18 on a community’s post', async () => {
      const onFeed = await countCommands(
        commentEvent({
          postId: 'p-u1',
          commentId: 'cm-u2',
          author: 'u-dee',
          createdAt: minute(9),
          feed: 'user',
        }),
      );
      expect(onFeed, onFeed.join(',')).to.have.length.at.most(12);
      const used = await countCommands(
        commentEvent({ postId: 'p-b1', commentId: 'cm-b2', author: 'u-dee', createdAt: minute(9) }),
      );
      expect(used, used.join(',')).to.have.length.at.most(18);
    });
  });

  describe('a reaction grouped into an existing record', () => {
    it('costs at most 18 commands on a community’s post', async () => {
      await countCommands(reactionEvent({ postId: 'p-b1', reactionId: 'r-b1' }));
      const used = await countCommands(
        reactionEvent({ postId: 'p-b1', reactionId: 'r-b2', author: 'u-eve', createdAt: minute(9) }),
      );
      expect(used, used.join(',')).to.have.length.at.most(18);
    });
  });

  describe('a post fanned out to 300 members', () => {
    it('costs at most 31 commands for new records, and again when grouped into them', async function () {
      this.timeout(240_000);
      const first = await countCommands(
        postEvent({ postId: 'p-f1', communityId: 'c-big', author: 'u-m0', createdAt: minute(1) }),
      );
      expect(first, first.join(',')).to.have.length.at.most(31);
      const second = await countCommands(
        postEvent({ postId: 'p-f2', communityId: 'c-big', author: 'u-m1', createdAt: minute(2) }),
      );
      expect(second, second.join(',')).to.have.length.at.most(31);
      const grouped = await db!
        .collection('tray_records')
        .countDocuments({ targetId: 'c-big', actorsCount: 2 });
      expect(grouped).to.equal(298);
    });
  });
  // A join or a mention naming many users reads their memberships, and the actions addressed to
  // them, a community or a bounded batch at a time: a command per member would be a query per member
  // that FerretDB answers by scanning the whole collection, quadratic in the event's size.
  describe('a join or a mention naming many users', () => {
    const users = (prefix: string, count: number) =>
      Array.from({ length: count }, (_, index) => `u-${prefix}${index}`);

    it('costs at most 5 commands more for 200 users than for 100 (a join)', async function () {
      this.timeout(240_000);
      await countCommands(postEvent({ postId: 'p-j1', communityId: 'c-j1', createdAt: minute(1) }));
      await countCommands(postEvent({ postId: 'p-j2', communityId: 'c-j2', createdAt: minute(1) }));
      const hundred = await countCommands(membershipEvent('join', users('ja', 100), 'c-j1', minute(-5)));
      const twoHundred = await countCommands(membershipEvent('join', users('jb', 200), 'c-j2', minute(-5)));
      expect(twoHundred.length - hundred.length, twoHundred.join(',')).to.be.at.most(5);
      // The backfill did reach them.
      expect(await db!.collection('tray_records').countDocuments({ targetId: 'c-j2' })).to.equal(200);
    });

    // A join read the whole community's memberships to find the joiner's own: 300 documents here,
    // every member of a large community on every join there.
    it('reads the joiner’s memberships, not the community’s (a join of one)', async function () {
      this.timeout(60_000);
      documentsRead.clear();
      await countCommands(membershipEvent('join', ['u-one'], 'c-big', minute(-5)));
      const read = (documentsRead.get(MEMBERSHIPS) ?? 0) + (documentsRead.get(MEMBERSHIP_CHANGES) ?? 0);
      expect(read, JSON.stringify([...documentsRead])).to.be.at.most(10);
    });

    it('costs at most 5 commands more for 200 users than for 100 (a mention)', async function () {
      this.timeout(240_000);
      const hundred = await countCommands(
        postEvent({ postId: 'p-m1', communityId: 'c-m1', mentions: users('ma', 100), createdAt: minute(1) }),
      );
      const twoHundred = await countCommands(
        postEvent({ postId: 'p-m2', communityId: 'c-m2', mentions: users('mb', 200), createdAt: minute(1) }),
      );
      expect(twoHundred.length - hundred.length, twoHundred.join(',')).to.be.at.most(5);
      expect(await db!.collection('tray_records').countDocuments({ targetId: 'p-m2' })).to.equal(200);
    });
  });

  // Every compare-and-set round of a removal's recomputation read the whole community's
  // memberships, even for a group of one record (a reaction on a post: its author's).
  describe('a reaction removed from a post in a community of 300', () => {
    it('reads the memberships of its group’s users, not the community’s', async function () {
      this.timeout(60_000);
      await db!.collection<MembershipDoc>(MEMBERSHIPS).insertMany(importedMembers('c-hike', 'u-h', 300));
      await countCommands(reactionEvent({ reactionId: 'r-h1' }));
      // Another's reaction stays: the record is computed again, not deleted.
      await countCommands(reactionEvent({ reactionId: 'r-h2', author: 'u-eve', createdAt: minute(7) }));
      documentsRead.clear();
      await countCommands(reactionRemoveEvent({ reactionId: 'r-h1' }));
      const read = (documentsRead.get(MEMBERSHIPS) ?? 0) + (documentsRead.get(MEMBERSHIP_CHANGES) ?? 0);
      expect(read, JSON.stringify([...documentsRead])).to.be.at.most(10);
    });
  });

  // A late join's backfill brings the joiner the posts of its span; one removed since is voided,
  // and applying its removal again computed every member's record of the community's posts.
  // (c-hike holds the 300 members the case before added.)
  describe('a late join whose span holds a removed post, in a community of 300', () => {
    it('computes the joiner’s records again, not the members’', async function () {
      this.timeout(120_000);
      // The members' post records stay, for the post that is kept.
      await countCommands(postEvent({ postId: 'p-kept', author: 'u-h1', createdAt: minute(2) }));
      await countCommands(postEvent({ postId: 'p-gone', author: 'u-h2', createdAt: minute(3) }));
      await countCommands(postDeleteEvent({ postId: 'p-gone', author: 'u-h2' }));
      documentsRead.clear();
      await countCommands(membershipEvent('join', ['u-late'], 'c-hike', minute(-5)));
      expect(documentsRead.get(TRAY_RECORDS) ?? 0, JSON.stringify([...documentsRead])).to.be.at.most(10);
    });
  });
});
