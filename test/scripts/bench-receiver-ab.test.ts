import { expect } from 'chai';
import { cleanEnv, runScript } from '../support/run-script.ts';

// The A/B run itself needs a second checkout with its own node_modules; what it prints is the
// shared median of its rounds (scripts/lib/quantile.ts) of figures bench:receiver's test covers.
describe('npm run bench:receiver-ab', () => {
  // AB_ROUNDS=0 printed "B/A: median 0.000 (rounds )" and exited 0: read as "B costs nothing".
  it('refuses a count that is not a whole number, naming the variable, before starting anything', async () => {
    const refused: [string, string][] = [
      ['AB_ROUNDS', '0'],
      ['AB_RATE', 'fast'],
      ['AB_SECONDS', '2.5'],
    ];
    for (const [name, value] of refused) {
      const result = await runScript(
        'scripts/bench-receiver-ab.ts',
        ['.'],
        cleanEnv({ [name]: value }),
        20_000,
      );
      expect(result.code, `${name}=${value}`).to.equal(1);
      expect(result.stderr).to.include(`${name}: expected a whole number`);
      expect(result.stdout).to.equal('');
    }
  });

  it('refuses a run it would sign more bodies ahead for than fit in memory, or too long for a fresh timestamp', async () => {
    const refused: [Record<string, string>, string][] = [
      [{ AB_SECONDS: '300', AB_RATE: '1500', BENCH_SCHEMES: 'platform' }, 'AB_SECONDS × AB_RATE: at most'],
      [{ AB_SECONDS: '600', AB_RATE: '100' }, 'AB_SECONDS: at most 240 s'],
    ];
    for (const [env, message] of refused) {
      const result = await runScript('scripts/bench-receiver-ab.ts', ['.'], cleanEnv(env), 20_000);
      expect(result.code, JSON.stringify(env)).to.equal(1);
      expect(result.stderr).to.include(message);
      expect(result.stdout).to.equal('');
    }
  });
});
