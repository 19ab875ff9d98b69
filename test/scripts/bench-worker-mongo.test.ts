import { expect } from 'chai';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processesMentioning, untilEnded } from '../support/process-tree.ts';
import { cleanEnv, runScript } from '../support/run-script.ts';

// FerretDB is built by the full setup, not by `npm start`'s: the bench failed there with "ferretdb
// not found", and left the redis-server it had started running, its folder behind.
describe('bench:worker-mongo (scripts/bench-worker-mongo.ts)', () => {
  it('stops what it started and removes its folder when a server fails to start', async function () {
    this.timeout(60_000);
    const scratch = mkdtempSync(join(tmpdir(), 'bench-worker-mongo-failed-'));
    // PostgreSQL runs as its own account, which must pass through the folder.
    chmodSync(scratch, 0o711);
    try {
      const result = await runScript(
        'scripts/bench-worker-mongo.ts',
        [],
        cleanEnv({ TMPDIR: scratch, FERRETDB_BIN: join(scratch, 'no-ferretdb') }),
        50_000,
      );
      expect(result.code, result.stderr).to.equal(1);
      expect(result.stderr, result.stderr).to.include('no-ferretdb');
      expect(await untilEnded(processesMentioning(scratch)), 'processes left running').to.deep.equal([]);
      expect(readdirSync(scratch), 'what it left in its temp folder').to.deep.equal([]);
    } finally {
      for (const pid of processesMentioning(scratch)) process.kill(pid, 'SIGKILL');
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
