import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  commandName,
  descendants,
  parentOf,
  processesMentioning,
  running,
  untilEnded,
} from '../support/process-tree.ts';
import { cleanEnv, repoRoot, runScript } from '../support/run-script.ts';
import { testPostgres } from '../support/test-stack.ts';

// The full run (10,000,000 records) is recorded in BENCHMARKS.md. Here: a small run on the test
// stack's PostgreSQL, so the bench keeps working: seeding, every view and count it times checked
// against the plain statements (the client refuses to time wrong answers), and the report.
describe('scripts/bench-api.ts', () => {
  it('a bad count exits 2 naming the option', async () => {
    const result = await runScript('scripts/bench-api.ts', ['--rounds', 'many'], cleanEnv());
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include('--rounds: expected a whole number >= 1');
    const settle = await runScript('scripts/bench-api.ts', ['--settle', 'soon'], cleanEnv());
    expect(settle.code).to.equal(2);
    expect(settle.stderr).to.include('--settle: expected a whole number >= 0');
  });

  // A signal while PostgreSQL was starting (initdb done, the server not yet listening): the bench
  // held no handle to it yet, stopped only Redis, and PostgreSQL ran on.
  it('stopped by SIGTERM while its PostgreSQL starts, stops it too and removes its folder', async function () {
    this.timeout(60_000);
    const scratch = mkdtempSync(join(tmpdir(), 'bench-api-start-'));
    // PostgreSQL runs as its own account, which must reach its folder in here.
    chmodSync(scratch, 0o755);
    const child = spawn(process.execPath, [join(repoRoot, 'scripts/bench-api.ts')], {
      cwd: repoRoot,
      env: cleanEnv({ TMPDIR: scratch }),
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    let started: number[] = [];
    try {
      const deadline = Date.now() + 30_000;
      // The server itself, the bench's child (initdb's single-user postgres comes before it).
      const server = (pid: number) => commandName(pid) === 'postgres' && parentOf(pid) === child.pid;
      while (!started.some(server) && Date.now() < deadline) {
        await new Promise((done) => setTimeout(done, 10));
        started = descendants(child.pid ?? 0);
      }
      expect(started.map(commandName), 'Redis and PostgreSQL started').to.include.members([
        'redis-server',
        'postgres',
      ]);
      const exited = new Promise<number | null>((done) => child.once('exit', (exit) => done(exit)));
      child.kill('SIGTERM');
      expect(await exited).to.equal(143);
      expect(await untilEnded(started)).to.deep.equal([]);
      expect(await untilEnded(processesMentioning(scratch)), 'any process of its folder').to.deep.equal([]);
      expect(readdirSync(scratch)).to.deep.equal([]);
    } finally {
      child.kill('SIGKILL');
      for (const pid of [...started, ...processesMentioning(scratch)].filter(running))
        process.kill(pid, 'SIGKILL');
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  describe('a small run', () => {
    let result: Awaited<ReturnType<typeof runScript>>;
    before(async function () {
      this.timeout(180_000);
      const args = ['--total', '3000', '--user-records', '60', '--dense-records', '60', '--archived', '40'];
      args.push(
        '--snoozed',
        '5',
        '--deep',
        '20',
        '--rounds',
        '3',
        '--settle',
        '1',
        '--batch',
        '1000',
        '--gc',
        '--stages',
      );
      const env = cleanEnv({ DATABASE_URL: (await testPostgres()).url });
      result = await runScript('scripts/bench-api.ts', args, env, 170_000);
    });

    it('runs to the end (exit 0, or 1 for a missed target) with every answer checked', () => {
      expect(result.stderr).to.not.include('error:');
      expect(result.code).to.be.oneOf([0, 1]);
    });

    it("settles with the first user's calls, untimed, before measuring anyone, and only then", () => {
      const lines = result.stderr.split('\n');
      const settling = lines.findIndex((line) =>
        line.includes("settling for 1 s: bench-user's calls, untimed"),
      );
      expect(settling, 'the settling line').to.be.above(-1);
      expect(settling).to.be.below(lines.findIndex((line) => line.includes('measuring bench-user')));
      expect(lines.filter((line) => line.includes('settling for'))).to.have.length(1);
    });

    it('prints each view of bench-archive, first and deep page, and both counts, with the target', () => {
      for (const call of [
        'inbox, first page',
        'inbox, page at record 20',
        'archived, first page',
        'archived, page at record 20',
        'snoozed, first page',
        'all, first page',
        'all, page at record 20',
        'GET v3: both counts',
      ]) {
        expect(result.stdout).to.match(
          new RegExp(
            `\\| bench-archive \\| ${call}.*\\| (ok|MISSED): p99 <= 5 ms and within 1.5 ms of the floor \\|`,
          ),
        );
      }
      expect(result.stdout).to.match(/\| bench-dense \| GET v3: both counts \(60 unread, 48 unseen\)/);
    });

    it('prints the bytes a record takes on disk with its indexes', () => {
      expect(result.stdout).to.match(
        /on disk: 3,000 records take .* GB with their indexes, \d+ bytes a record/,
      );
      expect(result.stdout).to.include('tray_records_inbox_page');
    });

    it("with --gc, counts the collections during the API's and the floor's requests, per user", () => {
      for (const user of ['bench-user', 'bench-dense', 'bench-archive']) {
        expect(result.stdout).to.include(`| ${user}: GC during | requests | scavenges |`);
      }
      // bench-user's 5 calls x 3 rounds on each server.
      expect(result.stdout).to.match(/\| API \| 15 \| \d+ \| \d+\.\d \|/);
      expect(result.stdout).to.match(/\| floor \| 15 \| \d+ \| \d+\.\d \|/);
    });

    it('with --stages, says per user where the calls slower than the floor allows lost their time', () => {
      expect(result.stdout).to.include('| bench-user: stage | p50 | p99 | calls |');
      expect(result.stdout).to.include(
        "| calls over the floor's p99 + 1.5 ms | calls | slow | SQL late | Redis late | SQL and Redis late together | outside the handler | elsewhere in the handler |",
      );
      // Every counted call of each user (bench-archive: 8 calls x 3 rounds), the causes adding up.
      for (const [user, calls] of [
        ['bench-user', 15],
        ['bench-dense', 15],
        ['bench-archive', 24],
      ] as const) {
        const row = new RegExp(
          `\\| ${user} \\| ${calls} \\| (\\d+) \\| (\\d+) \\| (\\d+) \\| (\\d+) \\| (\\d+) \\| (\\d+) \\|`,
        ).exec(result.stdout);
        expect(row, `${user}'s row`).to.not.equal(null);
        const [slow, ...causes] = (row ?? []).slice(1).map(Number);
        expect(causes.reduce((sum, n) => sum + n, 0)).to.equal(slow);
      }
    });

    it('says per user how much file data was not yet on disk as its measurement started and ended', () => {
      expect(result.stdout).to.match(
        /bench-user: bare hop p50 .*; file data not yet on disk \d+ MB at the start, \d+ MB at the end/,
      );
    });

    it('writes the load out to disk (a checkpoint and a sync) before it measures', () => {
      const output = result.stderr; // the progress lines
      expect(output).to.match(
        /CHECKPOINT and sync in [\d.]+ m?s: file data not yet on disk \d+ MB before, \d+ MB after/,
      );
      expect(output.indexOf('CHECKPOINT and sync')).to.be.below(output.indexOf('measuring bench-user'));
    });
  });
});
