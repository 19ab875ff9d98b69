import { expect } from 'chai';
import { bannedUsers, banRank } from '../../../tray-service/domain/ban-change.ts';

describe('banRank', () => {
  const at = Date.parse('2026-11-20T11:00:00.000Z');

  it('orders changes by their platform time first', () => {
    expect(banRank({ banned: false, at: at + 1 })).to.be.greaterThan(banRank({ banned: true, at }));
    expect(banRank({ banned: true, at: at + 1 })).to.be.greaterThan(banRank({ banned: false, at }));
  });

  it('puts a ban above an unban of the same time, so a tie keeps the user out', () => {
    expect(banRank({ banned: true, at })).to.be.greaterThan(banRank({ banned: false, at }));
  });

  it('is a fixed number for a change, so a redelivery, or another instance, ranks it alike', () => {
    expect(banRank({ banned: true, at })).to.equal(3_590_344_800_001);
    expect(banRank({ banned: false, at })).to.equal(3_590_344_800_000);
  });
});

describe('bannedUsers', () => {
  const at = Date.parse('2026-11-20T11:00:00.000Z');
  it('keeps the users whose newest change is a ban, a tie counting as a ban', () => {
    expect(
      bannedUsers([
        { userId: 'u-a', banned: true, at },
        { userId: 'u-a', banned: false, at: at + 1 },
        { userId: 'u-b', banned: false, at },
        { userId: 'u-b', banned: true, at },
        { userId: 'u-c', banned: true, at: at + 2 },
        { userId: 'u-c', banned: false, at: at + 1 },
        { userId: 'u-d', banned: false, at },
      ]).sort(),
    ).to.deep.equal(['u-b', 'u-c']);
  });
});
