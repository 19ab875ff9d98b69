import { expect } from 'chai';
import { cleanEnv, runScript } from '../support/run-script.ts';

describe('service entry points', () => {
  for (const [script, variable] of [
    ['receiver/main.ts', 'RECEIVER_PORT'],
    ['tray-service/main.ts', 'TRAY_PORT'],
  ] as const) {
    describe(`${script} with ${variable}=abc`, () => {
      it('stops start-up with a one-line error naming the variable', async () => {
        const result = await runScript(script, [], cleanEnv({ [variable]: 'abc' }));
        expect(result.code).to.equal(1);
        expect(result.stderr.trim().split('\n')).to.have.lengthOf(1);
        expect(result.stderr).to.include(`${variable}: expected a TCP port number`);
      });
    });
  }
});
