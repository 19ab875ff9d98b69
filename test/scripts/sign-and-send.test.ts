import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, runScript } from '../support/run-script.ts';

// Its deliveries to a real receiver: test/receiver/main.test.ts and test/scripts/dev-stack.test.ts.
describe('scripts/sign-and-send.ts', () => {
  it('without --secret, WEBHOOK_SECRET or secrets from npm start, exits 2 naming WEBHOOK_SECRET and sends nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sign-and-send-'));
    try {
      writeFileSync(join(dir, 'event.json'), '{}');
      const result = await runScript(
        'scripts/sign-and-send.ts',
        [join(dir, 'event.json'), '--url', 'http://127.0.0.1:9/webhooks'],
        cleanEnv({ STACK_DATA_DIR: dir }),
      );
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include('WEBHOOK_SECRET: not set, and there are no development secrets');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
