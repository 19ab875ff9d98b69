import { expect } from 'chai';
import { migrate } from '../../../../../tray-service/storage/postgres/migrate.ts';
import { DAY_MS } from '../../../../../shared/time/durations.ts';
import { schemaBefore } from './schema-before.ts';
import { usePostgres } from '../../../../support/use-postgres.ts';

const t0 = Date.parse('2026-11-20T10:00:00.000Z');

describe('storage/postgres migration 0012 (decisions expire with their event)', () => {
  const pg = usePostgres();

  it('gives the decisions already there their event’s expiry, or the receipt plus 30 days when it is gone', async function () {
    this.timeout(60_000);
    await schemaBefore(pg.pool, 12);
    const eventExpiry = new Date(t0 + 7 * DAY_MS);
    await pg.pool.query(
      `INSERT INTO stored_events (key, event, webhook, data, received_at, stored_at, expires_at, status)
       VALUES ('ev-stored', 'comment.didCreate', 'w', '{}', $1, $1, $2, 'applied')`,
      [new Date(t0), eventExpiry],
    );
    for (const [id, eventKey] of [
      ['d-stored', 'ev-stored'],
      ['d-gone', 'ev-gone'],
    ])
      await pg.pool.query(
        `INSERT INTO moderation_decisions (id, event_key, event, event_received_at, rule, action, reason,
           subject_type, subject_id, decided_at, delivery, delivery_attempts)
         VALUES ($1, $2, 'comment.didCreate', $3, 'blocked-words', 'flag', 'r', 'comment', 'cm', $3, 'off', 0)`,
        [id, eventKey, new Date(t0)],
      );

    expect(await migrate(pg.pool)).to.include(12);
    const { rows } = await pg.pool.query<{ id: string; expires_at: Date }>(
      'SELECT id, expires_at FROM moderation_decisions ORDER BY id',
    );
    expect(rows).to.deep.equal([
      { id: 'd-gone', expires_at: new Date(t0 + 30 * DAY_MS) },
      { id: 'd-stored', expires_at: eventExpiry },
    ]);
  });
});
