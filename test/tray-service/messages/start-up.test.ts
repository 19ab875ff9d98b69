import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, runScript } from '../../support/run-script.ts';

describe('tray-service/main.ts with a broken catalogue in TRAY_MESSAGES_DIR', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tray-start-'));
    writeFileSync(
      join(dir, 'fr.json'),
      JSON.stringify({ 'mentreply.2': '{{actor1}} et {{actor3}} ont répondu' }),
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('stops start-up with one line naming the file and key', async () => {
    const result = await runScript(
      'tray-service/main.ts',
      [],
      cleanEnv({
        // Valid keys and storage (nothing connects): start-up checks those before it reads files.
        JWT_SECRET: 'x'.repeat(32),
        DATABASE_URL: 'postgres://127.0.0.1:1/none',
        TRAY_MESSAGES_DIR: dir,
      }),
    );
    expect(result.code).to.equal(1);
    expect(result.stderr.trim().split('\n')).to.have.lengthOf(1);
    expect(result.stderr).to.include(`${join(dir, 'fr.json')}: mentreply.2: unknown placeholder {{actor3}}`);
  });
});
