import { expect } from 'chai';
import { MongoClient, type Collection, type Db, type Document, type FindCursor } from 'mongodb';
import { pino } from 'pino';
import type { InboxRecord } from '../../../../../tray-service/domain/inbox-record.ts';
import { TRAY_RECORDS } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { createMongoInbox } from '../../../../../tray-service/storage/mongodb/inbox/mongo-inbox.ts';
import { createMongoRecords } from '../../../../../tray-service/storage/mongodb/records/mongo-records.ts';
import { openMongoStorage } from '../../../../../tray-service/storage/mongodb/open-mongo-storage.ts';
import type { InboxMark, InboxPort, TrayStorage } from '../../../../../tray-service/storage/port.ts';
import { aComment } from '../../../../support/activity-builder.ts';
import { uniqueName } from '../../../../support/suite-resources.ts';
import { testStack } from '../../../../support/test-stack.ts';
import { at, NOW } from '../../conformance/case-fixtures.ts';

/**
 * `all` covers the records in the inbox (docs/tray-api.md). A mark of all reads the inbox, then
 * writes each record by compare-and-set; a record a concurrent mark changed in between is read
 * again, and must be judged again: no longer in the inbox, it is not the mark's to change.
 */
describe('MongoDB inbox: marks of all meeting a concurrent mark', function () {
  this.timeout(60_000);
  const dbName = uniqueName('inbox');
  let client: MongoClient;
  let storage: TrayStorage;
  let inbox: InboxPort;

  before(async () => {
    storage = await openMongoStorage(testStack().mongoUri, dbName, {
      appName: 'tests',
      logger: pino({ level: 'silent' }),
    });
    if (!storage.inbox) throw new Error('the MongoDB storage has an inbox');
    inbox = storage.inbox;
    client = await MongoClient.connect(testStack().mongoUri);
  });
  after(async () => {
    await storage?.close();
    await client?.db(dbName).dropDatabase();
    await client?.close();
  });

  /**
   * The inbox on a Db whose read of the inbox's records (a find, then toArray or an iteration) runs
   * `between` once it has the records and before it hands them back (the array, or the iteration's
   * end): the mark then writes from records one of which `between` changed, as when another request
   * commits at that moment.
   */
  function inboxRacing(between: () => Promise<unknown>): InboxPort {
    return createMongoInbox(racingDb(between));
  }

  /** The database of inboxRacing, its records' read running `between`. */
  function racingDb(between: () => Promise<unknown>): Db {
    const db = client.db(dbName);
    let ran = false;
    const racingCursor = (cursor: FindCursor<Document>) =>
      new Proxy(cursor, {
        get(target, property, receiver) {
          if (property === Symbol.asyncIterator)
            return (): AsyncIterator<Document> => {
              const inner = target[Symbol.asyncIterator]();
              return {
                async next() {
                  const step = await inner.next();
                  if (step.done && !ran) {
                    ran = true;
                    await between();
                  }
                  return step;
                },
                return: async () => inner.return?.() ?? { done: true, value: undefined },
              };
            };
          if (property !== 'toArray') return Reflect.get(target, property, receiver) as unknown;
          return async () => {
            const found = await target.toArray();
            if (!ran) {
              ran = true;
              await between();
            }
            return found;
          };
        },
      });
    const racingRecords = (records: Collection) =>
      new Proxy(records, {
        get(target, property, receiver) {
          if (property !== 'find') return Reflect.get(target, property, receiver) as unknown;
          return (...args: Parameters<Collection['find']>) => racingCursor(target.find(...args));
        },
      });
    return new Proxy(db, {
      get(target, property, receiver) {
        if (property !== 'collection') return Reflect.get(target, property, receiver) as unknown;
        return (name: string) =>
          name === TRAY_RECORDS ? racingRecords(target.collection(name)) : target.collection(name);
      },
    }) as Db;
  }

  /** Three records of `userId`'s, the second snoozed while `mark` of all reads the inbox. */
  async function snoozedDuring(
    userId: string,
    mark: InboxMark,
  ): Promise<{ marked: InboxRecord[]; snoozed: InboxRecord }> {
    await storage.writes.applyPersonal(
      [0, 1, 2].map((n) =>
        aComment(
          `u-${n}`,
          { postId: `p-${n}-${userId}`, owner: userId },
          { id: `cm-${n}-${userId}`, at: at(1, n) },
        ),
      ),
      { now: NOW, retentionDays: 90 },
    );
    const { records } = await inbox.page(userId, 'all', undefined, 10, NOW);
    const target = records[1]?.key ?? '';
    const until = NOW + 3_600_000;
    const marked = await inboxRacing(() =>
      inbox.mark(userId, { kind: 'snooze', ids: [target], until }, NOW + 1),
    ).mark(userId, mark, NOW + 1);
    const after = await inbox.page(userId, 'all', undefined, 10, NOW + 1);
    const snoozed = after.records.find((record) => record.key === target);
    if (!snoozed) throw new Error('the snoozed record is gone');
    expect(snoozed.snoozedUntil, 'the snooze stands').to.equal(until);
    return { marked, snoozed };
  }

  it('archive all leaves a record snoozed while it read the inbox snoozed (it is no longer in the inbox)', async () => {
    const { marked, snoozed } = await snoozedDuring('u-ana', { kind: 'archive', ids: 'all' });
    expect(snoozed.archivedAt, 'archived').to.equal(null);
    expect(marked.map((record) => record.key)).to.not.include(snoozed.key);
    expect(marked).to.have.length(2);
  });

  it('seen all leaves a record snoozed while it read the inbox unseen', async () => {
    const { marked, snoozed } = await snoozedDuring('u-bob', { kind: 'seen', ids: 'all' });
    expect(snoozed.isSeen, 'seen').to.equal(false);
    expect(marked.map((record) => record.key)).to.not.include(snoozed.key);
    expect(marked).to.have.length(2);
  });

  /**
   * Three records of `userId`'s, the second made unread again by a new comment (written 1 ms after
   * the call's time, as a delivery landing while the mark runs is) once `mark` read the inbox.
   */
  async function deliveredDuring(userId: string, mark: (db: Db) => Promise<{ key: string }[]>) {
    const post = (n: number) => ({ postId: `p-${n}-${userId}`, owner: userId });
    await storage.writes.applyPersonal(
      [0, 1, 2].map((n) => aComment(`u-${n}`, post(n), { id: `cm-${n}-${userId}`, at: at(1, n) })),
      { now: NOW, retentionDays: 90 },
    );
    const { records } = await inbox.page(userId, 'all', undefined, 10, NOW);
    const target = records.find((record) => record.targetId === `p-1-${userId}`)?.key ?? '';
    const marked = await mark(
      racingDb(() =>
        storage.writes.applyPersonal([aComment('u-9', post(1), { id: `cm-9-${userId}`, at: at(2) })], {
          now: NOW + 2,
          retentionDays: 90,
        }),
      ),
    );
    const after = await inbox.page(userId, 'all', undefined, 10, NOW + 2);
    const delivered = after.records.find((record) => record.key === target);
    if (!delivered) throw new Error('the record delivered to is gone');
    expect(
      delivered.actors.map((actor) => actor.userId),
      'the new comment counts',
    ).to.include('u-9');
    expect(marked.map((record) => record.key)).to.not.include(target);
    expect(marked).to.have.length(2);
    return delivered;
  }

  it('seen, archive and read of all leave a record a delivery made unread while they read the inbox', async () => {
    const seen = await deliveredDuring('u-cy', (db) =>
      createMongoInbox(db).mark('u-cy', { kind: 'seen', ids: 'all' }, NOW + 1),
    );
    expect([seen.isSeen, seen.hasRead]).to.deep.equal([false, false]);
    const archived = await deliveredDuring('u-dee', (db) =>
      createMongoInbox(db).mark('u-dee', { kind: 'archive', ids: 'all' }, NOW + 1),
    );
    expect([archived.archivedAt, archived.snoozedUntil]).to.deep.equal([null, null]);
    const read = await deliveredDuring('u-eve', (db) =>
      createMongoRecords(db, { lastRead: storage.lastRead }).markAllRead('u-eve', NOW + 1),
    );
    expect([read.hasRead, read.isSeen]).to.deep.equal([false, false]);
  });
});

// "Mark all seen" is pressed again and again (the demo's button): a mark of all records already
// seen must not read them all only to change none (PostgreSQL's reads only those not seen).
describe('MongoDB inbox: seen of all', function () {
  this.timeout(60_000);
  const dbName = uniqueName('inbox-seen');
  let client: MongoClient;
  let storage: TrayStorage;
  const returned: number[] = [];

  before(async () => {
    storage = await openMongoStorage(testStack().mongoUri, dbName, {
      appName: 'tests',
      logger: pino({ level: 'silent' }),
    });
    client = new MongoClient(testStack().mongoUri, { monitorCommands: true });
    client.on('commandSucceeded', (event) => {
      const batch = (event.reply as { cursor?: { firstBatch?: unknown[] } }).cursor?.firstBatch;
      if (event.commandName === 'find' && batch) returned.push(batch.length);
    });
    await client.connect();
  });
  after(async () => {
    await storage?.close();
    await client?.db(dbName).dropDatabase();
    await client?.close();
  });

  it('reads only the records not seen yet', async () => {
    const userId = 'u-seen-all';
    await storage.writes.applyPersonal(
      [0, 1, 2].map((n) =>
        aComment(`u-${n}`, { postId: `p-${n}`, owner: userId }, { id: `cm-${n}`, at: at(1, n) }),
      ),
      { now: NOW, retentionDays: 90 },
    );
    const inbox = createMongoInbox(client.db(dbName));
    const { records } = await inbox.page(userId, 'all', undefined, 10, NOW);
    await inbox.mark(userId, { kind: 'seen', ids: records.slice(0, 2).map((record) => record.key) }, NOW + 1);
    returned.length = 0;
    expect(await inbox.mark(userId, { kind: 'seen', ids: 'all' }, NOW + 2)).to.have.length(1);
    expect(returned[0], 'records the mark read').to.equal(1);
    returned.length = 0;
    expect(await inbox.mark(userId, { kind: 'seen', ids: 'all' }, NOW + 3)).to.have.length(0);
    expect(returned[0], 'records the second mark read').to.equal(0);
  });
});
