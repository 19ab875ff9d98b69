import { expect } from 'chai';
import { InvalidUntilError } from '../../../tray-service/domain/invalid-until-error.ts';
import { MAX_MUTES_IN_FORCE } from '../../../tray-service/domain/mute.ts';
import { TooManyMutesError } from '../../../tray-service/domain/too-many-mutes-error.ts';
import { putMute } from '../../../tray-service/use-cases/put-mute.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';

const NOW = Date.UTC(2026, 0, 15, 12);
const target = { targetType: 'post', targetId: 'p-1' } as const;

describe('putMute (PUT v3/mutes, every transport)', () => {
  const suite = useTrayStorage();

  for (const [what, until] of [
    ['ending now', NOW],
    ['ending in the past', NOW - 1],
  ] as const) {
    it(`refuses a mute ${what} with INVALID_UNTIL naming the problem, and mutes nothing`, async () => {
      await expect(putMute(suite.storage, { userId: 'u-mute', target, until, now: NOW, retentionDays: 90 }))
        .to.be.rejectedWith(InvalidUntilError, 'until: expected a time later than now')
        .and.eventually.include({ code: 'INVALID_UNTIL' });
      expect(await suite.storage.inbox!.mutesInForce('u-mute', NOW)).to.deep.equal([]);
    });
  }

  it('mutes from now until a later time, or until removed', async () => {
    const until = NOW + 1;
    expect(
      await putMute(suite.storage, { userId: 'u-mute-ok', target, until, now: NOW, retentionDays: 90 }),
    ).to.include({
      createdAt: NOW,
      until,
    });
    const other = { targetType: 'user', targetId: 'u-loud' } as const;
    expect(
      await putMute(suite.storage, {
        userId: 'u-mute-ok',
        target: other,
        until: null,
        now: NOW,
        retentionDays: 90,
      }),
    ).to.include({ until: null });
  });
});

// The limit under concurrency: PUTs of different new targets by one user, sent at once through
// two storages (two processes of the service, each with its own connections), must not all pass a
// count taken before the others wrote. Seeded close to the limit so the race is over a few places.
// On the default adapter (TEST_STORAGE=mongodb for the other); the storage conformance suite holds
// both adapters' putMute to the same with a small limit of its own.
describe('putMute: concurrent PUTs of new mutes', function () {
  this.timeout(180_000);
  const suite = useTrayStorage();
  const SEEDED = MAX_MUTES_IN_FORCE - 5;
  const RACING = 20;

  it('keeps at most MAX_MUTES_IN_FORCE in force; every PUT past it gets TOO_MANY_MUTES', async () => {
    const userId = 'u-racing';
    const inbox = suite.storage.inbox!;
    for (let n = 0; n < SEEDED; n += 1)
      await inbox.putMute(
        userId,
        { targetType: 'post', targetId: `p-seed-${n}` },
        null,
        NOW - 1,
        90,
        MAX_MUTES_IN_FORCE,
      );
    const peer = await suite.another();
    const outcomes = await Promise.allSettled(
      Array.from({ length: RACING }, (_, n) =>
        putMute(n % 2 === 0 ? suite.storage : peer, {
          userId,
          target: { targetType: 'user', targetId: `u-loud-${n}` },
          until: null,
          now: NOW,
          retentionDays: 90,
        }),
      ),
    );
    const refused = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
    for (const reason of refused) expect(reason).to.be.instanceOf(TooManyMutesError);
    expect(await inbox.mutesInForce(userId, NOW)).to.have.length(MAX_MUTES_IN_FORCE);
    expect(refused).to.have.length(RACING - (MAX_MUTES_IN_FORCE - SEEDED));
  });
});
