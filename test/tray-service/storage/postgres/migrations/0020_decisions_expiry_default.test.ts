import { expect } from 'chai';
import { DAY_MS } from '../../../../../shared/time/durations.ts';
import { migrate } from '../../../../../tray-service/storage/postgres/migrate.ts';
import { usePostgres } from '../../../../support/use-postgres.ts';

describe('storage/postgres migration 0020 (a default expiry for the decisions of older workers)', () => {
  const pg = usePostgres();

  it('takes a decision saved as a worker of before 0012 saves it (no expires_at), expiring with the default retention', async function () {
    this.timeout(60_000);
    await migrate(pg.pool);
    const before = Date.now();
    // The statement of a worker before 0012, still running while a new instance migrated.
    await pg.pool.query(
      `INSERT INTO moderation_decisions (id, event_key, event, event_received_at, rule, action, reason,
         subject_type, subject_id, user_id, decided_at, delivery, delivery_attempts, delivered_at, last_error)
       VALUES ('d-old', 'ev', 'comment.didCreate', now(), 'blocked-words', 'flag', 'r', 'comment', 'cm',
         'u', now(), 'off', 0, NULL, NULL)`,
    );
    const { rows } = await pg.pool.query<{ expires_at: Date }>(
      `SELECT expires_at FROM moderation_decisions WHERE id = 'd-old'`,
    );
    const expiresAt = rows[0]?.expires_at.getTime() ?? 0;
    expect(expiresAt).to.be.within(before + 30 * DAY_MS - 1_000, Date.now() + 30 * DAY_MS + 1_000);
  });
});
