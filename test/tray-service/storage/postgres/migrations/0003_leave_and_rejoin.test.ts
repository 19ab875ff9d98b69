import { expect } from 'chai';
import fc from 'fast-check';
import {
  awaySpans,
  membershipIntervals,
  type MembershipEdge,
} from '../../../../../tray-service/domain/membership-intervals.ts';
import { migrate } from '../../../../../tray-service/storage/postgres/migrate.ts';
import { OPEN_END } from '../../../../../tray-service/storage/postgres/postgres-memberships.ts';
import { schemaBefore } from './schema-before.ts';
import { usePostgres } from '../../../../support/use-postgres.ts';

const toText = (at: number) => (at === Infinity ? OPEN_END : String(at));

describe('storage/postgres migration 0003 (leave and rejoin)', () => {
  const pg = usePostgres();

  it('stores the away spans of the memberships already there, as awaySpans folds them', async function () {
    this.timeout(120_000);
    const edge = fc.record({ joined: fc.boolean(), at: fc.integer({ min: 0, max: 9 }) });
    const members = fc.sample(
      fc.record({
        changes: fc.array(edge, { maxLength: 6 }),
        imported: fc.option(fc.integer({ min: 0, max: 9 })),
      }),
      { numRuns: 60, seed: 3 },
    );
    await schemaBefore(pg.pool, 3);
    const expected: string[] = [];
    for (const [index, member] of members.entries()) {
      const userId = `u${index}`;
      const edges: MembershipEdge[] = [...member.changes];
      for (const change of member.changes)
        await pg.pool.query(
          'INSERT INTO tray_membership_changes VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
          ['c', userId, change.at, change.joined],
        );
      if (member.imported !== null) {
        // An imported member: a join at `since` and at the list's time.
        await pg.pool.query('INSERT INTO tray_imported_members VALUES ($1, $2, $3, $4)', [
          'c',
          userId,
          member.imported,
          member.imported + 1,
        ]);
        edges.push({ joined: true, at: member.imported }, { joined: true, at: member.imported + 1 });
      }
      for (const interval of membershipIntervals(edges))
        await pg.pool.query('INSERT INTO tray_memberships VALUES ($1, $2, $3, $4)', [
          'c',
          userId,
          interval.from,
          toText(interval.to),
        ]);
      for (const span of awaySpans(edges)) expected.push(`${userId} ${span.from} ${toText(span.to)}`);
    }
    // Migrations after this one run too; this one is what the test is about.
    expect(await migrate(pg.pool)).to.include(3);
    const stored = await pg.pool.query<{ user_id: string; from_at: string; to_at: string }>(
      'SELECT user_id, from_at, to_at FROM tray_member_away',
    );
    expect(stored.rows.map((row) => `${row.user_id} ${row.from_at} ${row.to_at}`).sort()).to.deep.equal(
      expected.sort(),
    );
    expect(expected.length, 'spans compared').to.be.above(20);
  });
});
