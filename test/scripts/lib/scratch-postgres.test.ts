import { expect } from 'chai';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { descendants, running, untilEnded } from '../../support/process-tree.ts';
import { cleanEnv, startScript } from '../../support/run-script.ts';
import { usePostgres } from '../../support/use-postgres.ts';

/**
 * Interrupts the user-deletion timing (scratch-postgres.ts's user) once it has seeded its records,
 * while it imports a community too large to finish first.
 */
async function interruptedMidSeed(env: NodeJS.ProcessEnv) {
  const { child } = await startScript('scripts/time-pg-user-deletion.ts', env, /records$/m, 90_000, {
    args: ['--records', '1000', '--members', '2000000'],
  });
  const started = descendants(child.pid ?? 0);
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  child.kill('SIGINT');
  return { code: await exited, started };
}

// A timing seeds millions of rows; interrupted, it left its PostgreSQL cluster running in the temp
// dir, or its database on the operator's server.
describe('scripts/lib/scratch-postgres.ts, a timing stopped by Ctrl-C', function () {
  this.timeout(120_000);
  const shared = usePostgres();

  it('stops the cluster it started and removes its folder before it exits 130', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'scratch-postgres-signal-'));
    let started: number[] = [];
    try {
      const interrupted = await interruptedMidSeed(cleanEnv({ TMPDIR: scratch }));
      started = interrupted.started;
      expect(started.length, 'the cluster’s processes').to.be.at.least(1);
      expect(interrupted.code).to.equal(130);
      expect(await untilEnded(started)).to.deep.equal([]);
      expect(readdirSync(scratch)).to.deep.equal([]);
    } finally {
      for (const pid of started.filter(running)) process.kill(pid, 'SIGKILL');
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('drops the database it made on DATABASE_URL’s server', async () => {
    const server = new URL(shared.url);
    server.pathname = '/postgres';
    const interrupted = await interruptedMidSeed(cleanEnv({ DATABASE_URL: server.toString() }));
    expect(interrupted.code).to.equal(130);
    const left = await shared.pool.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE 'deletion\\_%'",
    );
    expect(left.rows).to.deep.equal([]);
  });
});
