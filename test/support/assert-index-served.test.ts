import { expect } from 'chai';
import { pino } from 'pino';
import type { CollectionSpec } from '../../tray-service/storage/mongodb/collection-spec.ts';
import { ensureCollections } from '../../tray-service/storage/mongodb/ensure-collections.ts';
import type { CountQuery } from '../../tray-service/storage/mongodb/create-counter.ts';
import { assertCountServed, assertIndexServed } from './assert-index-served.ts';
import { useFerretOnPostgres } from './use-ferret-on-postgres.ts';

const items: CollectionSpec = { name: 'items', indexes: [], equalityFields: ['userId'] };

describe('assertIndexServed (FerretDB on PostgreSQL)', () => {
  const ferret = useFerretOnPostgres();
  const served = (filter: Record<string, unknown>, command?: 'find' | 'count' | 'update' | 'delete') =>
    assertIndexServed(ferret.db, 'items', filter, {
      postgresUrl: ferret.postgresUrl,
      ...(command ? { command } : {}),
    });

  before(async () => {
    await ensureCollections(ferret.db, [items], {
      logger: pino({ level: 'silent' }),
      postgresUrl: ferret.postgresUrl,
    });
    await ferret.db.collection('items').insertMany(
      Array.from({ length: 50 }, (_, n) => ({
        _id: `i${n}` as never,
        userId: `u${n % 5}`,
        a: { b: n },
        other: n,
      })),
    );
  });

  it('passes a top-level equality on an equality field, also with a further condition', async () => {
    await served({ userId: 'u1' });
    await served({ userId: 'u1', other: { $gt: 3 } });
  });

  it('passes an `_id` equality, and the same filter of a count, an update and a delete', async () => {
    await served({ _id: 'i3' });
    for (const command of ['count', 'update', 'delete'] as const) await served({ userId: 'u2' }, command);
  });

  it('fails `{_id: {$in: [...]}}`: FerretDB does not push $in down', async () => {
    await expect(served({ _id: { $in: ['i1', 'i2'] } })).to.be.rejectedWith(/not served by an index.*push/);
  });

  it('fails a dotted path', async () => {
    await expect(served({ 'a.b': 3 })).to.be.rejectedWith(/not served by an index/);
  });

  it('fails an equality on a field without a GIN index (pushed down, but scanned)', async () => {
    await expect(served({ other: 3 })).to.be.rejectedWith(/not served by an index: PostgreSQL scans/);
  });
});

describe('assertCountServed (the counter’s SQL on FerretDB on PostgreSQL)', () => {
  const ferret = useFerretOnPostgres();
  const served = (query: CountQuery) =>
    assertCountServed(ferret.db, 'items', query, { postgresUrl: ferret.postgresUrl });

  before(async () => {
    await ensureCollections(ferret.db, [items], {
      logger: pino({ level: 'silent' }),
      postgresUrl: ferret.postgresUrl,
    });
    await ferret.db
      .collection('items')
      .insertMany(
        Array.from({ length: 50 }, (_, n) => ({ _id: `i${n}` as never, userId: `u${n % 5}`, other: n })),
      );
  });

  it('passes an equality on an equality field, with exclusions and bounds beside it', async () => {
    await served({ equal: { userId: 'u1' } });
    await served({ equal: { userId: 'u1' }, notIn: { other: ['3'] }, above: { other: 3 }, below: { n: 9 } });
  });

  it('fails an equality on a field without a GIN index, and a count with bounds only', async () => {
    await expect(served({ equal: { other: 3 } })).to.be.rejectedWith(/not served by an index/);
    await expect(served({ equal: {}, above: { other: 3 } })).to.be.rejectedWith(/not served by an index/);
  });
});
