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

  // An orchestrator's SIGTERM after the process began stopping for a failure of its own was taken
  // for an operator's second signal, and cut the drain.
  it('on a signal while a failure’s shutdown runs, lets it finish and exits 1', async () => {
    expect(await run('stop-then-signal')).to.deep.equal({ code: 1, messages: ['shutting down', 'stopped'] });
  });

  // One Ctrl-C under `npm run` reaches the process twice within milliseconds (the terminal's and
  // npm's own): it exited at once, with no drain.
  it('takes two signals a few milliseconds apart for one', async () => {
    expect(await run('ctrl-c-twice-at-once')).to.deep.equal({
      code: 0,
      messages: ['shutting down', 'stopped'],
    });
  });

  it('exits at once on a second signal later on', async () => {
    expect(await run('ctrl-c-again')).to.deep.equal({
      code: 1,
      messages: ['shutting down', 'second signal: exiting now'],
    });
  });

  // With nothing else keeping the process alive, a shutdown that never settled let it exit 0,
  // before its deadline, with neither "stopped" nor a word of the deadline.
  it('exits 1 at its deadline when the shutdown never settles', async () => {
    expect(await run('hang')).to.deep.equal({
      code: 1,
      messages: [
        'shutting down',
        'shutdown did not finish in time (a dependency does not answer): exiting now',
      ],
    });
  });
});
