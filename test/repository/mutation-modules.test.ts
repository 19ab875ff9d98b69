import { expect } from 'chai';
import { globSync } from 'node:fs';
import { mutationModules } from '../../scripts/lib/mutation-modules.ts';
import { repoRoot } from '../support/run-script.ts';

// A spec pattern naming a test file that had moved matched nothing, and mocha only warns: the
// module's own tests never ran, and its score counted their mutants as survivors.
describe('mutation modules (npm run test:mutation)', () => {
  for (const [name, module] of Object.entries(mutationModules)) {
    it(`${name}: every source and test pattern names at least one file`, () => {
      for (const pattern of [...module.mutate, ...module.spec])
        expect(globSync(pattern, { cwd: repoRoot }), pattern).to.not.be.empty;
    });
  }
});
