import { deletedActor } from '../../../../../tray-service/domain/deleted-user.ts';
import { expect } from 'chai';
import { MongoClient, type Document } from 'mongodb';
import {
  keepTargetActions,
  readMemberActions,
  readMembersActions,
  readTargetActions,
  renameKeptActor,
} from '../../../../../tray-service/storage/mongodb/grouping/target-actions.ts';
import { TRAY_TARGET_ACTIONS } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { trayTargetActionsCollection } from '../../../../../tray-service/storage/mongodb/collections/tray-target-actions-collection.ts';
import { recordGroup } from '../../../../../tray-service/storage/mongodb/records/storage-keys.ts';
import { aComment, aMention, aPost } from '../../../../support/activity-builder.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { testStack } from '../../../../support/test-stack.ts';
import { processingOrderCollection } from '../../../../../tray-service/storage/mongodb/collections/processing-order-collection.ts';

const T = Date.parse('2026-11-20T12:00:00.000Z');
const POST = { postId: 'p-1', owner: 'u-ana' };

describe('the kept actions of record groups (MongoDB-compatible server)', () => {
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, [trayTargetActionsCollection, processingOrderCollection]));
  beforeEach(() => mongo.db.collection(TRAY_TARGET_ACTIONS).deleteMany({}));

  it('keeps each action once per recipient, on a community’s target as on a user feed, the recipient’s own without a member key', async () => {
    const comment = aComment('u-cid', POST, { id: 'cm-1', at: T });
    await keepTargetActions(
      mongo.db,
      [
        comment,
        comment,
        aComment('u-ana', POST, { id: 'cm-own', at: T }),
        aComment('u-dee', POST, { id: 'cm-feed', at: T, userFeed: 'u-ana' }),
        aMention('u-cid', 'u-ben', { in: 'comment', commentId: 'cm-2', postId: 'p-1' }, { at: T }),
        aMention('u-cid', 'u-eve', { in: 'comment', commentId: 'cm-2', postId: 'p-1' }, { at: T }),
      ],
      90,
    );
    expect(
      (await readTargetActions(mongo.db, recordGroup('comment', 'p-1'))).map((a) => a.lastActionId).sort(),
    ).to.deep.equal(['cm-1', 'cm-feed', 'cm-own']);
    expect(await readTargetActions(mongo.db, recordGroup('mention', 'cm-2'))).to.have.length(2);
    expect((await readMemberActions(mongo.db, 'c-hike', 'u-eve')).map((a) => a.verb)).to.deep.equal([
      'mention',
    ]);
    // Ana's own comment reaches no record of hers: a join or leave of hers has nothing to find in it.
    expect((await readMemberActions(mongo.db, 'c-hike', 'u-ana')).map((a) => a.lastActionId)).to.deep.equal([
      'cm-1',
    ]);
  });

  it('reads the actions addressed to many members, each as their own look-up would', async () => {
    // More than a thousand: the members go in several bounded queries.
    const mentioned = Array.from({ length: 1_100 }, (_, n) => `u-m${n}`);
    await keepTargetActions(
      mongo.db,
      [
        ...mentioned.map((userId) =>
          aMention('u-cid', userId, { in: 'comment', commentId: 'cm-3', postId: 'p-1' }, { at: T }),
        ),
        aMention('u-cid', 'u-m7', { in: 'comment', commentId: 'cm-4', postId: 'p-1' }, { at: T + 1 }),
      ],
      90,
    );
    const read = await readMembersActions(mongo.db, 'c-hike', [...mentioned, 'u-none']);
    expect(read.size).to.equal(1_101);
    for (const userId of ['u-m0', 'u-m7', 'u-m1099', 'u-none'])
      expect(
        read
          .get(userId)
          ?.map((a) => a.lastActionId)
          .sort(),
        userId,
      ).to.deep.equal(
        (await readMemberActions(mongo.db, 'c-hike', userId)).map((a) => a.lastActionId).sort(),
      );
    expect(read.get('u-m7')).to.have.length(2);
    expect(read.get('u-none')).to.deep.equal([]);
    // Another community's members are other members.
    expect((await readMembersActions(mongo.db, 'c-other', ['u-m7'])).get('u-m7')).to.deep.equal([]);
  });

  it('keeps a community post once, also when a late join brings it to one member', async () => {
    const post = aPost('u-cid', { id: 'p-9', at: T });
    await keepTargetActions(mongo.db, [post, { ...post, audience: { kind: 'user', userId: 'u-ana' } }], 90);
    expect(await readTargetActions(mongo.db, recordGroup('post', 'c-hike'))).to.have.length(1);
    expect(await readMemberActions(mongo.db, 'c-hike', 'u-ana')).to.deep.equal([]);
  });

  // FerretDB pushes no `$in` down (it reads the whole collection and filters in Go: seconds with
  // hundreds of thousands of kept actions) but pushes `_id` equality down; MongoDB serves both
  // from the `_id` index. A redelivery has few duplicates: one look-up each.
  it('reads a redelivered action’s first place back by `_id` equality, one look-up per duplicate and none for new ones', async () => {
    const first = aComment('u-cid', POST, { id: 'cm-r1', at: T });
    const second = aComment('u-dee', POST, { id: 'cm-r2', at: T });
    const [kept1, kept2] = await keepTargetActions(mongo.db, [first, second], 90);
    const watcher = new MongoClient(testStack().mongoUri, { monitorCommands: true });
    const finds: Document[] = [];
    watcher.on('commandStarted', (event) => {
      if (event.commandName === 'find' && event.command.find === TRAY_TARGET_ACTIONS)
        finds.push(event.command);
    });
    try {
      await watcher.connect();
      const again = await keepTargetActions(
        watcher.db(mongo.dbName),
        [first, aComment('u-eve', POST, { id: 'cm-r3', at: T }), second],
        90,
      );
      expect(again[0]?.processed).to.equal(kept1?.processed);
      expect(again[2]?.processed).to.equal(kept2?.processed);
      expect(again[1]?.processed).to.be.above(kept2?.processed ?? Infinity);
    } finally {
      await watcher.close();
    }
    const filters = finds.map((command) => command.filter as Document);
    expect(filters).to.have.length(2);
    for (const filter of filters) expect(filter._id, JSON.stringify(filter)).to.be.a('string');
  });

  it('keeps every action of an actor on one record, none pruned by later ones', async () => {
    const comments = Array.from({ length: 20 }, (_, n) =>
      aComment('u-cid', POST, { id: `cm-${n}`, at: T + n, userFeed: 'u-ana' }),
    );
    await keepTargetActions(
      mongo.db,
      [...comments, aComment('u-dee', POST, { id: 'cm-d', at: T, userFeed: 'u-ana' })],
      90,
    );
    const group = recordGroup('comment', 'p-1');
    await readTargetActions(mongo.db, group);
    const left = await readTargetActions(mongo.db, group);
    const cid = left.filter((action) => action.actor.userId === 'u-cid').map((action) => action.at);
    expect(cid.sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 20 }, (_, n) => T + n));
    expect(left.filter((action) => action.actor.userId === 'u-dee')).to.have.length(1);
    // A user feed has no members: none of its actions is found by a member's look-up.
    expect(await readMemberActions(mongo.db, 'c-hike', 'u-ana')).to.deep.equal([]);
  });

  it('rewrites a deleted user’s snapshot in every action kept', async () => {
    await keepTargetActions(
      mongo.db,
      [aComment('u-cid', POST, { id: 'cm-1', at: T, imageUrl: 'https://img/c' })],
      90,
    );
    await renameKeptActor(mongo.db, deletedActor('u-cid'));
    const [action] = await readTargetActions(mongo.db, recordGroup('comment', 'p-1'));
    expect(action?.actor).to.deep.equal({ userId: 'u-cid', name: 'Deleted user', deleted: true });
  });
});
