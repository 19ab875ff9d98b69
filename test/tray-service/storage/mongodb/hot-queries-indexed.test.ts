import { expect } from 'chai';
import { MongoClient, type CommandStartedEvent, type Db, type Document } from 'mongodb';
import { trayCollections } from '../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { createMongoBlockList } from '../../../../tray-service/storage/mongodb/block-list/mongo-block-list.ts';
import { createEventRollups } from '../../../../tray-service/storage/mongodb/events/event-rollups.ts';
import { createEventsQueries } from '../../../../tray-service/storage/mongodb/events/event-reads.ts';
import { purgeExpired } from '../../../../tray-service/storage/mongodb/purge-expired.ts';
import { createMongoLatestTimes } from '../../../../tray-service/storage/mongodb/records/mongo-latest-times.ts';
import { createMongoRecords } from '../../../../tray-service/storage/mongodb/records/mongo-records.ts';
import { createMongoInbox } from '../../../../tray-service/storage/mongodb/inbox/mongo-inbox.ts';
import { createMongoRemovalOutcomes } from '../../../../tray-service/storage/mongodb/removals/removal-outcomes.ts';
import {
  MEMBERSHIP_CHANGES,
  TRAY_CLEARS,
  TRAY_READ_STATE,
} from '../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import type { MembershipChangeDoc } from '../../../../tray-service/storage/mongodb/collections/membership-changes-collection.ts';
import { processJob, type ProcessOptions } from './support/process-job.ts';
import { assertIndexServed } from '../../../support/assert-index-served.ts';
import type { Selection } from '../../../support/declared-index-serving.ts';
import { ensureTestCollections } from '../../../support/ensure-test-collections.ts';
import { uniqueName } from '../../../support/suite-resources.ts';
import { testStack } from '../../../support/test-stack.ts';
import {
  commentEvent,
  dedupeKeyOf,
  membershipEvent,
  minute,
  postDeleteEvent,
  postEvent,
  reactionEvent,
  userDeleteEvent,
  type TestEnvelope,
} from '../../worker/event-builder.ts';
import { jobDataOf } from '../../worker/worker-harness.ts';
import { MAX_MUTES_IN_FORCE } from '../../../../tray-service/domain/mute.ts';

const options: ProcessOptions = { eventsRetentionDays: 30, trayRetentionDays: 90, fanOutBatch: 10_000 };

/** Commands that select no documents by a filter: nothing for an index to serve. */
const UNSELECTIVE = new Set([
  'insert',
  'getMore',
  'killCursors',
  'createIndexes',
  'listIndexes',
  'listCollections',
  'create',
  'drop',
  'dropDatabase',
  'endSessions',
  'hello',
  'isMaster',
  'ping',
  'buildInfo',
  'explain',
]);

/**
 * The filters (and sorts) of every find, count (countDocuments), distinct, findAndModify, update and
 * delete the client sent (command monitoring). A command this cannot read is a selection it cannot
 * check: it is returned as `unreadable`, and a test fails on it rather than pass it unchecked.
 */
function selections(event: CommandStartedEvent): (Selection | { unreadable: string })[] {
  const { command } = event;
  const collection = String(command[event.commandName] ?? '');
  switch (event.commandName) {
    case 'find':
      return [
        {
          command: 'find',
          collection,
          filter: (command.filter ?? {}) as Document,
          ...(command.sort ? { sort: command.sort as Document } : {}),
        },
      ];
    case 'count':
      return [{ command: 'count', collection, filter: (command.query ?? {}) as Document }];
    case 'distinct':
      return [{ command: 'find', collection, filter: (command.query ?? {}) as Document }];
    case 'findAndModify':
      return [
        {
          command: command.sort ? 'find' : 'update',
          collection,
          filter: (command.query ?? {}) as Document,
          ...(command.sort ? { sort: command.sort as Document } : {}),
        },
      ];
    case 'aggregate': {
      // countDocuments, and the rollups' $match then $group: a pipeline whose first stage is the
      // filter. A later $sort (sorting in memory) or no leading $match is not read here.
      const [first, ...rest] = (command.pipeline ?? []) as Document[];
      if (!first?.$match || rest.some((stage) => '$sort' in stage))
        return [{ unreadable: `aggregate ${collection} ${JSON.stringify(command.pipeline)}` }];
      return [{ command: 'count', collection, filter: first.$match as Document }];
    }
    case 'update':
      return ((command.updates ?? []) as { q: Document }[]).map((u) => ({
        command: 'update',
        collection,
        filter: u.q,
      }));
    case 'delete':
      return ((command.deletes ?? []) as { q: Document }[]).map((d) => ({
        command: 'delete',
        collection,
        filter: d.q,
      }));
    default:
      return UNSELECTIVE.has(event.commandName) || event.databaseName === 'admin'
        ? []
        : [{ unreadable: `${event.commandName} ${collection}` }];
  }
}

// Every query the worker and the API run on a hot path must be answered from an index on MongoDB:
// one no index serves reads the whole collection, a sort no index gives sorts in memory, and a
// count that needs the documents reads them (docs/storage.md). The filters and sorts are the ones
// the code really sends, captured while it runs; on FerretDB they are checked against the declared
// indexes by MongoDB's planning rules (test/support/assert-index-served.ts).
describe('hot queries are served by an index (explain)', function () {
  this.timeout(120_000);
  const dbName = uniqueName('test');
  let client: MongoClient | undefined;
  let db: Db | undefined;
  const sent: Selection[] = [];
  const unreadable: string[] = [];

  before(async () => {
    client = new MongoClient(testStack().mongoUri, { monitorCommands: true });
    client.on('commandStarted', (event) => {
      for (const selection of selections(event)) {
        if ('unreadable' in selection) unreadable.push(selection.unreadable);
        else sent.push(selection);
      }
    });
    await client.connect();
    db = client.db(dbName);
    await ensureTestCollections(db, trayCollections);
  });
  after(async () => {
    await db?.dropDatabase().catch(() => undefined);
    await client?.close();
  });

  async function expectServed(run: () => Promise<unknown>): Promise<void> {
    sent.length = 0;
    unreadable.length = 0;
    await run();
    expect(unreadable, 'commands whose selection this test cannot check').to.deep.equal([]);
    const distinct = new Map(
      sent.map((s) => [JSON.stringify([s.command, s.collection, s.filter, s.sort]), s]),
    );
    expect(distinct.size, 'the operation sent no query').to.be.above(0);
    for (const selection of distinct.values()) await assertIndexServed(db!, selection, trayCollections);
  }
  const process = (envelope: TestEnvelope) => () => processJob(db!, jobDataOf(envelope), options);

  it('membership join and leave', async () => {
    await expectServed(process(membershipEvent('join', ['u-a', 'u-b', 'u-c', 'u-d'], 'c-x')));
  });
  it('a community post fanned out, then grouped into the members’ records', async () => {
    await expectServed(
      process(postEvent({ postId: 'p-1', communityId: 'c-x', author: 'u-a', createdAt: minute(1) })),
    );
    await expectServed(
      process(postEvent({ postId: 'p-2', communityId: 'c-x', author: 'u-b', createdAt: minute(2) })),
    );
  });
  it('a join processed after the posts it precedes (backfill from the stored events), and a leave', async () => {
    await expectServed(process(membershipEvent('join', ['u-e'], 'c-x', minute(0))));
    await expectServed(process(membershipEvent('leave', ['u-e'], 'c-x', minute(3))));
  });
  it('a member’s changes older than the tray’s retention pruned', async () => {
    // A join and a leave the tray processed when they happened, 100 and 95 days ago.
    const daysAgo = (days: number) => Date.now() - days * 86_400_000;
    const changes = db!.collection<MembershipChangeDoc>(MEMBERSHIP_CHANGES);
    await changes.insertMany(
      (
        [
          [true, 100],
          [false, 95],
        ] as const
      ).map(([joined, days], n) => ({
        _id: JSON.stringify(['c-x', 'u-f', daysAgo(days), joined]),
        communityId: 'c-x',
        userId: 'u-f',
        member: JSON.stringify(['c-x', 'u-f']),
        joined,
        at: daysAgo(days),
        processed: n + 1,
        processedAt: daysAgo(days),
      })),
    );
    await expectServed(process(membershipEvent('join', ['u-f'], 'c-x', new Date(daysAgo(94)).toISOString())));
    // The join of 100 days ago went.
    expect(await changes.countDocuments({ userId: 'u-f' })).to.equal(2);
  });
  it('a comment and a reaction grouped into the author’s records', async () => {
    await expectServed(
      process(commentEvent({ postId: 'p-1', commentId: 'cm-1', author: 'u-c', createdAt: minute(3) })),
    );
    await expectServed(
      process(commentEvent({ postId: 'p-1', commentId: 'cm-2', author: 'u-d', createdAt: minute(4) })),
    );
    await expectServed(
      process(reactionEvent({ postId: 'p-1', reactionId: 'r-1', author: 'u-c', createdAt: minute(5) })),
    );
  });
  /** The port's records and latest times on this database. */
  const lastRead = () => createMongoLatestTimes(db!, TRAY_READ_STATE, 'lastReadAt');
  const trayRecords = () => createMongoRecords(db!, { lastRead: lastRead() });
  it('the history pages (v3 and v2), page count and unread count', async () => {
    const records = trayRecords();
    const now = Date.now();
    await expectServed(() => records.pageAfter('u-c', undefined, 10, now));
    await expectServed(() => records.pageNumber('u-c', 1, 10, now, ['mention']));
    await expectServed(() => records.count('u-c', now));
    await expectServed(() => records.countUnread('u-c', 0, now));
  });
  it('mark read, mark all as read, last read, delete all', async () => {
    const records = trayRecords();
    const now = Date.now();
    await expectServed(() => records.markRead('u-c', 'post', 'c-x', now));
    await expectServed(() => records.markAllRead('u-d', now));
    const readState = lastRead();
    await expectServed(() => readState.record('u-c', now));
    await expectServed(() => readState.latest('u-c'));
    await expectServed(() => records.countUnread('u-c', 'recorded', now));
    await expectServed(() => records.deleteAll('u-d'));
  });
  it('the inbox: every view, the unseen count, many users’ counts, marks by ids and all, last-read’s seen mark, the wake-up, mutes', async () => {
    const inbox = createMongoInbox(db!);
    const now = Date.now();
    for (const view of ['inbox', 'archived', 'snoozed', 'all'] as const)
      await expectServed(() => inbox.page('u-c', view, undefined, 10, now));
    await expectServed(() => inbox.countUnseen('u-c', now));
    // Many users' counts at once (the live streams'), users with and without a last-read time.
    await expectServed(() => inbox.countInboxes(['u-c', 'u-d', 'u-e'], now));
    for (const view of ['inbox', 'archived', 'snoozed', 'all'] as const)
      await expectServed(() => inbox.countView('u-c', view, now));
    await expectServed(() => inbox.mark('u-c', { kind: 'seen', ids: 'all' }, now));
    await expectServed(() => inbox.mark('u-c', { kind: 'archive', ids: 'all', readOnly: true }, now));
    await expectServed(() =>
      inbox.mark('u-c', { kind: 'snooze', ids: ['comment_p-1_u-c'], until: now + 1 }, now),
    );
    await expectServed(() => inbox.seeThrough('u-c', now));
    await expectServed(() => inbox.wakeDue(now + 2, 10));
    const target = { targetType: 'post', targetId: 'p-1' } as const;
    await expectServed(() => inbox.putMute('u-c', target, null, now, 90, MAX_MUTES_IN_FORCE));
    await expectServed(() => inbox.mutesInForce('u-c', now));
    await expectServed(() => inbox.removeMute('u-c', target, now + 1, 90));
  });
  it('a live stream’s catch-up, its check of removed records, and the delete-all mark it reads', async () => {
    const records = trayRecords();
    await expectServed(() => records.changedSince('u-c', 0, Date.now()));
    // A later page, continued from the last record of the one before (an escaped key: its stored
    // _id looked up too).
    const after = { changedAt: 1, key: 'comment_p%5F1_u-c' };
    await expectServed(() => records.changedSince('u-c', 0, Date.now(), { limit: 100, after }));
    // A few keys one by one, many in one query: both ways.
    await expectServed(() => records.byKeys('u-c', ['comment_p-1_u-c'], Date.now()));
    const many = Array.from({ length: 12 }, (_, n) => `comment_p-${n}_u-c`);
    await expectServed(() => records.byKeys('u-c', many, Date.now()));
    const clears = createMongoLatestTimes(db!, TRAY_CLEARS, 'clearedAt');
    await expectServed(() => clears.record('u-d', Date.now()));
    await expectServed(() => clears.latest('u-d'));
  });
  it('a deleted post: its comments’ and reactions’ records, and the members’ post records', async () => {
    await expectServed(process(postDeleteEvent({ postId: 'p-1' })));
    // And a comment on it arriving late: a no-op.
    await expectServed(
      process(commentEvent({ postId: 'p-1', commentId: 'cm-9', author: 'u-d', createdAt: minute(6) })),
    );
  });
  it('what a removal event changed, as the admin API reads it (its counts, a page of its changes)', async () => {
    const deletion = postDeleteEvent({ postId: 'p-2' });
    await process(deletion)();
    const outcomes = createMongoRemovalOutcomes(db!);
    const key = dedupeKeyOf(deletion);
    await expectServed(() => outcomes.outcome(key));
    await expectServed(() => outcomes.changes(key, 2));
    await expectServed(() => outcomes.changes(key, 2, { userId: 'u-a', key: 'post_c-x_u-a' }));
  });
  it('a deleted user', async () => {
    await expectServed(process(userDeleteEvent('u-c')));
  });
  it('the block list', async () => {
    const blocks = createMongoBlockList(db!);
    await expectServed(() => blocks.block('u-a', 'u-b'));
    // Under the owner's write lock: the entry looked up, the owner's entries counted.
    await expectServed(() => blocks.block('u-a', 'u-c', 10));
    await expectServed(() => blocks.page('u-a', undefined, 10));
    await expectServed(() => blocks.blockedAmong('u-a', ['u-b', 'u-c']));
  });
  it('the admin event list filtered by event name, webhook or status', async () => {
    const events = createEventsQueries(db!);
    await expectServed(() => events.list({ event: 'post.didCreate' }, 10));
    await expectServed(() => events.list({ webhook: 'main', status: 'applied' }, 10));
    await expectServed(() => events.list({ status: 'invalid' }, 10));
  });
  it('the admin event list filtered by acting user, community or one moderation action', async () => {
    const events = createEventsQueries(db!);
    await expectServed(() => events.list({ userId: 'u-a' }, 10));
    await expectServed(() => events.list({ communityId: 'c-x', event: 'post.didCreate' }, 10));
    await expectServed(() => events.list({ moderation: 'flag' }, 10));
  });
  it('the events console’s charts, a day of minutes at a time, and their counters', async () => {
    const rollups = createEventRollups(db!);
    const at = new Date();
    const event = { _id: 'k-chart', event: 'post.didCreate', receivedAt: at, storedAt: at, expiresAt: at };
    await expectServed(() => rollups.countStored(event));
    await expectServed(() => rollups.releaseStored(event));
    await expectServed(() => rollups.countApplied(event, at));
    await expectServed(() => rollups.releaseApplied(event));
    await expectServed(() => rollups.perMinute(new Date(at.getTime() - 86_400_000), at));
    await expectServed(() => rollups.lagPerMinute(new Date(at.getTime() - 86_400_000), at));
  });
  it('the purge', async () => {
    await expectServed(() => purgeExpired(db!, new Date()));
    // Past the removed mute's retention: its owner's records are read for the records it judges.
    await expectServed(() => purgeExpired(db!, new Date(Date.now() + 100 * 86_400_000)));
  });
});
