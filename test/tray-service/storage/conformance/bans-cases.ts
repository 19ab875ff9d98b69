import { expect } from 'chai';
import type { BanChange } from '../../../../tray-service/domain/ban-change.ts';
import { T } from './case-fixtures.ts';
import { conformanceCase } from './conformance-case.ts';

/** Global bans (BansPort): per user, only the change of highest rank (later first, a ban over an unban at a tie). */
conformanceCase(
  'bans: keep the newest change per user whatever the arrival order; a ban wins a tie',
  async (context) => {
    const storage = await context.isolated();
    const change = (user: string, banned: boolean, offset: number): BanChange => ({
      userId: context.id(user),
      banned,
      at: T + offset,
    });
    await storage.bans.apply([change('ana', true, 10)]);
    await storage.bans.apply([change('ana', false, 5)]);
    await storage.bans.apply([change('ben', false, 7), change('ben', true, 7)]);
    await storage.bans.apply([change('cid', true, 1), change('cid', false, 2)]);
    await storage.bans.apply([change('cid', true, 1)]);
    const all = await storage.bans.all();
    expect(all.sort((a, b) => (a.userId < b.userId ? -1 : 1))).to.deep.equal([
      change('ana', true, 10),
      change('ben', true, 7),
      change('cid', false, 2),
    ]);
  },
);

conformanceCase('bans: concurrent changes of one user keep the one of highest rank', async (context) => {
  const storage = await context.isolated();
  const userId = context.id('eve');
  const changes = [3, 9, 1, 7, 5, 8, 2, 6].map((offset, index) => ({
    userId,
    banned: index % 2 === 0,
    at: T + offset,
  }));
  await Promise.all(changes.map((one) => storage.bans.apply([one])));
  expect(await storage.bans.all()).to.deep.equal([{ userId, banned: false, at: T + 9 }]);
});
