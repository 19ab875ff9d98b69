import { expect } from 'chai';
import { batchPerTick } from '../../../receiver/store/batch-per-tick.ts';

describe('batchPerTick', () => {
  it('runs the calls of one turn as one batch and gives each caller its own result', async () => {
    const batches: number[][] = [];
    const double = batchPerTick(
      async (items: readonly number[]) => {
        batches.push([...items]);
        return items.map((n) => n * 2);
      },
      { maxItems: 10 },
    );
    const results = await Promise.all([1, 2, 3].map(double));
    expect(results).to.deep.equal([2, 4, 6]);
    expect(batches).to.deep.equal([[1, 2, 3]]);
    expect(await double(4)).to.equal(8);
    expect(batches).to.deep.equal([[1, 2, 3], [4]]);
  });

  it('splits a turn into batches of at most maxBatch, in call order', async () => {
    const batches: number[][] = [];
    const same = batchPerTick(
      async (items: readonly number[]) => {
        batches.push([...items]);
        return items;
      },
      { maxItems: 2 },
    );
    expect(await Promise.all([1, 2, 3, 4, 5].map(same))).to.deep.equal([1, 2, 3, 4, 5]);
    expect(batches).to.deep.equal([[1, 2], [3, 4], [5]]);
  });

  it('closes a batch before the item that would pass maxWeight; an item heavier than that goes alone', async () => {
    const batches: number[][] = [];
    const same = batchPerTick(
      async (items: readonly number[]) => {
        batches.push([...items]);
        return items;
      },
      { maxItems: 10, maxWeight: 10, weight: (n) => n },
    );
    expect(await Promise.all([4, 5, 2, 20, 1, 9].map(same))).to.deep.equal([4, 5, 2, 20, 1, 9]);
    expect(batches).to.deep.equal([[4, 5], [2], [20], [1, 9]]);
  });

  it("rejects every call of a failed batch, and only that batch's calls", async () => {
    const flaky = batchPerTick(
      async (items: readonly number[]) => {
        if (items.includes(0)) throw new Error('redis is down');
        return items;
      },
      { maxItems: 2 },
    );
    const settled = await Promise.allSettled([0, 1, 2].map(flaky));
    expect(settled.map((s) => s.status)).to.deep.equal(['rejected', 'rejected', 'fulfilled']);
    expect((settled[0] as PromiseRejectedResult).reason).to.have.property('message', 'redis is down');
  });

  it('rejects when the batch returns a different number of results', async () => {
    const short = batchPerTick(async (items: readonly number[]) => items.slice(1), { maxItems: 10 });
    const settled = await Promise.allSettled([1, 2].map(short));
    expect(settled.map((s) => s.status)).to.deep.equal(['rejected', 'rejected']);
  });
});

describe('batchPerTick with maxInFlight', () => {
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  /** A batch operation whose calls settle when the test says so. */
  function controlled() {
    const calls: { items: number[]; settle: (error?: Error) => void }[] = [];
    const run = (items: readonly number[]) =>
      new Promise<readonly number[]>((resolve, reject) => {
        calls.push({ items: [...items], settle: (error) => (error ? reject(error) : resolve(items)) });
      });
    return { calls, run };
  }

  it('sends an item at the next turn while nothing is in flight', async () => {
    const { calls, run } = controlled();
    const same = batchPerTick(run, { maxItems: 10, maxInFlight: 1 });
    const first = same(1);
    await nextTurn();
    expect(calls.map((call) => call.items)).to.deep.equal([[1]]);
    calls[0]?.settle();
    expect(await first).to.equal(1);
  });

  it('holds the items of later turns while a call is in flight, then sends them in one call', async () => {
    const { calls, run } = controlled();
    const same = batchPerTick(run, { maxItems: 10, maxInFlight: 1 });
    const results = [same(1)];
    await nextTurn();
    results.push(same(2));
    await nextTurn();
    results.push(same(3));
    await nextTurn();
    expect(calls.map((call) => call.items)).to.deep.equal([[1]]);
    calls[0]?.settle();
    await nextTurn();
    await nextTurn();
    expect(calls.map((call) => call.items)).to.deep.equal([[1], [2, 3]]);
    calls[1]?.settle();
    expect(await Promise.all(results)).to.deep.equal([1, 2, 3]);
  });

  it('sends everything that waited once the call settles, in as many batches as the limits need', async () => {
    const { calls, run } = controlled();
    const same = batchPerTick(run, { maxItems: 2, maxInFlight: 1 });
    const results = [same(1)];
    await nextTurn();
    results.push(...[2, 3, 4, 5, 6].map(same));
    await nextTurn();
    calls[0]?.settle();
    await nextTurn();
    await nextTurn();
    expect(calls.map((call) => call.items)).to.deep.equal([[1], [2, 3], [4, 5], [6]]);
    for (const call of calls.slice(1)) call.settle();
    expect(await Promise.all(results)).to.deep.equal([1, 2, 3, 4, 5, 6]);
  });

  it('sends the waiting items after maxHoldMs while the call in flight still has not settled', async () => {
    const { calls, run } = controlled();
    const same = batchPerTick(run, { maxItems: 10, maxInFlight: 1, maxHoldMs: 200 });
    void same(1);
    await nextTurn();
    const later = same(2);
    await nextTurn();
    expect(calls.map((call) => call.items)).to.deep.equal([[1]]);
    // The first call never settles here; the second goes once the hold has run out.
    for (let waited = 0; calls.length < 2 && waited < 5_000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(calls.map((call) => call.items)).to.deep.equal([[1], [2]]);
    calls[1]?.settle();
    expect(await later).to.equal(2);
    calls[0]?.settle();
  });

  it('lets the waiting items go when the call in flight fails, and rejects only its own', async () => {
    const { calls, run } = controlled();
    const same = batchPerTick(run, { maxItems: 10, maxInFlight: 1 });
    const failed = same(1);
    await nextTurn();
    const later = same(2);
    await nextTurn();
    calls[0]?.settle(new Error('redis is down'));
    await expect(failed).to.be.rejectedWith('redis is down');
    await nextTurn();
    expect(calls.map((call) => call.items)).to.deep.equal([[1], [2]]);
    calls[1]?.settle();
    expect(await later).to.equal(2);
  });
});
