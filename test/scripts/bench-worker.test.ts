import { expect } from 'chai';
import { cleanEnv, runScript } from '../support/run-script.ts';
import { testPostgres } from '../support/test-stack.ts';

// The full runs are recorded in BENCHMARKS.md. Here: every row, small, through the real queue and
// worker on the test PostgreSQL, so the bench keeps working end to end.
describe('scripts/bench-worker.ts', () => {
  it('--comments below 2 exits naming the option', async () => {
    const result = await runScript('scripts/bench-worker.ts', ['--comments', '1'], cleanEnv());
    expect(result.code).to.not.equal(0);
    expect(result.stderr).to.include('--comments expects a whole number >= 2');
  });

  describe('a small run', () => {
    let result: Awaited<ReturnType<typeof runScript>>;
    before(async function () {
      this.timeout(240_000);
      const args = ['--events', '40', '--posts', '4', '--members', '50', '--huge', '60', '--burst', '2'];
      args.push('--mutes', '20', '--comments', '30', '--commenters', '200', '--hot', '5');
      const env = cleanEnv({ DATABASE_URL: (await testPostgres()).url });
      result = await runScript('scripts/bench-worker.ts', args, env, 230_000);
    });

    it('deletes a comment and the post through the worker, confirmed by query, each beside its bare SQL', () => {
      // A target missed fails the run (exit 1, a MISSED row); a small run on a test machine may.
      expect(result.code, result.stderr).to.be.oneOf([0, 1]);
      expect(result.code === 1, 'exit 1 exactly when a row says MISSED').to.equal(
        /\bMISSED\b/.test(result.stdout),
      );
      // 30 comments: every tenth a reply to the first (3), the other 27 on the post itself.
      expect(result.stdout).to.match(
        /\| comment deleted from a group of 27 actors, ms +\| +\d+\.\d \| +\d+\.\d \| +\|/,
      );
      expect(result.stdout).to.match(
        /\| deleted post, 50 members \+ 30 comments, s +\| +\d+\.\d\d \| +\d+\.\d\d \| (ok|MISSED) <= 1 s +\|/,
      );
    });

    it('keeps the rows before them', () => {
      for (const row of [
        'grouped comments, events/s',
        'post to 60 members, grouped, s',
        '2 posts to 50 members',
      ])
        expect(result.stdout).to.include(`| ${row}`);
    });

    it('times comments on a post of many earlier commenters beside the bare upsert of its record', () => {
      expect(result.stdout).to.match(
        /\| comments, post of 200 commenters, events\/s +\| +\d+ \| +\d+ \| +\|/,
      );
    });

    it('times grouped comments alone and beside a post to the huge community', () => {
      expect(result.stdout).to.include('beside a fan-out: 40 grouped comments');
      expect(result.stdout).to.match(/\| alone +\| +[\d.]+ \| +[\d.]+ \| +[\d.]+ \| +[\d.]+ \|/);
      expect(result.stdout).to.match(
        /\| beside a post to 60 members \([\d.]+ s\) +\| +[\d.]+ \| +[\d.]+ \| +[\d.]+ \| +[\d.]+ \|/,
      );
    });
  });
});
