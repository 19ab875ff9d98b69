import { expect } from 'chai';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, repoRoot, runCommand } from '../support/run-script.ts';

// `npm test` (test:client-build) and `npm run build:client` ran tsc straight into client/dist: a
// build cut short or failing left a newer half there, which setup.sh's freshness check then took
// for a finished build, and the demo page loaded modules that were never written.
describe('scripts/build-client.sh', function () {
  this.timeout(120_000);
  let client: string;
  before(() => {
    client = join(mkdtempSync(join(tmpdir(), 'build-client-')), 'client');
    for (const part of ['src', 'tsconfig.json', 'package.json'])
      cpSync(join(repoRoot, 'client', part), join(client, part), { recursive: true });
  });
  after(() => rmSync(join(client, '..'), { recursive: true, force: true }));
  const build = () => runCommand('bash', ['scripts/build-client.sh', client], cleanEnv(), 110_000);

  it('builds the JavaScript and the type declarations into dist, leaving nothing beside it', async () => {
    const { code, stderr } = await build();
    expect(code, stderr).to.equal(0);
    expect(existsSync(join(client, 'dist', 'index.js'))).to.equal(true);
    expect(existsSync(join(client, 'dist', 'index.d.ts'))).to.equal(true);
    expect(existsSync(join(client, 'dist.next'))).to.equal(false);
    expect(existsSync(join(client, 'dist.old'))).to.equal(false);
  });

  it('leaves the previous dist as it was when tsc fails, and says so', async () => {
    const before = readFileSync(join(client, 'dist', 'index.js'), 'utf8');
    const index = join(client, 'src', 'index.ts');
    writeFileSync(index, `${readFileSync(index, 'utf8')}\nexport const broken: number = 'text';\n`);
    const { code, stderr } = await build();
    expect(code).to.equal(1);
    expect(stderr).to.include('dist is left as it was');
    expect(readFileSync(join(client, 'dist', 'index.js'), 'utf8')).to.equal(before);
    expect(existsSync(join(client, 'dist.next'))).to.equal(false);
  });
});
