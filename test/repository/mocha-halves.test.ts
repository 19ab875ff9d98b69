import { expect } from 'chai';
import { readRepositoryFile } from '../support/repository-files.ts';

/**
 * `npm run test:mocha` runs the suite as two mocha processes at once (docs/testing.md): one takes
 * the folders `test:mocha:storage` names, the other everything else. The other's `--ignore`s must
 * be exactly those folders (and the reliability suite's), or a folder would run twice or never.
 */
describe('the two halves of npm run test:mocha', () => {
  const { scripts } = JSON.parse(readRepositoryFile('package.json')) as { scripts: Record<string, string> };
  const quoted = (command: string) => [...command.matchAll(/'([^']+)'/g)].map((match) => match[1] ?? '');

  it('runs both halves at once', () => {
    expect(scripts['test:mocha']).to.match(/^run-p .*test:mocha:storage test:mocha:rest$/);
  });

  it('leaves out of the rest exactly the folders of the storage half, and the reliability suite', () => {
    const storage = quoted(scripts['test:mocha:storage'] ?? '');
    const rest = scripts['test:mocha:rest'] ?? '';
    const [everything, ...ignored] = quoted(rest);
    expect(everything).to.equal('test/**/*.test.ts');
    expect(storage.length).to.be.above(0);
    const folders = storage.map((glob) => {
      expect(glob, 'a storage-half glob').to.match(/^test\/.+\/\*\*\/\*\.test\.ts$/);
      return glob.replace(/\*\*\/\*\.test\.ts$/, '**');
    });
    expect([...ignored].sort()).to.deep.equal(['test/reliability/**', ...folders].sort());
    expect(rest.split('--ignore').length - 1, '--ignore flags').to.equal(ignored.length);
  });
});
