import { expect } from 'chai';
import { boundedLines, type LongLine } from '../../../scripts/lib/bounded-lines.ts';

async function* chunks(...parts: string[]): AsyncGenerator<string> {
  for (const part of parts) yield part;
}

const all = async (input: AsyncIterable<string>, max = 10) => {
  const lines: (string | LongLine)[] = [];
  for await (const line of boundedLines(input, max)) lines.push(line);
  return lines;
};

describe('scripts/lib/bounded-lines.ts', () => {
  it('splits as readline does with crlfDelay Infinity: at \\r\\n, \\n or \\r, across chunks', async () => {
    expect(await all(chunks('a\r\nb', 'c\n', '\nd'))).to.deep.equal(['a', 'bc', '', 'd']);
    expect(await all(chunks('a\r', '\nb\n'))).to.deep.equal(['a', 'b']);
    expect(await all(chunks(''))).to.deep.equal([]);
    // A spreadsheet's "CSV (Macintosh)": lines end at a lone \r.
    expect(await all(chunks('h1,h2\rc,u\r', 'c,v'))).to.deep.equal(['h1,h2', 'c,u', 'c,v']);
    expect(await all(chunks('a\r', '\r', 'b'))).to.deep.equal(['a', '', 'b']);
  });

  it('splits as readline does, whatever the chunks', async () => {
    const { createInterface } = await import('node:readline');
    const { Readable } = await import('node:stream');
    const text = 'one\r\ntwo\rthree\n\nfour\r\r\nfive\r';
    const expected: string[] = [];
    for await (const line of createInterface({ input: Readable.from([text]), crlfDelay: Infinity }))
      expected.push(line);
    for (let size = 1; size <= text.length; size += 1) {
      const parts = Array.from({ length: Math.ceil(text.length / size) }, (_, n) =>
        text.slice(n * size, n * size + size),
      );
      expect(await all(chunks(...parts), 100), `chunks of ${size}`).to.deep.equal(expected);
    }
  });

  it('gives a line longer than the bound as its length only, and goes on after it', async () => {
    expect(await all(chunks('short\n', 'x'.repeat(8), 'x'.repeat(8), 'x\nnext\n'))).to.deep.equal([
      'short',
      { tooLong: true, length: 17 },
      'next',
    ]);
    // A file that is one long line, never ended.
    expect(await all(chunks('[', 'y'.repeat(30), ']'))).to.deep.equal([{ tooLong: true, length: 32 }]);
    // Exactly the bound is a line.
    expect(await all(chunks('0123456789\n'))).to.deep.equal(['0123456789']);
  });
});
