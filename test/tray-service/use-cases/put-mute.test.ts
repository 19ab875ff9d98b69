import { expect } from 'chai';
import { InvalidUntilError } from '../../../tray-service/domain/invalid-until-error.ts';
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
      await expect(putMute(suite.storage, { userId: 'u-mute', target, until, now: NOW }))
        .to.be.rejectedWith(InvalidUntilError, 'until: expected a time later than now')
        .and.eventually.include({ code: 'INVALID_UNTIL' });
      expect(await suite.storage.inbox!.mutesInForce('u-mute', NOW)).to.deep.equal([]);
    });
  }

  it('mutes from now until a later time, or until removed', async () => {
    const until = NOW + 1;
    expect(await putMute(suite.storage, { userId: 'u-mute-ok', target, until, now: NOW })).to.include({
      createdAt: NOW,
      until,
    });
    const other = { targetType: 'user', targetId: 'u-loud' } as const;
    expect(
      await putMute(suite.storage, { userId: 'u-mute-ok', target: other, until: null, now: NOW }),
    ).to.include({ until: null });
  });
});
