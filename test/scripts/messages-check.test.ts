import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, runScript } from '../support/run-script.ts';

describe('npm run messages:check (scripts/messages-check.ts)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'messages-check-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe('its command line', () => {
    it('--help prints the usage and exits 0, checking nothing', async () => {
      const result = await runScript('scripts/messages-check.ts', ['--help'], cleanEnv());
      expect(result.code).to.equal(0);
      expect(result.stdout).to.match(/^Usage: npm run messages:check/);
      expect(result.stdout).not.to.include('messages:check: ok');
    });

    it('an unknown option or an argument exits 2 with one line and the usage, checking nothing', async () => {
      for (const [args, says] of [
        [['--dir', 'x'], "Unknown option '--dir'"],
        [['fr.json'], "Unexpected argument 'fr.json'"],
      ] as const) {
        const result = await runScript('scripts/messages-check.ts', [...args], cleanEnv());
        expect(result.code, args.join(' ')).to.equal(2);
        expect(result.stderr, args.join(' ')).to.include(says).and.include('Usage: npm run messages:check');
        expect(result.stdout, args.join(' ')).to.equal('');
      }
    });
  });

  describe('on the shipped catalogues', () => {
    it('exits 0 and lists the locales', async () => {
      const result = await runScript('scripts/messages-check.ts', [], cleanEnv());
      expect(result.stderr).to.equal('');
      expect(result.code).to.equal(0);
      expect(result.stdout).to.include('ok, 8 locales (de, en, es, fr, ja, pt-BR, ru, th), 31 messages');
    });
  });

  describe('with TRAY_MESSAGES_DIR holding broken catalogues', () => {
    it('exits 1 with one line per problem, each naming file and key', async () => {
      writeFileSync(
        join(dir, 'de.json'),
        JSON.stringify({
          'post.community.1': '{{actor1}} hat in {{comunity}} gepostet',
          'mentreply.1': '{{actor1}} hat {{#if x}}geantwortet',
        }),
      );
      writeFileSync(join(dir, 'nl.json'), JSON.stringify({ 'mentreply.1': '{{actor1}} heeft gereageerd' }));
      const result = await runScript('scripts/messages-check.ts', [], cleanEnv({ TRAY_MESSAGES_DIR: dir }));
      expect(result.code).to.equal(1);
      const lines = result.stderr.trim().split('\n');
      const file = join(dir, 'de.json');
      expect(lines.slice(0, 2)).to.deep.equal([
        `${file}: post.community.1: unknown placeholder {{comunity}}; this message can use {{actor1}}, {{community}}`,
        `${file}: post.community.1: does not use {{community}}, which this message must show`,
      ]);
      expect(lines[2]).to.satisfy((line: string) =>
        line.startsWith(`${file}: mentreply.1: Handlebars syntax error: Parse error on line 1:`),
      );
      expect(lines).to.have.lengthOf(4);
      expect(lines.at(-1)).to.equal('messages:check: 3 problem(s)');
      // nl has one message; the rest fall back to en, which is a note, not a problem.
      expect(result.stdout).to.include('note: nl: post.community.1: missing, shows the en message');
    });
  });

  describe('with an invalid DEFAULT_LOCALE', () => {
    // As every operator script: 2 is a bad argument or variable, 1 problems in the catalogues.
    it('exits 2 naming the variable', async () => {
      const result = await runScript(
        'scripts/messages-check.ts',
        [],
        cleanEnv({ DEFAULT_LOCALE: 'no locale' }),
      );
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include('DEFAULT_LOCALE: expected a BCP 47 locale');
    });
  });
});
