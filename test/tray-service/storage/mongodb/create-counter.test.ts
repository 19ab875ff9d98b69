import { expect } from 'chai';
import {
  countFilter,
  createCounter,
  type CountQuery,
  type Counter,
} from '../../../../tray-service/storage/mongodb/create-counter.ts';
import { detectStorage } from '../../../../tray-service/storage/mongodb/detect-storage.ts';
import { useMongo } from '../../../support/suite-resources.ts';
import { testStack } from '../../../support/test-stack.ts';

const T = Date.UTC(2026, 10, 22);

// On FerretDB on PostgreSQL the counter runs SQL over FerretDB's own storage: it must give the
// same number as the driver's countDocuments for every kind of condition it takes.
describe('createCounter (counts in PostgreSQL on FerretDB)', () => {
  const mongo = useMongo();
  let counter: Counter | undefined;
  before(async () => {
    await mongo.db.collection('things').insertMany(
      Array.from({ length: 60 }, (_, n) => ({
        _id: `t${n}` as never,
        userId: `u${n % 3}`,
        hasRead: n % 4 === 0,
        verb: ['post', 'mention', 'comment'][n % 3],
        at: T + n * 1000 + 0.5,
        expiresAt: new Date(T + n * 60_000),
        ...(n % 10 === 0 ? {} : { tag: 'x' }),
      })),
    );
    const storage = await detectStorage(mongo.db);
    expect(storage, 'the test stack is FerretDB on PostgreSQL').to.equal('ferretdb-postgresql');
    counter = createCounter(mongo.db, { storage, postgresUrl: testStack().postgresUrl });
  });
  after(async () => counter?.close());

  const queries: [string, CountQuery][] = [
    ['one equality', { equal: { userId: 'u1' } }],
    ['two equalities, one boolean', { equal: { userId: 'u1', hasRead: false } }],
    ['an exclusion', { equal: { userId: 'u2' }, notIn: { verb: ['mention'] } }],
    ['an exclusion on a field some lack', { equal: { userId: 'u0' }, notIn: { tag: ['x'] } }],
    ['a number above', { equal: { userId: 'u0' }, above: { at: T + 30_000.5 } }],
    ['a date above', { equal: { hasRead: false }, above: { expiresAt: new Date(T + 20 * 60_000) } }],
    ['a number below', { equal: { userId: 'u1' }, below: { at: T + 40_000.5 } }],
    [
      'a range: above one field, below another',
      { equal: { userId: 'u2' }, above: { expiresAt: new Date(T + 5 * 60_000) }, below: { at: T + 50_000 } },
    ],
    ['nothing matching', { equal: { userId: 'nobody' } }],
  ];
  for (const [name, query] of queries) {
    it(`counts as countDocuments does: ${name}`, async () => {
      const expected = await mongo.db.collection('things').countDocuments(countFilter(query));
      expect(await counter!.count('things', query)).to.equal(expected);
    });
  }

  // countBy: the same groups, counts and newest values as the counter used on MongoDB (which
  // groups the selected documents itself), newest first; documents without the field left out.
  const driverCounter = () => createCounter(mongo.db, { storage: 'mongodb' });
  for (const [name, query] of queries) {
    it(`counts by a field as the MongoDB counter does: ${name}`, async () => {
      for (const by of ['verb', 'tag']) {
        const fields = { by, newest: 'at' };
        const expected = await driverCounter().countBy('things', query, fields);
        const groups = await counter!.countBy('things', query, fields);
        expect(groups).to.deep.equal(expected);
        expect(groups.map((group) => group.newest)).to.deep.equal(
          groups.map((group) => group.newest).sort((a, b) => b - a),
        );
      }
    });
  }

  it('counts by a field: the groups of a known case', async () => {
    const groups = await counter!.countBy(
      'things',
      { equal: { userId: 'u1' } },
      { by: 'verb', newest: 'at' },
    );
    // n % 3 === 1: verb 'mention', n = 1, 4, ... 58 (20 documents, the newest n = 58).
    expect(groups).to.deep.equal([{ key: 'mention', count: 20, newest: T + 58_000.5 }]);
    expect(
      await counter!.countBy('things', { equal: { userId: 'nobody' } }, { by: 'verb', newest: 'at' }),
    ).to.deep.equal([]);
  });

  it('counts 0 in a collection that does not exist yet, and finds it once it does', async () => {
    expect(await counter!.count('later', { equal: { userId: 'u1' } })).to.equal(0);
    expect(
      await counter!.countBy('later', { equal: { userId: 'u1' } }, { by: 'v', newest: 'at' }),
    ).to.deep.equal([]);
    await mongo.db.collection('later').insertOne({ userId: 'u1' });
    await mongo.db.collection('later').drop();
    await mongo.db.collection('later').insertMany([{ userId: 'u1' }, { userId: 'u1' }]);
    expect(await counter!.count('later', { equal: { userId: 'u1' } })).to.equal(2);
  });
});
