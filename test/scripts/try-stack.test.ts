import { expect } from 'chai';
import { cleanEnv, runScript } from '../support/run-script.ts';

// The run itself needs `npm start`; BENCHMARKS.md records one. Here: the operator-facing edges.
describe('scripts/try-stack.ts', () => {
  it('--help prints the usage and exits 0', async () => {
    const result = await runScript('scripts/try-stack.ts', ['--help'], cleanEnv());
    expect(result.code).to.equal(0);
    expect(result.stdout).to.match(/^Usage: npm run try-stack/);
  });

  it('a bad count exits 2 naming the option', async () => {
    const result = await runScript('scripts/try-stack.ts', ['--members', 'many'], cleanEnv());
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include('--members: expected a whole number >= 1');
  });
});
