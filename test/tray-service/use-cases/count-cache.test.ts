import { expect } from 'chai';
import { createCountCache } from '../../../tray-service/use-cases/count-cache.ts';

describe('createCountCache', () => {
  it('reuses a count within the TTL and loads it again after', async () => {
    const cache = createCountCache(5_000);
    let loads = 0;
    const load = async () => ++loads;
    expect(await cache.get('k', 0, load)).to.equal(1);
    expect(await cache.get('k', 4_999, load)).to.equal(1);
    expect(await cache.get('k', 5_000, load)).to.equal(2);
  });

  it('forgets every key with the prefix at once', async () => {
    const cache = createCountCache(5_000);
    let loads = 0;
    const load = async () => ++loads;
    await cache.get('["a","v2"]', 0, load);
    await cache.get('["ab","v2"]', 0, load);
    cache.forget('["a"');
    expect(await cache.get('["a","v2"]', 1, load)).to.equal(3);
    expect(await cache.get('["ab","v2"]', 1, load)).to.equal(2);
  });

  // A history page counting while a delete-all of the same user committed: the count it loaded
  // was kept, and every page for the TTL answered totalPages of the records deleted.
  it('keeps no count whose load ran while its key was forgotten', async () => {
    const cache = createCountCache(5_000);
    let release: (count: number) => void = () => undefined;
    const counting = cache.get('["a","v3"]', 0, () => new Promise<number>((resolve) => (release = resolve)));
    cache.forget('["a"');
    release(40);
    expect(await counting).to.equal(40);
    expect(await cache.get('["a","v3"]', 1, async () => 0)).to.equal(0);
    // A load of another user's key beside it is kept.
    let releaseOther: (count: number) => void = () => undefined;
    const other = cache.get(
      '["b","v3"]',
      2,
      () => new Promise<number>((resolve) => (releaseOther = resolve)),
    );
    cache.forget('["a"');
    releaseOther(7);
    expect(await other).to.equal(7);
    expect(await cache.get('["b","v3"]', 3, async () => 99)).to.equal(7);
  });

  // Loads overlapping without a pause (a busy instance) never let the list of forgets empty at
  // once: it holds only the forgets some running load started before.
  it('remembers a forget no longer than a load that started before it runs', async () => {
    const cache = createCountCache(5_000);
    const releases: Array<(count: number) => void> = [];
    const pending = (key: string) =>
      cache.get(key, 0, () => new Promise<number>((resolve) => releases.push(resolve)));
    let running = pending('["u0","v3"]');
    for (let n = 1; n <= 50; n += 1) {
      cache.forget(`["f${n}"`);
      const next = pending(`["u${n}","v3"]`);
      releases.shift()!(n);
      await running;
      running = next;
    }
    expect(cache.remembered()).to.be.at.most(1);
    releases.shift()!(0);
    await running;
    expect(cache.remembered()).to.equal(0);
  });

  it('drops the oldest entry when full', async () => {
    const cache = createCountCache(5_000, 2);
    let loads = 0;
    const load = async () => ++loads;
    await cache.get('a', 0, load);
    await cache.get('b', 0, load);
    await cache.get('c', 0, load);
    expect(await cache.get('b', 1, load)).to.equal(2);
    expect(await cache.get('a', 1, load)).to.equal(4);
  });
});
