/**
 * Lets @stryker-mutator/mocha-runner 10 load Mocha 12. Mocha 12 renamed the cli internals the
 * runner requires without an extension (`lib/cli/run-helpers`, `lib/cli/options`, ...) to `.cjs`,
 * which Node's require does not try; registering `.cjs` beside `.js` makes those requires resolve.
 * Upstream fix: https://github.com/stryker-mutator/stryker-js/pull/6205 (drop this file once a
 * release carries it). Loaded with `--import` into Stryker's test runner processes and first
 * thing by scripts/mutation-test.ts.
 */
import Module from 'node:module';

// `_extensions` is Node's own table of require handlers; its `.js` handler already treats a
// `.cjs` file as CommonJS, so the same handler serves both.
const extensions = (Module as unknown as { _extensions: Record<string, unknown> })._extensions;
extensions['.cjs'] ??= extensions['.js'];
