import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const exitOnUncaught = fileURLToPath(new URL('../../../shared/process/exit-on-uncaught.ts', import.meta.url));
const createLogger = fileURLToPath(new URL('../../../shared/logging/create-logger.ts', import.meta.url));

/** What a process that installed exitOnUncaught printed, and its exit code, after `failure` runs. */
function afterFailure(failure: string): { lines: Record<string, unknown>[]; status: number | null } {
  const script = `
    import { exitOnUncaught } from ${JSON.stringify(exitOnUncaught)};
    import { createLogger } from ${JSON.stringify(createLogger)};
    exitOnUncaught(createLogger({ name: 'test', level: 'info' }));
    ${failure}`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  const lines = run.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { lines, status: run.status };
}

describe('exitOnUncaught', function () {
  this.timeout(20_000);

  // The err serializer takes a URL's credentials out of the error's message; the line's own text
  // repeated the message as it was.
  for (const [what, failure] of [
    ['an unhandled rejection', `Promise.reject(new Error('connect redis://:hunter2@db:6379 failed'));`],
    [
      'an uncaught exception',
      `setTimeout(() => { throw new Error('connect redis://:hunter2@db:6379 failed'); });`,
    ],
  ] as const)
    it(`ends the process after ${what} with one fatal line that names no URL's password`, () => {
      const { lines, status } = afterFailure(failure);
      expect(status).to.equal(1);
      expect(lines).to.have.length(1);
      expect(lines[0]).to.include({ level: 60 });
      expect(String(lines[0]?.msg)).to.match(/connect redis:\/\/.*db:6379 failed; exiting$/);
      expect(JSON.stringify(lines)).to.not.include('hunter2');
    });
});

// A thrown value that is no Error (a string, null) made the handler itself throw reading its
// message: Node's bare stack, exit code 7, and no fatal line.
describe('exitOnUncaught, for a thrown value that is no Error', function () {
  this.timeout(20_000);
  for (const [value, shown] of [
    [`'plain text'`, 'plain text'],
    ['null', 'null'],
    ['undefined', 'undefined'],
    ['42', '42'],
  ])
    it(`ends the process after throw ${value} with one fatal line and exit 1`, () => {
      const { lines, status } = afterFailure(`setTimeout(() => { throw ${value}; });`);
      expect(status).to.equal(1);
      expect(lines).to.have.length(1);
      expect(String(lines[0]?.msg)).to.equal(`uncaught exception: ${shown}; exiting`);
    });
});
