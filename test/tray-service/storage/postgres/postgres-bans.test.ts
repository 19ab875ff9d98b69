import { expect } from 'chai';
import type { BanChange } from '../../../../tray-service/domain/ban-change.ts';
import { migrate } from '../../../../tray-service/storage/postgres/migrate.ts';
import { createPostgresBans } from '../../../../tray-service/storage/postgres/postgres-bans.ts';
import { usePostgres } from '../../../support/use-postgres.ts';

const at = Date.parse('2026-11-20T11:00:00.000Z');

describe('storage/postgres bans', () => {
  const pg = usePostgres();
  const bans = () => createPostgresBans(pg.pool);
  const state = async (userId: string) => (await bans().all()).find((change) => change.userId === userId);
  before(async () => {
    await migrate(pg.pool);
  });

  it('keeps the newest change by createdAt, ignoring an older one stored after it', async () => {
    await bans().apply([{ userId: 'u-eve', banned: true, at: at + 1 }]);
    await bans().apply([{ userId: 'u-eve', banned: false, at }]);
    expect(await state('u-eve')).to.deep.equal({ userId: 'u-eve', banned: true, at: at + 1 });
  });

  it('is a no-op on a redelivery and lets a ban win a tie with an unban, in either order', async () => {
    await bans().apply([{ userId: 'u-fay', banned: true, at }]);
    await bans().apply([{ userId: 'u-fay', banned: true, at }]);
    await bans().apply([{ userId: 'u-fay', banned: false, at }]);
    await bans().apply([
      { userId: 'u-gil', banned: true, at },
      { userId: 'u-gil', banned: false, at },
    ]);
    expect(await state('u-fay')).to.deep.equal({ userId: 'u-fay', banned: true, at });
    expect(await state('u-gil')).to.deep.equal({ userId: 'u-gil', banned: true, at });
  });

  it('keeps one row per user, the newest of a batch naming a user several times', async () => {
    await bans().apply([
      { userId: 'u-hal', banned: true, at },
      { userId: 'u-hal', banned: false, at: at + 5 },
      { userId: 'u-ivy', banned: true, at: at + 1 },
      { userId: 'u-hal', banned: true, at: at + 2 },
    ]);
    expect(await state('u-hal')).to.deep.equal({ userId: 'u-hal', banned: false, at: at + 5 });
    expect(await state('u-ivy')).to.deep.equal({ userId: 'u-ivy', banned: true, at: at + 1 });
    const { rows } = await pg.pool.query("SELECT 1 FROM user_bans WHERE user_id = 'u-hal'");
    expect(rows).to.have.lengthOf(1);
  });

  it('ends at the newest change when many are stored concurrently', async () => {
    const changes: BanChange[] = Array.from({ length: 30 }, (_, n) => ({
      userId: n % 2 === 0 ? 'u-gus' : 'u-kit',
      banned: n % 3 === 0,
      at: at + ((n * 7919) % 30) * 1_000,
    }));
    const newest = (userId: string) =>
      changes.filter((change) => change.userId === userId).reduce((a, b) => (b.at > a.at ? b : a));
    // Batches naming both users in opposite orders: the adapter must not deadlock.
    await Promise.all(changes.map((change, n) => bans().apply(n % 2 ? [change, changes[0]!] : [change])));
    expect(await state('u-gus')).to.deep.equal(newest('u-gus'));
    expect(await state('u-kit')).to.deep.equal(newest('u-kit'));
  });

  it('returns nothing for an empty batch and stores nothing', async () => {
    const before = (await bans().all()).length;
    await bans().apply([]);
    expect(await bans().all()).to.have.lengthOf(before);
  });
});
