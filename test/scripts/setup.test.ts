import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { cleanEnv } from '../support/run-script.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
const setup = (...args: string[]) =>
  spawnSync('bash', ['scripts/setup.sh', ...args], { cwd: repoRoot, encoding: 'utf8', env: cleanEnv() });

// `setup.sh --help`, or a typo of --product, ran the whole install: apt-get as root and a build
// of FerretDB that takes minutes.
describe('scripts/setup.sh arguments', () => {
  it('answers --help with its usage and installs nothing', () => {
    const run = setup('--help');
    expect(run.status, run.stderr).to.equal(0);
    expect(run.stdout).to.match(/^usage: scripts\/setup\.sh \[--product\]/);
    expect(run.stderr).not.to.include('[setup]');
  });

  for (const args of [['--prod'], ['--product', 'extra'], ['product']]) {
    it(`refuses ${JSON.stringify(args)} with its usage and exit code 2, installing nothing`, () => {
      const run = setup(...args);
      expect(run.status).to.equal(2);
      expect(run.stderr).to.match(/^setup\.sh: .*\nusage: scripts\/setup\.sh \[--product\]/);
      expect(run.stderr).not.to.include('[setup]');
    });
  }
});
