/**
 * Mutation testing, one pure core at a time (`npm run test:mutation [module ...]`): StrykerJS with
 * the settings of stryker.config.mjs, each module mutating only its own source and running only
 * its own unit tests. Prints each module's score and every surviving mutant; exits 1 when a
 * module kills fewer than TARGET of its mutants. CPU heavy: one test runner process, modules in
 * sequence.
 */
import './lib/stryker-mocha12-shim.ts';
import { Stryker } from '@stryker-mutator/core';
import type { MutantResult } from '@stryker-mutator/api/core';
import { mutationModules } from './lib/mutation-modules.ts';

/** The share of mutants each module's tests must kill. */
const TARGET = 0.9;

const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !(name in mutationModules));
if (unknown.length > 0) {
  console.error(
    `unknown module ${unknown.join(', ')}; expected one of ${Object.keys(mutationModules).join(', ')}`,
  );
  process.exit(2);
}

interface Score {
  module: string;
  killed: number;
  survived: number;
  /** Killed, timed out (an infinite loop counts as caught) and run-time errors. */
  detected: number;
  total: number;
  score: number;
  survivors: MutantResult[];
}

function score(module: string, results: readonly MutantResult[]): Score {
  const counted = results.filter((r) => r.status !== 'Ignored' && r.status !== 'CompileError');
  const detected = counted.filter((r) => ['Killed', 'Timeout', 'RuntimeError'].includes(r.status)).length;
  const survivors = counted.filter((r) => r.status === 'Survived' || r.status === 'NoCoverage');
  return {
    module,
    killed: counted.filter((r) => r.status === 'Killed').length,
    survived: survivors.length,
    detected,
    total: counted.length,
    score: counted.length === 0 ? 1 : detected / counted.length,
    survivors,
  };
}

const scores: Score[] = [];
for (const [module, { mutate, spec }] of Object.entries(mutationModules)) {
  if (requested.length > 0 && !requested.includes(module)) continue;
  const started = Date.now();
  const results = await new Stryker({
    configFile: 'stryker.config.mjs',
    mutate,
    mochaOptions: {
      'no-config': true,
      'no-package': true,
      extension: ['ts'],
      require: ['test/support/pure-hooks.ts'],
      spec,
    },
    reporters: ['progress', 'json'],
    jsonReporter: { fileName: `reports/mutation/${module}.json` },
  }).runMutationTest();
  const result = score(module, results);
  scores.push(result);
  console.log(
    `\n${module}: ${result.detected}/${result.total} detected (${(result.score * 100).toFixed(1)}%) in ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  for (const mutant of result.survivors) {
    const { line, column } = mutant.location.start;
    console.log(
      `  ${mutant.status} ${mutant.fileName}:${line}:${column} ${mutant.mutatorName}: ${JSON.stringify(mutant.replacement ?? '')}`,
    );
  }
}

console.log('\nmodule | mutants | detected | survived | score');
for (const s of scores) {
  console.log(`${s.module} | ${s.total} | ${s.detected} | ${s.survived} | ${(s.score * 100).toFixed(1)}%`);
}
process.exit(scores.every((s) => s.score >= TARGET) ? 0 : 1);
