// @ts-check
/**
 * Mutation testing of the pure cores (StrykerJS, mocha runner). Each module lists the source it
 * mutates and the fast unit tests that must kill those mutants: no test here starts a server,
 * so a run stays bounded. `npm run test:mutation [module ...]` runs the modules one after another
 * (scripts/mutation-test.ts); `npx stryker run` alone runs them all in one go. The modules
 * are listed in scripts/lib/mutation-modules.ts.
 *
 * TypeScript runs through Node's type stripping, as everywhere in the project: no build step,
 * no checker plugin (`tsc --noEmit` in `npm test` does the type checking).
 */

import { mutationModules } from './scripts/lib/mutation-modules.ts';

const modules = Object.values(mutationModules);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'mocha',
  mutate: modules.flatMap((module) => module.mutate),
  mochaOptions: {
    'no-config': true,
    'no-package': true,
    extension: ['ts'],
    require: ['test/support/pure-hooks.ts'],
    spec: modules.flatMap((module) => module.spec),
  },
  // Mocha 12 with mocha-runner 10: see the shim's comment.
  testRunnerNodeArgs: ['--import', './scripts/lib/stryker-mocha12-shim.ts'],
  checkers: [],
  disableTypeChecks: false,
  coverageAnalysis: 'perTest',
  // The machine is shared: one test runner process, and generous timeouts for a loaded CPU.
  concurrency: 1,
  timeoutMS: 10_000,
  dryRunTimeoutMinutes: 5,
  // Copy only what the pure tests import; node_modules is linked, not copied.
  ignorePatterns: ['.data', '.tools', 'reports', 'coverage', 'BENCHMARKS.md', 'RELIABILITY.md'],
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
