import { expect } from 'chai';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { descendants, running, untilEnded } from '../support/process-tree.ts';
import { cleanEnv, runScript, startScript } from '../support/run-script.ts';

/** The cells of every row of `mode` in round 1, in table order (cells from 1: a row starts with `|`). */
const rowsOf = (stdout: string, mode: string) =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith(`| 1 | ${mode} |`))
    .map((line) => line.split('|').map((cell) => cell.trim()));

describe('npm run bench:receiver, in a small mode', () => {
  it('prints for each run its speed, what the machine did, and what Redis spent per queued job', async function () {
    this.timeout(120_000);
    const result = await runScript(
      'scripts/bench-receiver.ts',
      [],
      cleanEnv({ BENCH_DURATION: '1', BENCH_ROUNDS: '1', BENCH_CONNECTIONS: '10' }),
      110_000,
    );
    expect(result.code, result.stderr).to.equal(0);
    const rows = (mode: string) => rowsOf(result.stdout, mode);
    // Cells from 1 (a row starts with `|`). Speed: | round | server | req/s | p50 | p99 | requests | failed | server | redis | generator | queued |
    // Machine: | round | server | machine busy | steal | server | redis | generator | others | ... |
    // Redis: | round | server | jobs per script call | script us/job | rest | SET ... |
    const [speed, machine, redis] = rows('receiver');
    expect(speed?.[7], 'no request failed').to.equal('0');
    expect(Number(speed?.[10]), 'generator CPU per request').to.be.greaterThan(0);
    expect(machine?.[4]).to.match(/^\d+%$/);
    expect(Number(machine?.[3]?.slice(0, -1)), 'machine busy').to.be.greaterThan(0);
    expect(machine?.[3]).to.match(/^\d+%$/);
    expect(Number(redis?.[3]), 'jobs per script call').to.be.at.least(1);
    expect(Number(redis?.[4]), 'script us per job').to.be.greaterThan(0);
    expect(rows('bare'), 'the bare app queues nothing: no Redis row').to.have.length(2);
    expect(result.stdout).to.match(/receiver\/bare throughput: median \d/);
  });

  it("never signs during the bare app's run (it goes round its bodies) and, with BENCH_SPLIT=1, measures the receiver without its store", async function () {
    this.timeout(120_000);
    // 200 bodies for a second: both servers run out. A receiver must only ever get new bodies (a
    // repeat would be answered as a redelivery), so it signs more and says so; the bare app, which
    // keeps nothing, reuses its own, so signing never slows the baseline.
    const result = await runScript(
      'scripts/bench-receiver.ts',
      [],
      cleanEnv({
        BENCH_DURATION: '1',
        BENCH_ROUNDS: '1',
        BENCH_CONNECTIONS: '10',
        BENCH_BODIES_PER_SECOND: '200',
        BENCH_SPLIT: '1',
      }),
      110_000,
    );
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.match(
      /\[bench\] receiver: ran out of prepared bodies; \d+ signed during the run/,
    );
    expect(result.stdout).not.to.match(/\[bench\] bare: ran out/);
    const [bare] = rowsOf(result.stdout, 'bare');
    expect(Number(bare?.[6]), 'the bare app answered more requests than it had bodies').to.be.greaterThan(
      200,
    );
    // BENCH_SPLIT=1: the receiver without its store ran between the bare app and the receiver, and
    // queued nothing: the receiver's row starts at the depth the checks' row started at.
    const [checks] = rowsOf(result.stdout, 'checks');
    expect(Number(checks?.[3]), 'the checks answered').to.be.greaterThan(0);
    expect(checks?.[7], 'no request to the checks failed').to.equal('0');
    expect(rowsOf(result.stdout, 'receiver')[0]?.[11]).to.equal(checks?.[11]);
    expect(result.stdout).to.match(/checks\/bare throughput: median \d+(\.\d)?% \(no store, no target;/);
  });

  // Ctrl-C, a supervisor's SIGTERM, or a closed terminal's SIGHUP, used to end the bench at once and
  // leave its redis-server, its two server processes and its scratch folder behind.
  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
    ['SIGHUP', 129],
  ] as const) {
    it(`stopped by ${signal} mid-run, stops its servers and removes its folder before it exits ${code}`, async function () {
      this.timeout(60_000);
      const scratch = mkdtempSync(join(tmpdir(), 'bench-receiver-signal-'));
      let started: number[] = [];
      try {
        const { child } = await startScript(
          'scripts/bench-receiver.ts',
          cleanEnv({
            TMPDIR: scratch,
            BENCH_DURATION: '30',
            BENCH_BODIES_PER_SECOND: '2000',
            BENCH_ROUNDS: '1',
            BENCH_CONNECTIONS: '10',
          }),
          /^\[bench\] 1 rounds/m,
          50_000,
        );
        started = descendants(child.pid ?? 0);
        // redis-server and the two server processes
        expect(started.length).to.be.at.least(3);
        const exited = new Promise<number | null>((done) => child.once('exit', (exit) => done(exit)));
        child.kill(signal);
        expect(await exited).to.equal(code);
        expect(await untilEnded(started)).to.deep.equal([]);
        expect(readdirSync(scratch)).to.deep.equal([]);
      } finally {
        for (const pid of started.filter(running)) process.kill(pid, 'SIGKILL');
        rmSync(scratch, { recursive: true, force: true });
      }
    });
  }

  // Number() of "eight" is NaN: no round ran, the tables were empty, and the bench exited 0.
  it('refuses a count that is not a whole number, naming the variable, before starting anything', async () => {
    const refused: [string, string][] = [
      ['BENCH_ROUNDS', 'eight'],
      ['BENCH_DURATION', '0'],
      ['BENCH_CONNECTIONS', '1e2'],
      ['BENCH_BODIES_PER_SECOND', '-5'],
    ];
    for (const [name, value] of refused) {
      const result = await runScript('scripts/bench-receiver.ts', [], cleanEnv({ [name]: value }), 20_000);
      expect(result.code, `${name}=${value}`).to.equal(1);
      expect(result.stderr).to.include(`${name}: expected a whole number`);
      expect(result.stdout).to.equal('');
    }
  });

  // 30 s at 40,000 bodies a second signed ahead is about 3 GB: the generator ran out of heap and
  // died without stopping its servers.
  it('refuses a run it would sign more bodies ahead for than fit in memory, or too long for a fresh timestamp', async () => {
    const refused: [Record<string, string>, string][] = [
      [{ BENCH_DURATION: '30' }, 'BENCH_DURATION × BENCH_BODIES_PER_SECOND: at most'],
      [{ BENCH_DURATION: '600', BENCH_BODIES_PER_SECOND: '100' }, 'BENCH_DURATION: at most 240 s'],
    ];
    for (const [env, message] of refused) {
      const result = await runScript('scripts/bench-receiver.ts', [], cleanEnv(env), 20_000);
      expect(result.code, JSON.stringify(env)).to.equal(1);
      expect(result.stderr).to.include(message);
      expect(result.stdout).to.equal('');
    }
  });
});
