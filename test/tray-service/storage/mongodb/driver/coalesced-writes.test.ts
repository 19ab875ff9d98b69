import { expect } from 'chai';
import type { CommandStartedEvent } from 'mongodb';
import {
  bulkWriteCoalesced,
  insertCoalesced,
} from '../../../../../tray-service/storage/mongodb/driver/coalesced-writes.ts';
import { useMongo } from '../../../../support/suite-resources.ts';

interface Doc {
  _id: string;
  n: number;
}

// The worker's inserts and record writes share commands with its concurrent jobs' (groupCommit):
// each caller must still learn exactly what happened to its own documents.
describe('coalesced writes (one command for concurrent callers)', () => {
  const mongo = useMongo();
  const commands: string[] = [];
  const count = (event: CommandStartedEvent) => {
    if (event.databaseName === mongo.dbName) commands.push(event.commandName);
  };
  before(() => mongo.client.on('commandStarted', count));
  after(() => mongo.client.off('commandStarted', count));
  beforeEach(() => (commands.length = 0));

  it('inserts concurrent callers’ documents in fewer commands, each told its own duplicates', async () => {
    await mongo.db.collection<Doc>('inserts').insertOne({ _id: 'old', n: 0 });
    commands.length = 0;
    const calls = Array.from({ length: 20 }, (_, i) =>
      insertCoalesced<Doc>(mongo.db, 'inserts', [
        { _id: `d${i}`, n: i },
        // Every caller also inserts one document that already exists or that another inserts.
        { _id: i % 2 === 0 ? 'old' : 'shared', n: 100 + i },
      ]),
    );
    const duplicates = await Promise.all(calls);
    expect(commands.filter((name) => name === 'insert').length).to.be.below(20);
    // Index 0 (its own document) is never a duplicate; index 1 always is, but for the one caller
    // whose 'shared' went in first.
    for (const found of duplicates)
      expect(found).to.satisfy((d: number[]) => d.length <= 1 && !d.includes(0));
    const stored = await mongo.db.collection<Doc>('inserts').find().toArray();
    expect(stored.map((doc) => doc._id).sort()).to.deep.equal(
      ['old', 'shared', ...Array.from({ length: 20 }, (_, i) => `d${i}`)].sort(),
    );
    const shared = stored.find((doc) => doc._id === 'shared');
    const winners = duplicates.flatMap((found, i) => (i % 2 === 1 && found.length === 0 ? [i] : []));
    expect(winners, 'exactly one caller inserted "shared"').to.deep.equal([(shared?.n ?? 0) - 100]);
    expect(stored.find((doc) => doc._id === 'old')?.n).to.equal(0);
  });

  // A document the driver cannot send (over the 16 MiB limit) fails the command before it is sent:
  // the batch is run again call by call, so only its own caller fails.
  it('fails only the caller whose documents cannot be sent, not the callers batched with it', async () => {
    const huge = 'x'.repeat(17 * 1024 * 1024);
    // Same tick, so one batch.
    const [poison, good] = await Promise.allSettled([
      insertCoalesced<Doc & { pad?: string }>(mongo.db, 'failing', [{ _id: 'a', n: 1, pad: huge }]),
      insertCoalesced<Doc>(mongo.db, 'failing', [{ _id: 'b', n: 2 }]),
    ]);
    expect(poison.status).to.equal('rejected');
    expect(good).to.deep.equal({ status: 'fulfilled', value: [] });
    const stored = await mongo.db.collection<Doc>('failing').find().toArray();
    expect(stored).to.deep.equal([{ _id: 'b', n: 2 }]);
  });

  // A document the server refuses (an array is no `_id`) fails on its own in an unordered insert,
  // while the batch's other documents go in: each caller is told what happened to its own, and a
  // caller whose document went in is not told it was a duplicate.
  it('fails only the caller whose document the server refuses, the others told theirs went in', async () => {
    commands.length = 0;
    const [poison, good, redelivered] = await Promise.allSettled([
      insertCoalesced<{ _id: unknown; n: number }>(mongo.db, 'refused', [{ _id: ['not', 'an', 'id'], n: 1 }]),
      insertCoalesced<Doc>(mongo.db, 'refused', [{ _id: 'c', n: 3 }]),
      insertCoalesced<Doc>(mongo.db, 'refused', [{ _id: 'c', n: 4 }]),
    ]);
    expect(poison.status).to.equal('rejected');
    expect([good, redelivered]).to.deep.equal([
      { status: 'fulfilled', value: [] },
      { status: 'fulfilled', value: [0] },
    ]);
    expect(
      commands.filter((name) => name === 'insert'),
      'one command, not run again',
    ).to.have.length(1);
    expect(await mongo.db.collection<Doc>('refused').find().toArray()).to.deep.equal([{ _id: 'c', n: 3 }]);
  });

  it('writes concurrent callers’ bulks as one, true only when every operation matched', async () => {
    const docs = mongo.db.collection<Doc>('bulks');
    await docs.insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: `b${i}`, n: 0 })));
    commands.length = 0;
    const all = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        bulkWriteCoalesced<Doc>(mongo.db, 'bulks', [
          { updateMany: { filter: { _id: `b${i}`, n: 0 }, update: { $set: { n: 1 } } } },
        ]),
      ),
    );
    expect(all).to.deep.equal(Array.from({ length: 10 }, () => true));
    expect(commands.filter((name) => name === 'update').length).to.be.below(10);
    expect(await docs.countDocuments({ n: 1 })).to.equal(10);

    // One operation of the shared bulk misses its filter: nobody can tell whose, so all are told.
    const mixed = await Promise.all([
      bulkWriteCoalesced<Doc>(mongo.db, 'bulks', [
        { updateMany: { filter: { _id: 'b0', n: 1 }, update: { $set: { n: 2 } } } },
      ]),
      bulkWriteCoalesced<Doc>(mongo.db, 'bulks', [
        { updateMany: { filter: { _id: 'b1', n: 0 }, update: { $set: { n: 2 } } } },
      ]),
    ]);
    expect(mixed).to.deep.equal([false, false]);
    expect((await docs.findOne({ _id: 'b0' }))?.n, 'the matching write still landed').to.equal(2);
    expect((await docs.findOne({ _id: 'b1' }))?.n).to.equal(1);
  });

  it('fails only the caller of a bulk operation that cannot be sent, not the callers batched with it', async () => {
    const docs = mongo.db.collection<Doc>('isolated-bulks');
    await docs.insertMany([
      { _id: 'i0', n: 0 },
      { _id: 'i1', n: 0 },
    ]);
    const [poison, good] = await Promise.allSettled([
      // BSON refuses U+0000 in a field name: the driver throws before the command is sent.
      bulkWriteCoalesced<Doc>(mongo.db, 'isolated-bulks', [
        { updateMany: { filter: { _id: 'i0', n: 0 }, update: { $set: { 'n\u0000': 1 } } } },
      ]),
      bulkWriteCoalesced<Doc>(mongo.db, 'isolated-bulks', [
        { updateMany: { filter: { _id: 'i1', n: 0 }, update: { $set: { n: 1 } } } },
      ]),
    ]);
    expect(poison.status).to.equal('rejected');
    expect(good).to.deep.equal({ status: 'fulfilled', value: true });
    expect((await docs.findOne({ _id: 'i1' }))?.n).to.equal(1);
  });

  it('refuses a bulk larger than one command may carry', async () => {
    const ops = Array.from({ length: 1_001 }, (_, i) => ({
      updateMany: { filter: { _id: `x${i}` }, update: { $set: { n: 1 } } },
    }));
    await expect(bulkWriteCoalesced<Doc>(mongo.db, 'bulks', ops)).to.be.rejectedWith(RangeError);
  });
});
