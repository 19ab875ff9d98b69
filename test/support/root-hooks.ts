import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { commandGuard, describeViolations, installCommandGuard } from './command-guard.ts';
import { useFastCheckSeed } from './fast-check-seed.ts';
import { startTestStack, stopTestStack } from './test-stack.ts';

chai.use(chaiAsPromised);
installCommandGuard();
useFastCheckSeed();

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    await startTestStack();
  },
  beforeEach(this: Mocha.Context) {
    commandGuard.current = this.currentTest?.fullTitle() ?? commandGuard.current;
  },
  afterEach() {
    commandGuard.current = 'outside a test (a before/after hook)';
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await stopTestStack();
    // Last, so the servers are stopped whatever the verdict.
    const { violations, strict, limits } = commandGuard;
    if (violations.length === 0) return;
    const message = `command guard: ${violations.length} command(s) that hang FerretDB (limit: ${limits.maxSingleUpdates} single-document updates per command):\n${describeViolations(violations)}`;
    if (strict)
      throw new Error(`${message}\n(STRICT_COMMAND_GUARD=off reports these without failing the run)`);
    process.stderr.write(`${message}\n`);
  },
};
