import { expect } from 'chai';
import { globSync } from 'node:fs';
import { matchesGlob } from 'node:path';
import { readRepositoryFile } from '../support/repository-files.ts';
import { repoRoot } from '../support/run-script.ts';

/**
 * `npm run test:mocha` and `npm run test:reliability` each run their suite as mocha processes at
 * once (docs/testing.md), each process naming its files by globs and `--ignore` globs. Together the
 * parts of a suite must take each of its test files exactly once: a file taken by none would never
 * run, one taken by two would run twice.
 */
const { scripts } = JSON.parse(readRepositoryFile('package.json')) as { scripts: Record<string, string> };

/** The npm scripts `run-p` runs at once for the script `name`. */
function partsOf(name: string): string[] {
  const command = scripts[name] ?? '';
  expect(command, name).to.match(/^run-p --print-label --continue-on-error( [\w:]+)+$/);
  return command.split(' ').filter((word) => word.startsWith(`${name}:`));
}

/** The test files one part's mocha command takes: its globs less its `--ignore` globs. */
function filesOf(part: string): Set<string> {
  const command = scripts[part] ?? '';
  expect(command, part).to.match(/^mocha '/);
  const globs = [...command.matchAll(/(--ignore )?'([^']+)'/g)];
  // Every word of the command is one of its globs, and nothing else (no option changing the set).
  expect(command.replace(/(--ignore )?'[^']+'/g, '').trim(), `${part}'s other words`).to.equal('mocha');
  const included = globs.filter((glob) => glob[1] === undefined).map((glob) => glob[2] ?? '');
  const ignored = globs.filter((glob) => glob[1] !== undefined).map((glob) => glob[2] ?? '');
  const files = included.flatMap((glob) => globSync(glob, { cwd: repoRoot }));
  return new Set(files.filter((file) => !ignored.some((glob) => matchesGlob(file, glob))));
}

for (const [suite, everyFile] of [
  ['test:mocha', (file: string) => !file.startsWith('test/reliability/')],
  ['test:reliability', (file: string) => file.startsWith('test/reliability/')],
] as const) {
  describe(`the parts of npm run ${suite}`, () => {
    it('take every test file of the suite exactly once, and no other', () => {
      const parts = partsOf(suite);
      expect(parts.length, 'parts').to.be.at.least(2);
      const taken = parts.map((part) => ({ part, files: filesOf(part) }));
      for (const { part, files } of taken) expect(files.size, `files of ${part}`).to.be.above(0);
      const wanted = globSync('test/**/*.test.ts', { cwd: repoRoot }).filter(everyFile);
      expect(wanted.length).to.be.above(10);
      const takers = (file: string) => taken.filter(({ files }) => files.has(file)).map(({ part }) => part);
      const wrong = wanted
        .map((file) => ({ file, takers: takers(file) }))
        .filter(({ takers: by }) => by.length !== 1);
      expect(wrong, 'files taken by no part or by several').to.deep.equal([]);
      const strays = taken.flatMap(({ part, files }) =>
        [...files].filter((file) => !everyFile(file)).map((file) => `${part}: ${file}`),
      );
      expect(strays, 'files of another suite').to.deep.equal([]);
    });
  });
}
