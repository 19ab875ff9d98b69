import { expect } from 'chai';
import type { Request } from 'express';
import { mock } from 'node:test';
import { endWithCredential } from '../../../tray-service/admin/end-with-credential.ts';

const DAY_MS = 24 * 3600 * 1000;
const NOW = Date.parse('2026-12-06T12:00:00Z');

describe('endWithCredential', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now: NOW }));
  afterEach(() => mock.timers.reset());

  const watch = (admin: boolean) => ({
    stillAdmin: async () => admin,
    checkMs: DAY_MS,
    clock: () => Date.now(),
  });
  const jwtCaller = (expiresAt: number) =>
    ({ via: 'bearer', principal: { kind: 'jwt', subject: 'ops', expiresAt } }) as const;

  it('ends the response when its JWT expires', () => {
    let ended = 0;
    const stop = endWithCredential(
      {} as Request,
      jwtCaller(NOW + 3_600_000),
      watch(true),
      () => (ended += 1),
    );
    mock.timers.tick(3_599_999);
    expect(ended).to.equal(0);
    mock.timers.tick(1);
    expect(ended).to.equal(1);
    stop();
  });

  // setTimeout's longest delay is about 24.8 days: the timer capped at it ended a tail whose JWT
  // still had days to run; left to the checks instead, it outlived its JWT whenever they could not
  // be made (the key set out of reach).
  it('ends the response at an expiry past setTimeout’s longest delay, not before', () => {
    let ended = 0;
    const unknown = { stillAdmin: async () => undefined, checkMs: DAY_MS, clock: () => Date.now() };
    const stop = endWithCredential({} as Request, jwtCaller(NOW + 30 * DAY_MS), unknown, () => (ended += 1));
    mock.timers.tick(2 ** 31);
    expect(ended).to.equal(0);
    mock.timers.tick(30 * DAY_MS - 2 ** 31 - 1);
    expect(ended).to.equal(0);
    mock.timers.tick(1);
    expect(ended).to.equal(1);
    stop();
  });
});
