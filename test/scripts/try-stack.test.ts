import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  it('a --walk other than on, off or only exits 2 naming the option', async () => {
    const result = await runScript('scripts/try-stack.ts', ['--walk', 'yes'], cleanEnv());
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include('--walk: expected on, off or only, got "yes"');
  });

  it('too few dense records for the walk exits 2 naming --dense', async () => {
    const result = await runScript('scripts/try-stack.ts', ['--dense', '100'], cleanEnv());
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include('--dense: the walk reads 40 of them and snoozes 100');
  });

  it('without WEBHOOK_SECRET and no secrets from npm start, exits 2 naming the variable', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'try-stack-'));
    try {
      const result = await runScript('scripts/try-stack.ts', [], cleanEnv({ STACK_DATA_DIR: dataDir }));
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include('WEBHOOK_SECRET: not set, and there are no development secrets');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
