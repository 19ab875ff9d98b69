import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { createHungRedisBreaker, RedisUnansweredError } from '../../../shared/redis/hung-redis-breaker.ts';
import { TimeoutError } from '../../../shared/errors/timeout-error.ts';

/** A call the test answers (or fails) when it chooses. */
function heldCall() {
  let answer!: (value: string) => void;
  let fail!: (error: Error) => void;
  const promise = new Promise<string>((resolve, reject) => {
    answer = resolve;
    fail = reject;
  });
  return { promise, answer, fail };
}

describe('shared/redis hung-redis-breaker', () => {
  const events: string[] = [];
  const breaker = (reconnectAfterMs = 10_000) =>
    createHungRedisBreaker({
      reconnectAfterMs,
      reconnect: () => events.push('reconnect'),
      onOpen: () => events.push('open'),
      onClose: () => events.push('close'),
    });
  beforeEach(() => {
    events.length = 0;
  });

  it('passes answers and errors within the budget through, staying closed', async () => {
    const b = breaker();
    expect(await b.call(async () => 'ok', 50)).to.equal('ok');
    await expect(b.call(() => Promise.reject(new Error('NOSCRIPT')), 50)).to.be.rejectedWith('NOSCRIPT');
    expect(b.open).to.equal(false);
    expect(events).to.deep.equal([]);
  });

  it('after a call runs out of its budget, refuses every call without running it until that one is answered', async () => {
    const b = breaker();
    const held = heldCall();
    await expect(b.call(() => held.promise, 20)).to.be.rejectedWith(TimeoutError);
    expect(b.open).to.equal(true);
    let ran = 0;
    const refused = b.call(async () => (ran += 1), 20);
    await expect(refused).to.be.rejectedWith(RedisUnansweredError);
    expect(ran, 'operations run while open').to.equal(0);
    held.answer('late');
    await sleep(0);
    expect(b.open).to.equal(false);
    expect(await b.call(async () => 'again', 20)).to.equal('again');
    expect(events).to.deep.equal(['open', 'close']);
  });

  it('closes when the unanswered call fails too, and only once every unanswered call settled', async () => {
    const b = breaker();
    const first = heldCall();
    const second = heldCall();
    // Both sent before either ran out of its budget, as batches in flight together are.
    const calls = [b.call(() => first.promise, 20), b.call(() => second.promise, 30)];
    for (const call of calls) await expect(call).to.be.rejectedWith(TimeoutError);
    first.fail(new Error('Connection is closed.'));
    await sleep(0);
    expect(b.open, 'open while the second is unanswered').to.equal(true);
    second.answer('late');
    await sleep(0);
    expect(b.open).to.equal(false);
    expect(events).to.deep.equal(['open', 'close']);
  });

  it('drops the connection once a call stays unanswered for reconnectAfterMs, not before, and not after it settled', async () => {
    const b = breaker(60);
    const held = heldCall();
    await expect(b.call(() => held.promise, 10)).to.be.rejectedWith(TimeoutError);
    await sleep(20);
    expect(events).to.deep.equal(['open']);
    await sleep(80);
    expect(events).to.deep.equal(['open', 'reconnect']);
    held.fail(new Error('Connection is closed.'));
    await sleep(0);
    expect(events).to.deep.equal(['open', 'reconnect', 'close']);

    const answered = heldCall();
    await expect(b.call(() => answered.promise, 10)).to.be.rejectedWith(TimeoutError);
    answered.answer('late');
    await sleep(100);
    expect(events.slice(3), 'no drop for a call answered in time').to.deep.equal(['open', 'close']);
  });
});
