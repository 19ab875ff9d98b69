import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cleanEnv, startScript } from '../support/run-script.ts';

/** A process's state and parent from /proc/<pid>/stat; undefined once it is gone. */
function stat(pid: number): { state: string; parent: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name may hold spaces and parentheses: the fields follow its last ')'.
  const [state = '', parent = ''] = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state, parent: Number(parent) };
}

/** Whether the process still runs (a zombie has ended: only its parent has not collected it). */
const running = (pid: number) => {
  const found = stat(pid);
  return found !== undefined && found.state !== 'Z';
};

/** Every running process descended from `root`. */
function descendants(root: number): number[] {
  const pids = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
  const childrenOf = new Map<number, number[]>();
  for (const pid of pids) {
    const found = stat(pid);
    if (!found || found.state === 'Z') continue;
    childrenOf.set(found.parent, [...(childrenOf.get(found.parent) ?? []), pid]);
  }
  const result: number[] = [];
  const next = [root];
  for (let pid = next.pop(); pid !== undefined; pid = next.pop()) {
    const children = childrenOf.get(pid) ?? [];
    result.push(...children);
    next.push(...children);
  }
  return result;
}

describe('scripts/bench-soak.ts', () => {
  describe('stopped by SIGTERM while it runs', function () {
    this.timeout(240_000);
    let soak: ChildProcess;
    let started: number[] = [];

    before(async () => {
      // Its own Redis and PostgreSQL (no REDIS_URL or DATABASE_URL), a receiver and two tray
      // processes; a light load, ready once it prints its header.
      const args = ['--minutes', '3', '--rate', '5', '--streams', '2', '--readers', '1'];
      ({ child: soak } = await startScript('scripts/bench-soak.ts', cleanEnv(), /^soak: /m, 200_000, {
        args,
      }));
      started = descendants(soak.pid ?? 0);
    });
    after(() => {
      // Whatever it left running (the bug this guards against), ended by id.
      for (const pid of started.filter(running)) process.kill(pid, 'SIGKILL');
      if (soak.exitCode === null && soak.signalCode === null) soak.kill('SIGKILL');
    });

    it('stops the services and servers it started before it exits 143', async () => {
      // redis-server, the PostgreSQL server, the receiver and two tray processes, at least.
      expect(started.length).to.be.at.least(5);
      const exited = new Promise<number | null>((done) => soak.once('exit', (code) => done(code)));
      soak.kill('SIGTERM');
      const code = await exited;
      // Its children were waited for before it exited; their own children (PostgreSQL's backends)
      // may take a moment more.
      for (let waited = 0; started.some(running) && waited < 10_000; waited += 100)
        await new Promise((done) => setTimeout(done, 100));
      expect(started.filter(running)).to.deep.equal([]);
      expect(code).to.equal(143);
    });
  });
});
