import { expect } from 'chai';
import fc from 'fast-check';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../../shared/errors/config-error.ts';
import { parseBlockedWords } from '../../../tray-service/domain/blocked-words.ts';
import { loadBlockedWords } from '../../../tray-service/moderation/load-blocked-words.ts';
import { startTrayProcess } from '../../reliability/support/tray-process.ts';
import { cleanEnv, runScript } from '../../support/run-script.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { testStack } from '../../support/test-stack.ts';

const configError = (load: () => unknown): ConfigError => {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
};

describe('loadBlockedWords', () => {
  it('accepts any non-empty comma-separated text as words, never throwing (punctuation, scripts, emoji)', () => {
    const entry = fc
      .string({ unit: 'binary', minLength: 1, maxLength: 12 })
      .filter((text) => !text.includes(',') && parseBlockedWords([text], 'exact').length > 0);
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 6 }), (entries) => {
        loadBlockedWords({ words: entries.join(','), mode: 'exact' });
      }),
      { numRuns: 300 },
    );
  });

  it('refuses an empty entry in MODERATION_WORDS with one line naming the variable', () => {
    const error = configError(() => loadBlockedWords({ words: 'spam,,eggs', mode: 'exact' }));
    expect(error.variables).to.deep.equal(['MODERATION_WORDS']);
    expect(error.message).to.match(/^Invalid configuration: MODERATION_WORDS: entry 2 is empty/);
    expect(error.message).to.not.include('\n');
  });

  it('refuses an entry that is only a matching-mode marker (`* *`)', () => {
    const error = configError(() => loadBlockedWords({ words: 'spam,* *', mode: 'exact' }));
    expect(error.variables).to.deep.equal(['MODERATION_WORDS']);
  });

  it('takes an entry of MODERATION_WORDS starting with # as a word: only the file has comments', () => {
    expect(loadBlockedWords({ words: 'spam,#nsfw', mode: 'exact' })).to.deep.equal([
      { word: 'spam', mode: 'exact' },
      { word: '#nsfw', mode: 'exact' },
    ]);
  });

  for (const marker of ['*', '**', '=', ' = ']) {
    it(`refuses an entry of MODERATION_WORDS that is only the marker ${JSON.stringify(marker)}`, () => {
      const error = configError(() => loadBlockedWords({ words: `spam,${marker}`, mode: 'exact' }));
      expect(error.variables).to.deep.equal(['MODERATION_WORDS']);
      expect(error.message).to.match(/^Invalid configuration: MODERATION_WORDS: entry 2 has no word/);
    });
  }

  it('refuses a line of MODERATION_WORDS_FILE that is only a marker, naming file:line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'words-'));
    const file = join(dir, 'words.txt');
    writeFileSync(file, '# words\nspam\n\n**\n');
    const error = configError(() => loadBlockedWords({ file, mode: 'exact' }));
    expect(error.variables).to.deep.equal(['MODERATION_WORDS_FILE']);
    expect(error.message).to.match(
      new RegExp(`^Invalid configuration: MODERATION_WORDS_FILE: ${file}:4: no word`),
    );
  });

  it('refuses an unreadable MODERATION_WORDS_FILE naming the variable', () => {
    const dir = mkdtempSync(join(tmpdir(), 'words-'));
    const error = configError(() => loadBlockedWords({ file: join(dir, 'missing.txt'), mode: 'exact' }));
    expect(error.variables).to.deep.equal(['MODERATION_WORDS_FILE']);
  });

  it('keeps blank lines and # comments of a words file as layout, not errors', () => {
    const dir = mkdtempSync(join(tmpdir(), 'words-'));
    const file = join(dir, 'words.txt');
    writeFileSync(file, '# words\n\nf-word\n\n');
    expect(loadBlockedWords({ file, mode: 'exact' })).to.deep.equal([{ word: 'f-word', mode: 'exact' }]);
  });
});

describe('tray-service start-up with blocked words', function () {
  this.timeout(120_000);
  const suite = useTrayStorage();
  const prefix = useQueuePrefix();

  it('starts with a word containing "-" (MODERATION_WORDS=f-word)', async () => {
    const tray = await startTrayProcess({
      redisUrl: testStack().redisUrl,
      prefix,
      env: { ...suite.env, MODERATION_WORDS: 'f-word,a/b,(x)' },
    });
    try {
      expect(tray.output()).to.not.include('Invalid escape');
    } finally {
      await tray.kill();
    }
  });

  it('stops before connecting on an empty entry, with one line naming MODERATION_WORDS', async () => {
    const result = await runScript(
      'tray-service/main.ts',
      [],
      cleanEnv({
        JWT_SECRET: 'x'.repeat(32),
        MODERATION_WORDS: 'spam,,eggs',
        REDIS_URL: 'redis://127.0.0.1:1',
        DATABASE_URL: 'postgres://127.0.0.1:1/none',
      }),
    );
    expect(result.code).to.equal(1);
    expect(result.stderr.trim().split('\n')).to.have.length(1);
    expect(result.stderr).to.match(/^Invalid configuration: MODERATION_WORDS: /);
  });
});
