import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastCompleteLine } from '../../../scripts/lib/last-complete-line.ts';

describe('scripts/lib/last-complete-line', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'last-line-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const of = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return lastCompleteLine(path);
  };

  it('finds the last line ended by a line break, and where the complete lines end', () => {
    expect(of('plain', 'a\nbb\n')).to.deep.equal({ end: 5, line: 'bb' });
    expect(of('cut', 'a\nbb\nccc')).to.deep.equal({ end: 5, line: 'bb' });
    expect(of('one', 'only\n')).to.deep.equal({ end: 5, line: 'only' });
  });

  it('finds none in an empty file or one whose only line was cut short', () => {
    expect(of('empty', '')).to.deep.equal({ end: 0 });
    expect(of('no-break', 'half a li')).to.deep.equal({ end: 0 });
  });

  it('reads lines longer than the chunk it reads at a time, and multi-byte text across chunks', () => {
    const long = `é${'x'.repeat(3 * 1024 * 1024)}ü`;
    const result = of('long', `first\n${long}\n${'y'.repeat(2 * 1024 * 1024)}`);
    expect(result.end).to.equal(Buffer.byteLength(`first\n${long}\n`));
    expect(result.line === long, 'the long line').to.equal(true);
  });
});
