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
