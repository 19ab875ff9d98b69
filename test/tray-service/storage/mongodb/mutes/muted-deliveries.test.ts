import { expect } from 'chai';
import { MongoClient, type Db, type Document } from 'mongodb';
import { jobScope } from '../../../../../shared/async/job-scope.ts';
import type { InboxPort, TrayStorage, WriteContext } from '../../../../../tray-service/storage/port.ts';
import { aComment, aMention, aPost } from '../../../../support/activity-builder.ts';
import { useTrayStorage } from '../../../../support/use-tray-storage.ts';
import { MAX_MUTES_IN_FORCE, type MuteTargetType } from '../../../../../tray-service/domain/mute.ts';
import { TRAY_MUTES } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import {
  OWNERS_PER_QUERY,
  spansCovering,
} from '../../../../../tray-service/storage/mongodb/mutes/muted-deliveries.ts';
import {
  muteTargetKey,
  type MuteDoc,
} from '../../../../../tray-service/storage/mongodb/collections/tray-mutes-collection.ts';
import { trayCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { createMongoMutes } from '../../../../../tray-service/storage/mongodb/mutes/mongo-mutes.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { uniqueName } from '../../../../support/suite-resources.ts';
import { testStack } from '../../../../support/test-stack.ts';

const T0 = Date.UTC(2026, 10, 20, 10);
const context: WriteContext = { now: T0 + 60_000, retentionDays: 90 };

// A mute holds back what it covers for its owner inside the worker's writes: a comment on a muted
// post and a post to a muted community make no record, an @mention passes, and a delivery dated
// after the mute was removed goes through.
describe('MongoDB adapter: mutes held back in the fan-out and personal writes', function () {
  this.timeout(60_000);
  const suite = useTrayStorage('mongodb');
  let storage: TrayStorage;
  let inbox: InboxPort;
  const keys = async (userId: string) =>
    (await storage.records.pageAfter(userId, undefined, 50, context.now)).records.map(
      (record) => `${record.verb}:${record.targetId}`,
    );
  const job = <T>(name: string, run: () => Promise<T>) => jobScope.run(name, run);

  before(() => {
    storage = suite.storage;
    if (!storage.inbox) throw new Error('the MongoDB adapter has no inbox port');
    inbox = storage.inbox;
  });

  it('a muted post: no record for a comment on it, an @mention in it arrives', async () => {
    await inbox.putMute('u-ana', { targetType: 'post', targetId: 'p-1' }, null, T0, 90, MAX_MUTES_IN_FORCE);
    const post = { postId: 'p-1', owner: 'u-ana' };
    await job('j-1', () =>
      storage.writes.applyPersonal(
        [
          aComment('u-ben', post, { id: 'cm-1', at: T0 + 1_000 }),
          aMention('u-cy', 'u-ana', { in: 'post', postId: 'p-1' }, { at: T0 + 2_000 }),
        ],
        context,
      ),
    );
    expect(await keys('u-ana')).to.deep.equal(['mention:p-1']);
  });

  it('a muted community: its post reaches the other members, not the one who muted it', async () => {
    for (const userId of ['u-dee', 'u-eve'])
      await job(`join-${userId}`, () =>
        storage.writes.applyMemberships(
          [{ communityId: 'c-mute', userId, active: true, at: T0 - 1_000 }],
          context,
        ),
      );
    await inbox.putMute(
      'u-dee',
      { targetType: 'community', targetId: 'c-mute' },
      null,
      T0,
      90,
      MAX_MUTES_IN_FORCE,
    );
    await job('j-post', () =>
      storage.writes.fanOutPosts(
        'c-mute',
        [aPost('u-fay', { id: 'p-9', at: T0 + 3_000, communityId: 'c-mute' })],
        context,
      ),
    );
    expect(await keys('u-dee')).to.deep.equal([]);
    expect(await keys('u-eve')).to.deep.equal(['post:c-mute']);
  });

  it('judged by the action’s time: after the mute is removed a comment goes through, a late one dated inside it does not', async () => {
    await inbox.putMute('u-gus', { targetType: 'user', targetId: 'u-hal' }, null, T0, 90, MAX_MUTES_IN_FORCE);
    await inbox.removeMute('u-gus', { targetType: 'user', targetId: 'u-hal' }, T0 + 10_000, 90);
    const post = { postId: 'p-2', owner: 'u-gus' };
    await job('j-late', () =>
      storage.writes.applyPersonal([aComment('u-hal', post, { id: 'cm-late', at: T0 + 5_000 })], context),
    );
    expect(await keys('u-gus')).to.deep.equal([]);
    await job('j-after', () =>
      storage.writes.applyPersonal([aComment('u-hal', post, { id: 'cm-after', at: T0 + 20_000 })], context),
    );
    expect(await keys('u-gus')).to.deep.equal(['comment:p-2']);
  });

  /** Comments on `owner`'s post, each its own job; on `owner`'s feed with `onFeed`, else in c-hike. */
  const commentsOn =
    (postId: string, owner: string, onFeed: boolean) => (actor: string, id: string, at: number) =>
      job(id, () =>
        storage.writes.applyPersonal(
          [aComment(actor, { postId, owner }, { id, at, ...(onFeed ? { userFeed: owner } : {}) })],
          context,
        ),
      );
  const newestRecord = async (userId: string) =>
    (await storage.records.pageAfter(userId, undefined, 10, context.now)).records[0];
  const actorIds = (record: { actors: { userId: string }[] } | undefined) =>
    record?.actors.map((actor) => actor.userId);

  for (const [where, onFeed, owner] of [
    ['a community’s post', false, 'u-ivy'],
    ['a user feed', true, 'u-mia'],
  ] as const)
    it(`on ${where}: after an unmute, the record counts nothing its mute held back (a new comment regroups without it)`, async () => {
      const postId = `p-${owner}`;
      const comment = commentsOn(postId, owner, onFeed);
      await comment('u-jon', `cm-j-${owner}`, T0 + 1_000);
      await inbox.putMute(
        owner,
        { targetType: 'post', targetId: postId },
        null,
        T0 + 2_000,
        90,
        MAX_MUTES_IN_FORCE,
      );
      await comment('u-kim', `cm-k-${owner}`, T0 + 3_000);
      await inbox.removeMute(owner, { targetType: 'post', targetId: postId }, T0 + 4_000, 90);
      await comment('u-lea', `cm-l-${owner}`, T0 + 5_000);
      const record = await newestRecord(owner);
      expect(actorIds(record)).to.deep.equal(['u-lea', 'u-jon']);
      expect(record?.actorsCount).to.equal(2);
    });

  it('a late leave takes nothing back, and a comment after it still leaves out what their mutes held back', async () => {
    const comment = commentsOn('p-5', 'u-ned', false);
    const member = (active: boolean, at: number) =>
      job(`member-${at}`, () =>
        storage.writes.applyMemberships([{ communityId: 'c-hike', userId: 'u-ned', active, at }], context),
      );
    await member(true, T0 - 1_000);
    await comment('u-jon', 'cm-lj', T0 + 1_000);
    await inbox.putMute(
      'u-ned',
      { targetType: 'post', targetId: 'p-5' },
      null,
      T0 + 2_000,
      90,
      MAX_MUTES_IN_FORCE,
    );
    await comment('u-kim', 'cm-lk', T0 + 3_000);
    await inbox.removeMute('u-ned', { targetType: 'post', targetId: 'p-5' }, T0 + 4_000, 90);
    await comment('u-lea', 'cm-ll', T0 + 5_000);
    // Processed after Lea's comment, dated before it: her comment stays, Kim's stays held back.
    await member(false, T0 + 4_500);
    // And a comment processed after the leave, in its time away, reaches nothing.
    await comment('u-max', 'cm-lm', T0 + 6_000);
    const record = await newestRecord('u-ned');
    expect(actorIds(record)).to.deep.equal(['u-lea', 'u-jon']);
    expect(record).to.include({ actorsCount: 2, lastActionId: 'cm-ll' });
  });

  it('a user mute of one actor keeps them out when another actor regroups the record', async () => {
    const comment = commentsOn('p-6', 'u-ola', true);
    await comment('u-jon', 'cm-uj', T0 + 1_000);
    await inbox.putMute(
      'u-ola',
      { targetType: 'user', targetId: 'u-kim' },
      null,
      T0 + 2_000,
      90,
      MAX_MUTES_IN_FORCE,
    );
    await comment('u-kim', 'cm-uk', T0 + 3_000);
    // Lea's comment is covered by no mute of Ola's: the record is regrouped without Kim all the same.
    await comment('u-lea', 'cm-ul', T0 + 5_000);
    const record = await newestRecord('u-ola');
    expect(actorIds(record)).to.deep.equal(['u-lea', 'u-jon']);
    expect(record?.actorsCount).to.equal(2);
  });
});

// Counted with the driver's command monitoring: which spans the server sends back for one write.
describe('MongoDB adapter: spansCovering reads the spans a write needs, not every user’s on its targets', function () {
  this.timeout(120_000);
  const dbName = uniqueName('test');
  let client: MongoClient | undefined;
  let db: Db | undefined;
  /** The documents each find on tray_mutes answered, first batch and further ones. */
  let returned = 0;
  const filters: Document[] = [];
  const cursors = new Set<string>();
  const userOf = (n: number) => `u-${String(n).padStart(5, '0')}`;

  const span = (userId: string, targetType: MuteTargetType, targetId: string): MuteDoc => ({
    _id: JSON.stringify([userId, targetType, targetId, 1_000]),
    userId,
    targetType,
    targetId,
    createdAt: 1_000,
    until: null,
    removedAt: null,
    target: muteTargetKey(targetType, targetId),
    expiresAt: new Date(Date.UTC(2100, 0, 1)),
  });

  before(async () => {
    client = new MongoClient(testStack().mongoUri, { monitorCommands: true });
    client.on('commandStarted', (event) => {
      if (event.commandName === 'find' && event.command.find === TRAY_MUTES) {
        filters.push(event.command.filter as Document);
        cursors.add(String(event.requestId));
      }
      if (event.commandName === 'getMore' && event.command.collection === TRAY_MUTES)
        cursors.add(String(event.requestId));
    });
    client.on('commandSucceeded', (event) => {
      if (!cursors.has(String(event.requestId))) return;
      const cursor = (event.reply as { cursor?: { firstBatch?: unknown[]; nextBatch?: unknown[] } }).cursor;
      returned += (cursor?.firstBatch ?? cursor?.nextBatch ?? []).length;
    });
    await client.connect();
    db = client.db(dbName);
    await ensureTestCollections(db, trayCollections);
    // 1,000 users mute the community c-big; u-01000 mutes it too and the author of post p-1200.
    await db
      .collection<MuteDoc>(TRAY_MUTES)
      .insertMany([
        ...Array.from({ length: 1_001 }, (_, n) => span(userOf(n), 'community', 'c-big')),
        span(userOf(1_000), 'user', 'author-1200'),
      ]);
  });
  beforeEach(() => {
    returned = 0;
    filters.length = 0;
  });
  after(async () => {
    await db?.dropDatabase().catch(() => undefined);
    await client?.close();
  });

  it('a comment to one recipient reads that recipient’s spans only', async () => {
    const comment = aComment(
      'u-ben',
      { postId: 'p-1', owner: userOf(1_000) },
      { id: 'cm-1', at: 5_000, communityId: 'c-big' },
    );
    const spans = await spansCovering(db!, [comment], new Set([userOf(1_000)]));
    expect([...spans.keys()]).to.deep.equal([userOf(1_000)]);
    expect(spans.get(userOf(1_000))?.map((one) => muteTargetKey(one.targetType, one.targetId))).to.deep.equal(
      [muteTargetKey('community', 'c-big')],
    );
    expect(returned).to.equal(1);
  });

  it('a post record counting 1,500 kept posts reads its recipients’ spans by owner, not a $in of every post’s targets', async () => {
    const posts = Array.from({ length: 1_500 }, (_, n) =>
      aPost(`author-${n}`, { id: `p-${n}`, at: 5_000 + n, communityId: 'c-big' }),
    );
    const recipients = new Set([userOf(1_000), 'u-without-mutes']);
    const spans = await spansCovering(db!, posts, recipients);
    expect(
      spans
        .get(userOf(1_000))
        ?.map((one) => muteTargetKey(one.targetType, one.targetId))
        .sort(),
    ).to.deep.equal([muteTargetKey('community', 'c-big'), muteTargetKey('user', 'author-1200')].sort());
    expect(spans.has('u-without-mutes')).to.equal(false);
    expect(filters).to.have.lengthOf(1);
    expect(filters[0]).to.not.have.property('target');
    expect(returned).to.equal(2);
  });

  // A removal recomputes a community's post records: every member's, on every post it kept. One
  // `$in` of them all grew with the community, past the 16 MiB a command may hold.
  it('a recompute for 25,000 recipients on 1,500 kept posts reads by owner, OWNERS_PER_QUERY at a time', async () => {
    const posts = Array.from({ length: 1_500 }, (_, n) =>
      aPost(`author-${n}`, { id: `p-${n}`, at: 5_000 + n, communityId: 'c-big' }),
    );
    const recipients = new Set(Array.from({ length: 25_000 }, (_, n) => userOf(n)));
    const spans = await spansCovering(db!, posts, recipients);
    expect(spans.size).to.equal(1_001);
    expect(spans.get(userOf(1_000))).to.have.lengthOf(2);
    expect(filters).to.have.lengthOf(Math.ceil(25_000 / OWNERS_PER_QUERY));
    for (const filter of filters) {
      expect(filter).to.not.have.property('target');
      expect((filter as { userId: { $in: string[] } }).userId.$in.length).to.be.at.most(OWNERS_PER_QUERY);
    }
  });

  it('a fan-out batch of 1,500 recipients reads by target, as many spans as they hold there', async () => {
    const recipients = new Set(Array.from({ length: 1_500 }, (_, n) => userOf(n)));
    const post = aPost('author-1200', { id: 'p-new', at: 9_000, communityId: 'c-big' });
    const spans = await spansCovering(db!, [post], recipients);
    expect(spans.size).to.equal(1_001);
    expect(spans.get(userOf(1_000))).to.have.lengthOf(2);
    expect(filters[0]).to.not.have.property('userId');
    expect(returned).to.equal(1_002);
  });

  // Ended spans stay while a record of the user counts from before their end (an active
  // community's post record never expires): GET and PUT mutes read every one the user ever kept,
  // and judged them in the process.
  it('the mutes in force read the spans in force only, not every span the user kept', async () => {
    const ended = (n: number): MuteDoc => ({
      ...span('u-spans', 'post', `p-ended-${n}`),
      _id: JSON.stringify(['u-spans', 'post', `p-ended-${n}`, 1_000]),
      ...(n % 2 === 0 ? { until: 2_000 } : { removedAt: 2_000 }),
    });
    await db!
      .collection<MuteDoc>(TRAY_MUTES)
      .insertMany([
        ...Array.from({ length: 500 }, (_, n) => ended(n)),
        span('u-spans', 'post', 'p-on'),
        { ...span('u-spans', 'user', 'u-later'), until: 20_000 },
        { ...span('u-spans', 'community', 'c-on'), removedAt: 20_000 },
      ]);
    returned = 0;
    const inForce = await createMongoMutes(db!).mutesInForce('u-spans', 10_000);
    expect(inForce.map((mute) => mute.targetId).sort()).to.deep.equal(['c-on', 'p-on', 'u-later']);
    expect(returned, 'spans the server sent').to.equal(3);
  });
});
