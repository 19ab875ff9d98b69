import { expect } from 'chai';
import type { CommandStartedEvent } from 'mongodb';
import { readByIds } from '../../../../../tray-service/storage/mongodb/compare-and-set/read-by-ids.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { aTrayRecord, insertRecords } from '../../../../support/tray-record-builder.ts';

describe('readByIds', () => {
  const mongo = useMongo();
  const records = Array.from({ length: 1_005 }, (_, index) =>
    aTrayRecord({ userId: 'u-ana', targetId: `t-${index}` }),
  );
  const ids = records.map((record) => record._id);
  before(() => insertRecords(mongo.db, records));

  /** The find filters `read` sends (every test client monitors its commands). */
  async function filtersOf(read: () => Promise<unknown>): Promise<unknown[]> {
    const filters: unknown[] = [];
    const listen = (event: CommandStartedEvent) => {
      if (event.commandName === 'find') filters.push(event.command.filter);
    };
    mongo.client.on('commandStarted', listen);
    try {
      await read();
    } finally {
      mongo.client.off('commandStarted', listen);
    }
    return filters;
  }

  it('reads a job’s few keys as point reads, leaving out the missing ones', async () => {
    let found = new Map();
    const filters = await filtersOf(async () => {
      found = await readByIds(mongo.db, [ids[0]!, 'missing', ids[7]!]);
    });
    expect([...found.keys()].sort()).to.deep.equal([ids[0], ids[7]].sort());
    // The point reads go out at once, so the driver may send them in any order.
    const byId = (filter: unknown) => JSON.stringify(filter);
    expect(filters.map(byId).sort()).to.deep.equal(
      [{ _id: ids[0] }, { _id: 'missing' }, { _id: ids[7] }].map(byId).sort(),
    );
  });

  it('reads many keys by $in, a thousand per query, each record once', async () => {
    let found = new Map();
    const filters = await filtersOf(async () => {
      found = await readByIds(mongo.db, [...ids, 'missing']);
    });
    expect(found.size).to.equal(ids.length);
    expect(found.get(ids[1_004]!)).to.deep.include({ targetId: 't-1004' });
    expect(filters.map((filter) => (filter as { _id: { $in: string[] } })._id.$in.length)).to.deep.equal([
      1_000, 6,
    ]);
  });
});
