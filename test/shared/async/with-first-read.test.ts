import { expect } from 'chai';
import { withFirstRead } from '../../../shared/async/with-first-read.ts';

describe('withFirstRead', () => {
  it('asks for the first item at once, then gives every item in order, asking for the rest as taken', async () => {
    const asked: number[] = [];
    async function* source() {
      for (let n = 1; n <= 3; n += 1) {
        asked.push(n);
        yield n;
      }
    }
    const read = withFirstRead(source());
    await read.first;
    expect(asked).to.deep.equal([1]);
    const items: number[] = [];
    for await (const item of read.all) items.push(item);
    expect(items).to.deep.equal([1, 2, 3]);
  });

  it('fails `first` with the first read’s failure, before anything is taken', async () => {
    const source: AsyncIterable<number> = {
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          throw new Error('storage down');
        },
      }),
    };
    const failure = await withFirstRead(source)
      .first.then(() => undefined)
      .catch((error: unknown) => error);
    expect((failure as Error).message).to.equal('storage down');
  });

  it('ends the source when `all` is ended early', async () => {
    let ended = false;
    async function* source() {
      try {
        for (let n = 1; ; n += 1) yield n;
      } finally {
        ended = true;
      }
    }
    const read = withFirstRead(source());
    await read.first;
    for await (const item of read.all) if (item === 2) break;
    expect(ended).to.equal(true);
  });
});
