import { expect } from 'chai';
import type pg from 'pg';
import { migrate } from '../../../../tray-service/storage/postgres/migrate.ts';
import {
  notReachedQuery,
  countPostRecipientsQuery,
  createPostgresCommunityMembers,
  postRecipientsQuery,
  reachedAmongQuery,
} from '../../../../tray-service/storage/postgres/postgres-community-members.ts';
import { aComment, aPost } from '../../../support/activity-builder.ts';
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
      SELECT 'c-big', 'u-' || lpad(n::text, 5, '0'), 0,
        CASE WHEN n % 5 = 0 THEN 9000 ELSE 9223372036854775807 END FROM generate_series(0, 9999) n`);
    await pg.pool
      .query(`INSERT INTO tray_mutes (user_id, target_type, target_id, created_at, until_at, expires_at)
      SELECT 'u-' || lpad(n::text, 5, '0'), 'community', 'c-big', 1000, NULL, 9223372036854775807
        FROM generate_series(10, 9999, 10) n
      UNION ALL SELECT 'u-' || lpad(n::text, 5, '0'), 'community', 'c-big', 1000, 2000, 3000
        FROM generate_series(11, 9999, 100) n
      UNION ALL SELECT 'u-' || lpad(n::text, 5, '0'), 'user', 'u-00000', 1000, NULL, 9223372036854775807
        FROM generate_series(12, 9999, 100) n`);
    // Their joins (processed before the post, kept at place 15,000), and 2,000 leaves dated after
    // it but processed after it: looked at by the late ones' read, none of them late.
    await pg.pool.query(`INSERT INTO tray_membership_changes (community_id, user_id, at, joined, processed)
      SELECT 'c-big', 'u-' || lpad(n::text, 5, '0'), 0, true, 2 + n FROM generate_series(0, 9999) n
      UNION ALL SELECT 'c-big', 'u-' || lpad(n::text, 5, '0'), 9000, false, 20000 + n FROM generate_series(0, 9999, 5) n`);
    await pg.pool.query(
      `INSERT INTO tray_community_posts (community_id, action_id, at, activity, expires_at, processed)
       VALUES ('c-big', 'p-big', 5000, $1, 9223372036854775807, 15000)`,
      [JSON.stringify(post)],
    );
    // Late: u-10000 to u-10002 left at 4,000, their leaves processed after the post (the intervals
    // leave them out, the post reached them); u-10003's leave came before it; u-10004 is late but
    // deleted, and so is the member u-00003: nothing reaches a deleted user.
    await pg.pool.query(`INSERT INTO tray_membership_changes (community_id, user_id, at, joined, processed)
      SELECT 'c-big', 'u-' || n, 0, true, 10 + n - 10000 FROM generate_series(10000, 10004) n
      UNION ALL SELECT 'c-big', 'u-' || n, 4000, false, CASE WHEN n = 10003 THEN 100 ELSE 30000 + n END
        FROM generate_series(10000, 10004) n`);
    await pg.pool.query(`INSERT INTO tray_memberships (community_id, user_id, from_at, to_at)
      SELECT 'c-big', 'u-' || n, 0, 4000 FROM generate_series(10000, 10004) n`);
    await pg.pool.query(`INSERT INTO tray_profiles (user_id, display_name, deleted, updated_at)
      VALUES ('u-00003', 'Deleted user', true, 1), ('u-10004', 'Deleted user', true, 1)`);
    await pg.pool.query('ANALYZE tray_memberships, tray_mutes, tray_membership_changes, tray_profiles');
  });

  it('checks a list of users against the memberships’ and the kept posts’ primary keys', async () => {
    const plan = await planOf(pg.pool, reachedAmongQuery('c-big', post, ['u-00001', 'u-00002']));
    expect(plan.indexes).to.include('tray_memberships_pkey');
    expect(plan.indexes).to.include('tray_community_posts_pkey');
    expect(plan.readWhole).to.deep.equal([]);
  });

  it('judges personal recipients deleted or away by the profiles’, the away spans’ and the kept actions’ primary keys', async () => {
    const comment = aComment(
      'u-00001',
      { postId: 'p-big', owner: 'u-00002' },
      { id: 'cm-1', at: 5_000, communityId: 'c-big' },
    );
    const plan = await planOf(pg.pool, notReachedQuery([comment])!);
    expect(plan.indexes).to.include('tray_member_away_pkey');
    expect(plan.indexes).to.include('tray_personal_actions_pkey');
    expect(plan.indexes.some((index) => index.startsWith('tray_profiles'))).to.equal(true);
    expect(plan.readWhole).to.deep.equal([]);
    expect(notReachedQuery([post])).to.equal(undefined);
  });

  it('pages a post’s recipients from the memberships’ primary key, the mutes on its targets and the leaves after its place, sorting only the late ones', async () => {
    const plan = await planOf(pg.pool, postRecipientsQuery('c-big', post, { limit: 50, after: 'u-05000' }));
    expect(plan.indexes).to.include('tray_memberships_pkey');
    expect(plan.indexes).to.include('tray_mutes_target');
    expect(plan.indexes).to.include('tray_membership_changes_late_leaves');
    expect(plan.readWhole).to.not.include('tray_memberships');
    // The members merged in the primary key's order with the late ones, the only rows sorted.
    expect(plan.nodes).to.include('Merge Append');
    expect(plan.nodes.filter((node) => node === 'Sort')).to.have.lengthOf(1);
    const count = await planOf(pg.pool, countPostRecipientsQuery('c-big', post));
    expect(count.indexes).to.include('tray_mutes_target');
  });

  it('counts and pages 10,000 members of whom 1,100 mute the post, exactly, one statement a read', async function () {
    this.timeout(60_000);
    const { pool, statements } = countingPool(pg.pool);
    const members = createPostgresCommunityMembers(pool);
    // Every tenth muting the community, every hundredth (+2) its author; the author and the
    // deleted u-00003 left out; the three late ones in.
    const muted = (n: number) => n === 0 || n === 3 || n % 10 === 0 || n % 100 === 12;
    const expected = [
      ...Array.from({ length: 10_000 }, (_, n) => n)
        .filter((n) => !muted(n))
        .map((n) => `u-${String(n).padStart(5, '0')}`),
      'u-10000',
      'u-10001',
      'u-10002',
    ];
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
    // A member, the deleted member, a late one, one whose leave came first, the deleted late one,
    // the author: mutes are not judged here.
    expect(
      await members.reachedAmong('c-big', post, [
        'u-00001',
        'u-00003',
        'u-10000',
        'u-10003',
        'u-10004',
        'u-00000',
        'u-00010',
      ]),
    ).to.deep.equal(new Set(['u-00001', 'u-10000', 'u-00010']));
  });
});
