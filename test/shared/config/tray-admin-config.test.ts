import { expect } from 'chai';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';
import { cleanEnv, runScript } from '../../support/run-script.ts';

describe('admin and moderation configuration', () => {
  describe('with nothing set', () => {
    it('has exact matching and no delivery', () => {
      const config = loadTrayConfig({});
      expect(config.MODERATION_WEBHOOK_URL).to.equal(undefined);
      expect(config).to.include({
        ADMIN_LIST_DEFAULT_LIMIT: 50,
        ADMIN_LIST_MAX_LIMIT: 500,
        ADMIN_EXPORT_MAX_ROWS: 1_000_000,
        ADMIN_EXPORTS_MAX: 2,
        ADMIN_TAILS_PER_ADMIN: 10,
        REPLAY_MAX_RUNNING: 2,
        MODERATION_MATCH: 'exact',
        MODERATION_WEBHOOK_ATTEMPTS: 10,
      });
    });
  });

  const bad: [Record<string, string>, string][] = [
    [
      { MODERATION_MATCH: 'fuzzy' },
      'MODERATION_MATCH: expected "exact" (whole words) or "contains" (anywhere in text)',
    ],
    [{ MODERATION_WEBHOOK_URL: 'ftp://x' }, 'MODERATION_WEBHOOK_URL: expected an https:// URL'],
    [{ ADMIN_LIST_MAX_LIMIT: '0' }, 'ADMIN_LIST_MAX_LIMIT: expected a whole number from 1 to 10000'],
    [{ ADMIN_EXPORT_MAX_ROWS: 'all' }, 'ADMIN_EXPORT_MAX_ROWS: expected a whole number from 1 to 100000000'],
    [{ ADMIN_EXPORTS_MAX: '0' }, 'ADMIN_EXPORTS_MAX: expected a whole number from 1 to 100'],
    [{ ADMIN_TAILS_PER_ADMIN: '-1' }, 'ADMIN_TAILS_PER_ADMIN: expected a whole number from 1 to 1000'],
    [{ REPLAY_MAX_RUNNING: '1.5' }, 'REPLAY_MAX_RUNNING: expected a whole number from 1 to 100'],
    // Lowered to the maximum in silence before: not what was asked for.
    [
      { ADMIN_LIST_DEFAULT_LIMIT: '200', ADMIN_LIST_MAX_LIMIT: '100' },
      'ADMIN_LIST_DEFAULT_LIMIT: must be at most ADMIN_LIST_MAX_LIMIT (100)',
    ],
  ];
  for (const [env, message] of bad) {
    describe(`with ${Object.entries(env)[0]!.join('=')}`, () => {
      it('fails naming the variable', () => {
        expect(() => loadTrayConfig(env)).to.throw(message);
      });
    });
  }

  describe('tray-service/main.ts with MODERATION_WORDS_FILE naming a missing file', () => {
    it('stops start-up with one line naming the variable', async () => {
      const result = await runScript(
        'tray-service/main.ts',
        [],
        // A valid key and storage: start-up checks those before it reads any file (nothing connects).
        cleanEnv({
          JWT_SECRET: 'k'.repeat(32),
          DATABASE_URL: 'postgres://127.0.0.1:1/none',
          MODERATION_WORDS_FILE: '/nonexistent/words.txt',
        }),
      );
      expect(result.code).to.equal(1);
      expect(result.stderr).to.equal(
        'Invalid configuration: MODERATION_WORDS_FILE: cannot read /nonexistent/words.txt (ENOENT)\n',
      );
    });
  });
});
