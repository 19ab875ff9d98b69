import { expect } from 'chai';
import { migrate } from '../../../../../tray-service/storage/postgres/migrate.ts';
import { schemaBefore } from './schema-before.ts';
import { usePostgres } from '../../../../support/use-postgres.ts';

const t0 = new Date('2026-11-20T10:00:00.000Z');

describe('storage/postgres migration 0016 (the foreign status)', () => {
  const pg = usePostgres();

  it('lets stored_events hold `foreign`, keeps the rows there and still refuses a status the domain lacks', async function () {
    this.timeout(60_000);
    await schemaBefore(pg.pool, 16);
    const insert = (key: string, status: string) =>
      pg.pool.query(
        `INSERT INTO stored_events (key, event, webhook, data, received_at, stored_at, expires_at, status)
         VALUES ($1, 'user.didGlobalBan', 'partner', '{}', $2, $2, $2, $3)`,
        [key, t0, status],
      );
    await insert('ev-before', 'applied');
    await insert('ev-refused', 'foreign').then(
      () => expect.fail('before 0016 the check refuses foreign'),
      (error: Error) => expect(error.message).to.include('stored_events_status_check'),
    );

    expect(await migrate(pg.pool)).to.include(16);
    await insert('ev-foreign', 'foreign');
    await insert('ev-bogus', 'bogus').then(
      () => expect.fail('a status the domain lacks is still refused'),
      (error: Error) => expect(error.message).to.include('stored_events_status_check'),
    );
    const { rows } = await pg.pool.query<{ key: string; status: string }>(
      'SELECT key, status FROM stored_events ORDER BY key',
    );
    expect(rows).to.deep.equal([
      { key: 'ev-before', status: 'applied' },
      { key: 'ev-foreign', status: 'foreign' },
    ]);
  });
});
