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
        cleanEnv({ MODERATION_WORDS_FILE: '/nonexistent/words.txt' }),
      );
      expect(result.code).to.equal(1);
      expect(result.stderr).to.equal(
        'Invalid configuration: MODERATION_WORDS_FILE: cannot read /nonexistent/words.txt (ENOENT)\n',
      );
    });
  });
});
