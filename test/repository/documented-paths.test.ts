import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { backticked, proseLines } from '../support/markdown.ts';
import { readRepositoryFile, repositoryFiles } from '../support/repository-files.ts';
import { repoRoot } from '../support/run-script.ts';

/**
 * Every repository path the documentation writes in backticks (`receiver/...`, `tray-service/...`,
 * `shared/...`, `scripts/...`, `test/...`, `client/...`, `examples/...`, `docs/...`) names a file
 * or folder that exists, so a renamed or deleted file cannot stay described. Patterns (`*`,
 * `<name>`, `...`) are skipped; a `:line` or `#anchor` after a path is left off.
 */

const documents = [
  'README.md',
  'RELIABILITY.md',
  ...repositoryFiles('docs').filter((file) => file.endsWith('.md')),
];

const PATH = /^(?:receiver|tray-service|shared|scripts|test|client|examples|docs)\/\S*$/;

/** Folders the build or a run makes, which git ignores (`client/dist/`): named, yet absent from a clone. */
const generated = readRepositoryFile('.gitignore')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => PATH.test(line) && !/[*?[]/.test(line));

/** The repository paths among the words of one backticked span, as written and as a path. */
function pathsIn(code: string): { written: string; path: string }[] {
  return code
    .split(/[\s,()]+/)
    .filter((word) => PATH.test(word) && !/[*<>{}]|\.\.\.|…/.test(word))
    .map((word) => ({ written: word, path: word.replace(/[:#].*$/, '').replace(/[.,;]+$/, '') }));
}

const exists = (path: string) =>
  existsSync(join(repoRoot, path)) ||
  generated.some((folder) => `${path}/`.startsWith(folder.endsWith('/') ? folder : `${folder}/`));

describe('repository paths written in the documentation exist', () => {
  it('every backticked path in the README, RELIABILITY.md and docs/ names an existing file or folder', () => {
    const missing: string[] = [];
    let checked = 0;
    for (const file of documents)
      for (const { line, number } of proseLines(readRepositoryFile(file)))
        for (const code of backticked(line))
          for (const { written, path } of pathsIn(code)) {
            checked += 1;
            if (!exists(path)) missing.push(`${file}:${number}: \`${written}\`: no such file or folder`);
          }
    expect(checked, 'paths checked').to.be.greaterThan(100);
    expect(missing).to.deep.equal([]);
  });

  it('reads paths out of code spans as written', () => {
    expect(pathsIn('scripts/lib/cli.ts:42')).to.deep.equal([
      { written: 'scripts/lib/cli.ts:42', path: 'scripts/lib/cli.ts' },
    ]);
    expect(pathsIn('npx mocha test/receiver/a.test.ts, test/b/')).to.deep.equal([
      { written: 'test/receiver/a.test.ts', path: 'test/receiver/a.test.ts' },
      { written: 'test/b/', path: 'test/b/' },
    ]);
    expect(pathsIn('docs/images/console-*.png')).to.deep.equal([]);
    expect(exists('client/dist/index.js'), 'a build output git ignores').to.equal(true);
    expect(exists('tray-service/no-such-file.ts')).to.equal(false);
  });
});
