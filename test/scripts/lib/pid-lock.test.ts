import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
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

  // Containers number their processes from 1 at every start: a lock a killed run left may name
  // the pid this run now has, which runs and is `node`, and was taken for another holder, so
  // every later start refused until someone deleted the file.
  it('takes over a lock that names this process’s pid but was not taken by it', () => {
    const path = join(dir, 'lock');
    writeFileSync(path, `${process.pid}\n`);
    const release = takePidLock(path, 'node', held);
    expect(readFileSync(path, 'utf8')).to.equal(`${process.pid}\n`);
    expect(() => takePidLock(path, 'node', held)).to.throw(`held by ${process.pid}`);
    release();
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

  // Two runs finding one dead holder's lock: each removed it and made its own, and the later
  // removal took the earlier run's fresh lock away; both then held it.
  it('leaves a dead holder’s lock to the run already taking it over', () => {
    const path = join(dir, 'lock');
    writeFileSync(path, '2147483646\n');
    writeFileSync(`${path}.takeover`, '');
    expect(() => takePidLock(path, 'node', held)).to.throw('is another process taking it?');
    expect(readFileSync(path, 'utf8')).to.equal('2147483646\n');
    // One left by a run killed mid-takeover is old: taken over then.
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${path}.takeover`, old, old);
    takePidLock(path, 'node', held)();
    expect(existsSync(`${path}.takeover`)).to.equal(false);
  });

  // The same with real processes at once: before, two or three of six often all took it.
  it('is taken by one of six processes racing for a dead holder’s lock', async function () {
    this.timeout(30_000);
    const path = join(dir, 'lock');
    const module = resolve(import.meta.dirname, '../../../scripts/lib/pid-lock.ts');
    const code = `
      import { takePidLock } from ${JSON.stringify(module)};
      while (Date.now() < Number(process.argv[1])) {}
      try {
        const release = takePidLock(${JSON.stringify(path)}, 'node', (pid) => new Error('held by ' + pid));
        process.stdout.write('took');
        setTimeout(release, 4_000);
      } catch {}`;
    // All six start before `at` and try then; the winner holds the lock well past any late one.
    for (let round = 0; round < 2; round += 1) {
      writeFileSync(path, '2147483646\n');
      const at = String(Date.now() + 1_500);
      const outputs = await Promise.all(
        Array.from(
          { length: 6 },
          () =>
            new Promise<string>((done, fail) =>
              execFile(process.execPath, ['--input-type=module', '-e', code, at], (error, stdout) =>
                error ? fail(error) : done(stdout),
              ),
            ),
        ),
      );
      expect(
        outputs.filter((out) => out === 'took'),
        `round ${round}`,
      ).to.have.lengthOf(1);
    }
  });

  it('takes over an empty lock file left long ago (a process killed between the two steps)', () => {
    const path = join(dir, 'lock');
    writeFileSync(path, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(path, old, old);
    takePidLock(path, 'node', held)();
  });
});
