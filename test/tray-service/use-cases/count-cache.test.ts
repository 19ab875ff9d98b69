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
