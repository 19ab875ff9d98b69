import { expect } from 'chai';
import { MongoClient, type CommandStartedEvent } from 'mongodb';
import { EVENTS } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import type { EventDoc } from '../../../../../tray-service/storage/mongodb/collections/events-collection.ts';
import { CONSOLE_READ_MAX_TIME_MS } from '../../../../../tray-service/storage/mongodb/driver/console-read-time-limit.ts';
import { eventDocument } from '../../../../../tray-service/storage/mongodb/events/event-document.ts';
import { createEventsQueries } from '../../../../../tray-service/storage/mongodb/events/event-reads.ts';
import { createMongoEvents } from '../../../../../tray-service/storage/mongodb/events/mongo-events.ts';
import { createMongoDecisions } from '../../../../../tray-service/storage/mongodb/moderation/mongo-decisions.ts';
import { isStorageUnavailable } from '../../../../../tray-service/storage/storage-unavailable.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { testStack } from '../../../../support/test-stack.ts';

const MINUTE = 60_000;
const now = new Date(Math.floor(Date.now() / MINUTE) * MINUTE);

// A console filter whose fields are each common but rarely together scans the events over its
// whole range: without a time limit the read held one of the shared pool's connections for
// minutes. The server stops it at the limit (MaxTimeMSExpired), and the API answers 503, as
// PostgreSQL's PG_STATEMENT_TIMEOUT_MS makes it.
describe('storage/mongodb console reads: time limit', () => {
  const mongo = useMongo();

  it('sends CONSOLE_READ_MAX_TIME_MS with the events list, count and the decisions list', async () => {
    const client = new MongoClient(testStack().mongoUri, { monitorCommands: true });
    const sent: CommandStartedEvent[] = [];
    client.on('commandStarted', (event) => {
      if (['find', 'aggregate', 'count'].includes(event.commandName)) sent.push(event);
    });
    try {
      await client.connect();
      const db = client.db(mongo.dbName);
      const events = createMongoEvents(db);
      const filter = { webhook: 'wh-limit', userId: 'u-ana' };
      await events.list(filter, 10);
      await events.list(filter, 10, undefined, { maxBytes: 1024 });
      await events.count(filter);
      await events.count(filter, undefined, 1_000);
      await createMongoDecisions(db).list({ rule: 'blocked-words', userId: 'u-ana' }, 10);
    } finally {
      await client.close();
    }
    expect(sent.map((event) => [event.commandName, event.command.maxTimeMS])).to.deep.equal([
      ['find', CONSOLE_READ_MAX_TIME_MS],
      ['find', CONSOLE_READ_MAX_TIME_MS],
      ['aggregate', CONSOLE_READ_MAX_TIME_MS],
      ['aggregate', CONSOLE_READ_MAX_TIME_MS],
      ['find', CONSOLE_READ_MAX_TIME_MS],
    ]);
  });

  it('stops a list or count that scans past its limit with an error read as storage unavailable (503)', async function () {
    this.timeout(120_000);
    // Each field common, never together: FerretDB reads every event to find none.
    const docs = Array.from({ length: 20_000 }, (_, n) =>
      eventDocument(
        {
          key: `scan-${n}`,
          event: n % 2 === 0 ? 'post.didCreate' : 'comment.didCreate',
          data: { n },
          webhook: n % 2 === 0 ? 'wh-scan' : 'wh-other',
          receivedAt: new Date(now.getTime() - (n % 600) * MINUTE),
        },
        { status: 'applied' },
        7,
        now,
      ),
    );
    for (let start = 0; start < docs.length; start += 5_000)
      await mongo.db.collection<EventDoc>(EVENTS).insertMany(docs.slice(start, start + 5_000));
    const queries = createEventsQueries(mongo.db, () => now, 1);
    const filter = { event: 'comment.didCreate', webhook: 'wh-scan' };
    for (const read of [() => queries.list(filter, 50), () => queries.count(filter)]) {
      const error: unknown = await read().then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error, 'the read ran past its limit').to.deep.include({ code: 50 });
      expect(isStorageUnavailable(error)).to.equal(true);
    }
    // Within the limit, the same reads answer.
    const unhurried = createEventsQueries(mongo.db, () => now);
    expect((await unhurried.list(filter, 50)).items).to.deep.equal([]);
    expect(await unhurried.count(filter)).to.equal(0);
  });
});
