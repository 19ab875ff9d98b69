import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { descendants, processesMentioning, running, untilEnded } from '../support/process-tree.ts';
import { cleanEnv, startScript } from '../support/run-script.ts';

/**
 * A light soak for the describe block that calls it: its own Redis and PostgreSQL (no REDIS_URL or
 * DATABASE_URL), a receiver and two tray processes, started before the block's tests (ready once
 * it prints its header), and whatever it left running ended by id after them.
 */
function useRunningSoak(): { soak: () => ChildProcess; started: () => number[] } {
  let soak: ChildProcess | undefined;
  let started: number[] = [];
  before(async () => {
    const args = ['--minutes', '3', '--rate', '5', '--streams', '2', '--readers', '1'];
    ({ child: soak } = await startScript('scripts/bench-soak.ts', cleanEnv(), /^soak: /m, 200_000, {
      args,
    }));
    started = descendants(soak.pid ?? 0);
  });
  after(() => {
    // Whatever it left running (the bug these tests guard against), ended by id.
    for (const pid of started.filter(running)) process.kill(pid, 'SIGKILL');
    if (soak && soak.exitCode === null && soak.signalCode === null) soak.kill('SIGKILL');
  });
  return {
    soak: () => {
      if (!soak) throw new Error('the soak did not start');
      return soak;
    },
    started: () => started,
  };
}

describe('scripts/bench-soak.ts', () => {
  describe('stopped by SIGTERM while it runs', function () {
    this.timeout(240_000);
    const run = useRunningSoak();

    it('stops the services and servers it started before it exits 143', async () => {
      const soak = run.soak();
      const started = run.started();
      // redis-server, the PostgreSQL server, the receiver and two tray processes, at least.
      expect(started.length).to.be.at.least(5);
      const exited = new Promise<number | null>((done) => soak.once('exit', (code) => done(code)));
      soak.kill('SIGTERM');
      const code = await exited;
      // Its children were waited for before it exited; their own children (PostgreSQL's backends)
      // may take a moment more.
      expect(await untilEnded(started)).to.deep.equal([]);
      expect(code).to.equal(143);
    });
  });

  // Ctrl-C reaches the whole process group: the baseline's process, which has no handler, could end
  // first, and the bench's message telling it to stop then failed as an uncaught 'error' of the
  // child that ended the bench (exit 1) before it had stopped its servers.
  describe('interrupted after its baseline process ended', function () {
    this.timeout(240_000);
    const run = useRunningSoak();

    it('still stops the services and servers it started, and exits 130', async () => {
      const soak = run.soak();
      const started = run.started();
      const baseline = started.filter((pid) => processesMentioning('soak-baseline.ts').includes(pid));
      expect(baseline).to.have.lengthOf(1);
      process.kill(baseline[0]!, 'SIGINT');
      expect(await untilEnded(baseline)).to.deep.equal([]);
      const exited = new Promise<number | null>((done) => soak.once('exit', (code) => done(code)));
      soak.kill('SIGINT');
      const code = await exited;
      expect(await untilEnded(started)).to.deep.equal([]);
      expect(code).to.equal(130);
    });
  });
});
