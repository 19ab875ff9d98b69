import { expect } from 'chai';
import type pg from 'pg';
import { migrate } from '../../../../tray-service/storage/postgres/migrate.ts';
import {
  countPostRecipientsQuery,
  createPostgresCommunityMembers,
  postRecipientsQuery,
} from '../../../../tray-service/storage/postgres/postgres-community-members.ts';
import { aPost } from '../../../support/activity-builder.ts';
import { usePostgres } from '../../../support/use-postgres.ts';
import { planOf } from './plan-of.ts';
import { aroundQueries } from './around-queries.ts';

/** A pool whose `query` calls are counted: the statements one read costs. */
function countingPool(pool: pg.Pool): { pool: pg.Pool; statements: () => number } {
  let statements = 0;
  const counted = aroundQueries(pool, (_text, run) => {
    statements++;
    return run();
  });
  return { pool: counted, statements: () => statements };
}

describe('storage/postgres community members at a time', () => {
  const pg = usePostgres();
  const post = aPost('u-00000', { id: 'p-big', at: 5_000, communityId: 'c-big' });
  before(async function () {
    this.timeout(60_000);
    await migrate(pg.pool);
    // 10,000 members from t=0; 1,000 of them mute the community from t=1,000 (every tenth),
    // 100 more muted it only from t=1,000 to t=2,000, and 100 mute the post's author.
    await pg.pool.query(`INSERT INTO tray_memberships (community_id, user_id, from_at, to_at)
      SELECT 'c-big', 'u-' || lpad(n::text, 5, '0'), 0, 9223372036854775807 FROM generate_series(0, 9999) n`);
    await pg.pool
      .query(`INSERT INTO tray_mutes (user_id, target_type, target_id, created_at, until_at, expires_at)
      SELECT 'u-' || lpad(n::text, 5, '0'), 'community', 'c-big', 1000, NULL, 9223372036854775807
        FROM generate_series(10, 9999, 10) n
      UNION ALL SELECT 'u-' || lpad(n::text, 5, '0'), 'community', 'c-big', 1000, 2000, 3000
        FROM generate_series(11, 9999, 100) n
      UNION ALL SELECT 'u-' || lpad(n::text, 5, '0'), 'user', 'u-00000', 1000, NULL, 9223372036854775807
        FROM generate_series(12, 9999, 100) n`);
    await pg.pool.query('ANALYZE tray_memberships, tray_mutes');
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

  it('pages a post’s recipients from the memberships’ primary key and the mutes on its targets, without sorting', async () => {
    const plan = await planOf(pg.pool, postRecipientsQuery('c-big', post, { limit: 50, after: 'u-05000' }));
    expect(plan.indexes).to.include('tray_memberships_pkey');
    expect(plan.indexes).to.include('tray_mutes_target');
    expect(plan.nodes).to.not.include('Sort');
    const count = await planOf(pg.pool, countPostRecipientsQuery('c-big', post));
    expect(count.indexes).to.include('tray_mutes_target');
  });

  it('counts and pages 10,000 members of whom 1,100 mute the post, exactly, one statement a read', async function () {
    this.timeout(60_000);
    const { pool, statements } = countingPool(pg.pool);
    const members = createPostgresCommunityMembers(pool);
    // Every tenth muting the community, every hundredth (+2) its author; the author left out.
    const muted = (n: number) => n === 0 || n % 10 === 0 || n % 100 === 12;
    const expected = Array.from({ length: 10_000 }, (_, n) => n)
      .filter((n) => !muted(n))
      .map((n) => `u-${String(n).padStart(5, '0')}`);
    expect(await members.countPostRecipients('c-big', post)).to.equal(expected.length);
    expect(statements()).to.equal(1);
    const seen: string[] = [];
    let after: string | undefined;
    for (let guard = 0; guard < 20; guard++) {
      const page = await members.postRecipients('c-big', post, {
        limit: 1_000,
        ...(after === undefined ? {} : { after }),
      });
      seen.push(...page.userIds);
      if (page.next === undefined) break;
      after = page.next;
    }
    expect(seen).to.deep.equal(expected);
    expect(statements()).to.equal(1 + 9);
  });
});
