import { expect } from 'chai';
import { cleanEnv, runScript } from '../support/run-script.ts';

describe('npm run bench:receiver-backlog, in a small mode', () => {
  it('measures a round on an empty queue and one on the backlog, every request accepted', async function () {
    this.timeout(90_000);
    const result = await runScript(
      'scripts/bench-receiver-backlog.ts',
      [],
      cleanEnv({ BACKLOG_JOBS: '500', BACKLOG_RATE: '100', BACKLOG_SECONDS: '1', BACKLOG_ROUNDS: '1' }),
      80_000,
    );
    expect(result.code, result.stderr).to.equal(0);
    // | round | queued at start | requests | p99 ms | failed | ...
    const rows = result.stdout
      .split('\n')
      .filter((line) => /^\| 1 \|/.test(line))
      .map((line) => line.split('|').map((cell) => cell.trim()));
    expect(rows.map((cells) => cells[2])).to.deep.equal(['0', '500']);
    for (const cells of rows) {
      expect(Number(cells[3])).to.be.greaterThan(0);
      expect(cells[5]).to.equal('0');
    }
    expect(result.stdout).to.match(/CPU per request with 500 queued \/ empty: receiver median \d/);
  });

  it('refuses a count that is not a whole number, naming the variable, before starting anything', async () => {
    const refused: [string, string][] = [
      ['BACKLOG_JOBS', '1e5'],
      ['BACKLOG_ROUNDS', 'three'],
    ];
    for (const [name, value] of refused) {
      const result = await runScript(
        'scripts/bench-receiver-backlog.ts',
        [],
        cleanEnv({ [name]: value }),
        20_000,
      );
      expect(result.code, `${name}=${value}`).to.equal(1);
      expect(result.stderr).to.include(`${name}: expected a whole number`);
    }
  });

  it('refuses a run it would sign more bodies ahead for than fit in memory, or too long for a fresh timestamp', async () => {
    const refused: [Record<string, string>, string][] = [
      [
        { BACKLOG_SECONDS: '200', BACKLOG_RATE: '5000', BENCH_SCHEMES: 'platform' },
        'BACKLOG_SECONDS × BACKLOG_RATE: at most',
      ],
      [{ BACKLOG_SECONDS: '600', BACKLOG_RATE: '100' }, 'BACKLOG_SECONDS: at most 240 s'],
    ];
    for (const [env, message] of refused) {
      const result = await runScript('scripts/bench-receiver-backlog.ts', [], cleanEnv(env), 20_000);
      expect(result.code, JSON.stringify(env)).to.equal(1);
      expect(result.stderr).to.include(message);
      expect(result.stdout).to.equal('');
    }
  });
});
