import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { startTestStack, stopTestStack } from './test-stack.ts';

chai.use(chaiAsPromised);

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    await startTestStack();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await stopTestStack();
  },
};
