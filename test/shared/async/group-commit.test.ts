import { expect } from 'chai';
import { groupCommit } from '../../../shared/async/group-commit.ts';

/** A flush the test completes by hand, recording each batch it was given. */
function manualFlush() {
  const batches: number[][] = [];
  const pending: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const flush = (items: readonly number[]) => {
    batches.push([...items]);
    return new Promise<number[]>((resolve, reject) => {
      pending.push({ resolve: () => resolve(items.map((n) => n * 10)), reject });
    });
  };
  const settle = async (index: number, error?: Error) => {
    const call = pending[index];
    if (!call) throw new Error(`no flush #${index}`);
    if (error) call.reject(error);
    else call.resolve();
    // Let the results reach their callers and the next flush start.
    await new Promise((done) => setImmediate(done));
  };
  return { batches, flush, settle };
}

const tick = () => new Promise((done) => setImmediate(done));

describe('groupCommit', () => {
  it('flushes a lone call at once, and the calls made meanwhile together in the next flush', async () => {
    const { batches, flush, settle } = manualFlush();
    const submit = groupCommit(flush, { maxBatch: 100, maxInFlight: 1 });
    const first = submit([1]);
    await tick();
    expect(batches).to.deep.equal([[1]]);
    const second = submit([2, 3]);
    const third = submit([4]);
    await tick();
    expect(batches, 'nothing more while the first is in flight').to.have.length(1);
    await settle(0);
    expect(batches).to.deep.equal([[1], [2, 3, 4]]);
    await settle(1);
    expect(await first).to.deep.equal([10]);
    expect(await second).to.deep.equal([20, 30]);
    expect(await third).to.deep.equal([40]);
  });

  // A call is one item standing for a part of up to 500 activities: 128 such calls made one
  // transaction of 64,000, holding nearly every lock bucket for its whole length.
  it('bounds a flush by its items’ weight as well as their number, a heavy call still flushed alone', async () => {
    const { batches, flush, settle } = manualFlush();
    const submit = groupCommit(flush, { maxBatch: 100, maxInFlight: 1, maxWeight: 10, weigh: (n) => n });
    const results = [submit([1]), submit([6]), submit([5]), submit([2, 2]), submit([30])];
    await tick();
    for (let index = 0; index < 3; index++) await settle(index);
    expect(await Promise.all(results)).to.deep.equal([[10], [60], [50], [20, 20], [300]]);
    expect(batches).to.deep.equal([[1, 6], [5, 2, 2], [30]]);
  });

  it('calls of the same tick share the first flush', async () => {
    const { batches, flush, settle } = manualFlush();
    const submit = groupCommit(flush, { maxBatch: 100, maxInFlight: 2 });
    const results = [submit([1]), submit([2]), submit([3])];
    await tick();
    expect(batches).to.deep.equal([[1, 2, 3]]);
    await settle(0);
    expect(await Promise.all(results)).to.deep.equal([[10], [20], [30]]);
  });

  it('runs up to maxInFlight flushes at once and never splits a call across batches', async () => {
    const { batches, flush, settle } = manualFlush();
    const submit = groupCommit(flush, { maxBatch: 3, maxInFlight: 2 });
    const a = submit([1, 2]);
    const b = submit([3, 4]);
    const c = submit([5]);
    const d = submit([6, 7, 8, 9]);
    await tick();
    // [1,2] then [3,4] (adding [3,4] to the first would pass 3); the third waits for a slot.
    expect(batches).to.deep.equal([
      [1, 2],
      [3, 4, 5],
    ]);
    await settle(0);
    // A call larger than maxBatch goes alone rather than never.
    expect(batches[2]).to.deep.equal([6, 7, 8, 9]);
    await settle(1);
    await settle(2);
    expect(await Promise.all([a, b, c, d])).to.deep.equal([[10, 20], [30, 40], [50], [60, 70, 80, 90]]);
  });

  it('fails every call of a failed batch and goes on with the next', async () => {
    const { batches, flush, settle } = manualFlush();
    const submit = groupCommit(flush, { maxBatch: 100, maxInFlight: 1 });
    const first = submit([1]);
    await tick();
    const second = submit([2]);
    const third = submit([3]);
    const failed = expect(first).to.be.rejectedWith('server gone');
    await settle(0, new Error('server gone'));
    await failed;
    expect(batches).to.deep.equal([[1], [2, 3]]);
    await settle(1);
    expect(await second).to.deep.equal([20]);
    expect(await third).to.deep.equal([30]);
  });

  it('with isolateFailures, runs a failed batch again call by call, so only the failing call fails', async () => {
    const batches: number[][] = [];
    const flush = (items: readonly number[]) => {
      batches.push([...items]);
      return items.includes(2)
        ? Promise.reject(new Error('bad item'))
        : Promise.resolve(items.map((n) => n * 10));
    };
    const submit = groupCommit(flush, { maxBatch: 100, maxInFlight: 1, isolateFailures: true });
    const calls = [submit([1]), submit([2]), submit([3, 4])];
    const [first, second, third] = await Promise.allSettled(calls);
    expect(batches).to.deep.equal([[1, 2, 3, 4], [1], [2], [3, 4]]);
    expect(first).to.deep.equal({ status: 'fulfilled', value: [10] });
    expect(second).to.have.property('status', 'rejected');
    expect(third).to.deep.equal({ status: 'fulfilled', value: [30, 40] });
  });

  it('with isolateFailures, fails a lone call at once without running it twice', async () => {
    let runs = 0;
    const submit = groupCommit(
      () => {
        runs += 1;
        return Promise.reject(new Error('server gone'));
      },
      { maxBatch: 100, maxInFlight: 1, isolateFailures: true },
    );
    await expect(submit([1])).to.be.rejectedWith('server gone');
    expect(runs).to.equal(1);
  });

  it('answers an empty call without flushing', async () => {
    const { batches, flush } = manualFlush();
    const submit = groupCommit(flush, { maxBatch: 100, maxInFlight: 1 });
    expect(await submit([])).to.deep.equal([]);
    expect(batches).to.deep.equal([]);
  });
});
