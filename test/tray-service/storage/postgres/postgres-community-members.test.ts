import { expect } from 'chai';
import { migrate } from '../../../../tray-service/storage/postgres/migrate.ts';
import { usePostgres } from '../../../support/use-postgres.ts';
import { planOf } from './plan-of.ts';

describe('storage/postgres community members at a time', () => {
  const pg = usePostgres();
  before(async () => {
    await migrate(pg.pool);
  });

  it('reads a page of members in user id order from the memberships’ primary key, without sorting', async () => {
    const plan = await planOf(pg.pool, {
      text: `SELECT user_id FROM tray_memberships
             WHERE community_id = $1 AND from_at <= $2 AND $2 < to_at AND user_id > $3 AND user_id IS DISTINCT FROM $4
             ORDER BY user_id LIMIT $5`,
      values: ['c-hike', 1, '', null, 51],
    });
    expect(plan.indexes).to.deep.equal(['tray_memberships_pkey']);
    expect(plan.nodes).to.not.include('Sort');
  });

  it('checks a list of users against the memberships’ primary key', async () => {
    const plan = await planOf(pg.pool, {
      text: `SELECT user_id FROM tray_memberships
             WHERE community_id = $1 AND user_id = ANY($3::text[]) AND from_at <= $2 AND $2 < to_at`,
      values: ['c-hike', 1, ['u-a', 'u-b']],
    });
    expect(plan.indexes).to.deep.equal(['tray_memberships_pkey']);
  });
});
