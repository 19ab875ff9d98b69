import { expect } from 'chai';
import { mock } from 'node:test';
import { wait } from '../../../client/src/request/wait.ts';

/** Whether `promise` has settled once the tasks queued so far have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('wait', () => {
  /** Longer than a timer can count: setTimeout takes anything over 2^31-1 ms for 1 ms. */
  const beyondTimers = 2 ** 31 + 1_000;

  it('does not end early when asked to wait longer than a timer can count', async () => {
    const controller = new AbortController();
    const waiting = wait(beyondTimers, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await settled(waiting)).to.equal(false);
    const reason = new Error('stopped');
    controller.abort(reason);
    await expect(waiting).to.be.rejectedWith(reason);
  });

  describe('on a mocked clock', () => {
    beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
    afterEach(() => mock.timers.reset());

    it('ends when all of a wait longer than a timer can count has passed, not before', async () => {
      const waiting = wait(beyondTimers);
      // In two steps: a mocked clock runs a timer set while it ticks from the end of that tick.
      mock.timers.tick(2 ** 31 - 1);
      expect(await settled(waiting)).to.equal(false);
      mock.timers.tick(1_000);
      expect(await settled(waiting)).to.equal(false);
      mock.timers.tick(1);
      expect(await settled(waiting)).to.equal(true);
    });
  });
});
