import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { takePidLock } from '../../../scripts/lib/pid-lock.ts';

const held = (pid: number) => new Error(`held by ${pid}`);

describe('takePidLock', () => {
  let dir = '';
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'pid-lock-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes this process’s pid, and its release removes the file', () => {
    const path = join(dir, 'lock');
    const release = takePidLock(path, 'node', held);
    expect(readFileSync(path, 'utf8')).to.equal(`${process.pid}\n`);
    expect(() => takePidLock(path, 'node', held)).to.throw(`held by ${process.pid}`);
    release();
    takePidLock(path, 'node', held)();
  });

  it('takes over a lock whose process is gone', () => {
    const path = join(dir, 'lock');
    writeFileSync(path, '2147483646\n');
    takePidLock(path, 'node', held)();
  });

  // Another process creates the file, then writes its pid: read in between, the empty file looked
  // like a dead holder's, and both runs took the lock (two exports writing one file).
  it('does not take a lock file just created and still empty', () => {
    const path = join(dir, 'lock');
    writeFileSync(path, '');
    expect(() => takePidLock(path, 'node', held)).to.throw('is another process taking it?');
    expect(readFileSync(path, 'utf8')).to.equal('');
  });

  it('takes over an empty lock file left long ago (a process killed between the two steps)', () => {
    const path = join(dir, 'lock');
    writeFileSync(path, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(path, old, old);
    takePidLock(path, 'node', held)();
  });
});
