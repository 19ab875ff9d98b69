import { expect } from 'chai';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { descendants, running, untilEnded } from '../../support/process-tree.ts';
import { cleanEnv, startCommand } from '../../support/run-script.ts';

const lib = resolve(import.meta.dirname, '../../../scripts/lib/timing-mongo-storage.ts');

// A timing seeds millions of documents; interrupted, it left FerretDB and its PostgreSQL running
// in the temp dir (or its database on MONGODB_URI's server).
describe('scripts/lib/timing-mongo-storage.ts, a timing stopped by Ctrl-C', function () {
  this.timeout(120_000);

  it('stops the servers it started and removes its folder before it exits 130', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'timing-mongo-signal-'));
    // Its PostgreSQL may run as the postgres account (as root), which must pass through to its data.
    chmodSync(scratch, 0o711);
    let started: number[] = [];
    try {
      // A timing that has opened its storage and then runs until it is interrupted.
      const timing = `
        import { withTimingMongoStorage } from ${JSON.stringify(lib)};
        await withTimingMongoStorage('mongo-signal', async () => {
          process.stdout.write('timing\\n');
          await new Promise(() => setInterval(() => undefined, 1_000));
        });`;
      const { child } = await startCommand(
        process.execPath,
        ['--input-type=module', '-e', timing],
        cleanEnv({ TMPDIR: scratch }),
        /^timing$/m,
        90_000,
      );
      started = descendants(child.pid ?? 0);
      expect(started.length, 'FerretDB and its PostgreSQL').to.be.at.least(2);
      const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
      child.kill('SIGINT');
      expect(await exited).to.equal(130);
      expect(await untilEnded(started)).to.deep.equal([]);
      expect(readdirSync(scratch)).to.deep.equal([]);
    } finally {
      for (const pid of started.filter(running)) process.kill(pid, 'SIGKILL');
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
