import { expect } from 'chai';
import { resolve } from 'node:path';
import { cleanEnv, runScript } from '../../support/run-script.ts';

const program = resolve(import.meta.dirname, 'fixtures/shutdown-program.ts');
const run = async (mode: string) => {
  const result = await runScript(program, [mode], cleanEnv(), 20_000);
  const messages = result.stdout
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { msg: string }).msg);
  return { code: result.code, messages };
};

describe('onShutdown', () => {
  it('on a signal, runs the shutdown and exits 0', async () => {
    expect(await run('signal')).to.deep.equal({ code: 0, messages: ['shutting down', 'stopped'] });
  });

  it('on a failure of the process’s own, runs the same shutdown and exits 1', async () => {
    expect(await run('stop')).to.deep.equal({ code: 1, messages: ['shutting down', 'stopped'] });
  });

  // A listener failing while a signal's shutdown ran (a SIGTERM during start-up) was a failure the
  // exit code did not tell.
  it('on a failure while a signal’s shutdown runs, lets it finish and exits 1', async () => {
    expect(await run('signal-then-stop')).to.deep.equal({ code: 1, messages: ['shutting down', 'stopped'] });
  });
});
