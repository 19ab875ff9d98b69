import { expect } from 'chai';
import { cleanEnv, runScript } from '../support/run-script.ts';
import { testPostgres } from '../support/test-stack.ts';

// The full runs are recorded in BENCHMARKS.md. Here: the scenarios that start the service, small,
// on its own receiver and two tray processes, so the bench keeps working end to end.
describe('scripts/bench-stream.ts', () => {
  it('an unknown scenario exits 2 naming the option', async () => {
    const result = await runScript('scripts/bench-stream.ts', ['--scenarios', 'snooze,nope'], cleanEnv());
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include('--scenarios expects some of latency,fanout,snooze,memory');
  });

  describe('the latency, fan-out, snooze and memory scenarios, small', () => {
    let result: Awaited<ReturnType<typeof runScript>>;
    before(async function () {
      this.timeout(240_000);
      const args = [
        '--scenarios',
        'latency,fanout,snooze,memory',
        '--snoozes',
        '300',
        '--snooze-users',
        '10',
      ];
      args.push('--snooze-window', '3', '--snooze-lead', '5', '--rate', '20', '--seconds', '2');
      args.push('--recipients', '4', '--warmup', '0', '--members', '30', '--idle', '30');
      const env = cleanEnv({ DATABASE_URL: (await testPostgres()).url });
      result = await runScript('scripts/bench-stream.ts', args, env, 230_000);
    });

    it('brings every record back on its user stream once, and prints the latency and its baseline', () => {
      expect(result.stderr).to.not.include('error:');
      expect(result.stdout).to.include('snooze wake-ups: 300 records of 10 users');
      expect(result.stdout).to.include("back on their user's stream: 300 of 300");
      expect(result.stdout).to.include('announced more than once: 0; left snoozed: 0');
      expect(result.stdout).to.match(
        /bare SQL: the claim statement by hand on a scratch copy woke 300 due records/,
      );
      expect(result.code).to.be.oneOf([0, 1]);
    });

    it('times the same load on the bare path beside latency, fan-out and memory', () => {
      const bare = 'the bare path (node:http, one INSERT, Redis PUBLISH, SSE write)';
      expect(result.stdout).to.include('sent 40, refused 0, delivered 40');
      const latency = `baseline, ${bare}, the same rate and streams on 2 bare servers:\n`;
      expect(result.stdout).to.include(latency);
      expect(result.stdout.split(latency)[1]).to.match(/^ {2}p50 \d+ ms, p99 \d+ ms, max \d+ ms\n/);
      expect(result.stdout).to.include(
        `baseline, ${bare}, one record to every member on 2 bare servers:\n  reached 30 of 30 streams`,
      );
      expect(result.stdout).to.match(
        /memory: baseline, a bare server \(.*\) RSS [\d.]+ MB idle, [\d.]+ MB with 30 open streams/,
      );
    });
  });
});
