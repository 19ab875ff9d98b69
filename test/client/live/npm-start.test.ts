import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../scripts/lib/local-servers.ts';
import { cleanEnv, runCommand, startCommand } from '../../support/run-script.ts';
import { waitFor } from '../../support/wait-for.ts';

/** The tests of test/client/live/mocharc.json's files: fewer passing means some did not run. */
const LIVE_TESTS = 31;

// What a user does: `npm start` (the real command, its prestart included, on free ports and a data
// directory of its own), `npm run test:client:live` against it, then Ctrl-C. A stack that cannot
// start, or a live suite that cannot reach it, fails here; nothing is skipped.
describe('the client suite against npm start’s services (npm run test:client:live)', function () {
  this.timeout(120_000);
  let dataDir: string;
  let ports: { receiver: number; tray: number; admin: number };
  let stack: { child: ChildProcess; output: () => string } | undefined;

  before(async function () {
    this.timeout(120_000);
    dataDir = mkdtempSync(join(tmpdir(), 'client-live-'));
    // A port found free can be taken by another suite running beside this one before the stack
    // binds it (npm start then refuses to start, naming it): started again on other ports.
    for (let attempt = 1; ; attempt += 1) {
      ports = { receiver: await freePort(), tray: await freePort(), admin: await freePort() };
      try {
        stack = await startCommand(
          'npm',
          ['start'],
          cleanEnv({
            STACK_DATA_DIR: dataDir,
            RECEIVER_PORT: String(ports.receiver),
            TRAY_PORT: String(ports.tray),
            ADMIN_PORT: String(ports.admin),
          }),
          /ready\. Press Ctrl-C/,
          110_000,
          // A process group of its own, as a terminal gives a command: Ctrl-C below signals all of it.
          { detached: true },
        );
        return;
      } catch (error) {
        if (attempt >= 3 || !/is in use by another program/.test((error as Error).message)) throw error;
      }
    }
  });

  after(async function () {
    this.timeout(40_000);
    const started = stack;
    if (started) {
      process.kill(-started.child.pid!, 'SIGINT');
      // npm may exit before the stack it started: the stack's own last line says it is down.
      await waitFor(() => started.output().includes('[stack] stopped'), 30_000, 'npm start to stop');
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('passes every test of the client’s live suite, none skipped', async () => {
    const run = await runCommand(
      'npm',
      ['run', 'test:client:live'],
      cleanEnv({
        // The secrets npm start made for this data directory, as mint-token reads them.
        STACK_DATA_DIR: dataDir,
        TRAY_URL: `http://127.0.0.1:${ports.tray}`,
        RECEIVER_URL: `http://127.0.0.1:${ports.receiver}`,
      }),
      110_000,
    );
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.code, output).to.equal(0);
    expect(Number(/(\d+) passing/.exec(run.stdout)?.[1]), output).to.be.at.least(LIVE_TESTS);
    expect(run.stdout, output).to.not.match(/\d+ (pending|failing)/);
  });
});
