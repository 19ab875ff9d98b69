import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { runningStackFromEnv, targetRunningStack } from '../support/client-target.ts';

// `npm run test:client:live`: the client's suite against a running stack (`npm start`, or TRAY_URL
// and RECEIVER_URL with JWT_SECRET and WEBHOOK_SECRET). No test server of the suite's own is started.
chai.use(chaiAsPromised);
const stack = runningStackFromEnv();
targetRunningStack(stack);

/** Fails the run, naming the address and what to do, when a service of the stack does not answer. */
async function expectHealthy(name: string, url: string, variable: string): Promise<void> {
  const answer = await fetch(`${url}/healthz`).catch((error: unknown) => error as Error);
  if (answer instanceof Error || !answer.ok) {
    const why = answer instanceof Error ? answer.message : `HTTP ${answer.status}`;
    throw new Error(
      `no ${name} answers at ${url}/healthz (${why}): run \`npm start\` first, or set ${variable} to where it runs`,
    );
  }
}

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(10_000);
    await expectHealthy('tray service', stack.trayUrl, 'TRAY_URL');
    await expectHealthy('receiver', stack.receiverUrl, 'RECEIVER_URL');
  },
};
