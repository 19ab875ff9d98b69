import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../scripts/lib/local-servers.ts';
import { cleanEnv, startScript } from '../support/run-script.ts';

describe('npm start (scripts/dev-stack.ts)', function () {
  this.timeout(90_000);
  let dataDir: string;
  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'stack-test-'));
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('starts its own servers and both services, reports ready, and stops everything on Ctrl-C', async () => {
    const [receiverPort, trayPort] = [await freePort(), await freePort()];
    const { child, output } = await startScript(
      'scripts/dev-stack.ts',
      cleanEnv({ STACK_DATA_DIR: dataDir, RECEIVER_PORT: String(receiverPort), TRAY_PORT: String(trayPort) }),
      /ready\. Press Ctrl-C/,
    );
    const receiver = await fetch(`http://127.0.0.1:${receiverPort}/healthz`);
    const tray = await fetch(`http://127.0.0.1:${trayPort}/healthz`);
    expect(receiver.status).to.equal(200);
    expect(tray.status).to.equal(200);
    expect(await tray.json()).to.deep.equal({ status: 'ok' });
    expect(output()).to.match(new RegExp(`receiver http://localhost:${receiverPort}`));
    // A PostgreSQL cluster under the stack's data directory, and the tray on its PostgreSQL adapter
    // (no FerretDB: the stack runs the default storage).
    expect(existsSync(join(dataDir, 'postgres', 'data', 'PG_VERSION'))).to.equal(true);
    const ready = await fetch(`http://127.0.0.1:${trayPort}/readyz`);
    expect(ready.status).to.equal(200);
    expect(((await ready.json()) as { checks: Record<string, unknown> }).checks.storage).to.deep.equal({
      ok: true,
      detail: { engine: 'postgres' },
    });
    expect(output()).to.match(/\[stack\] postgres postgres:\/\/postgres@127\.0\.0\.1:\d+\/tray/);
    expect(output()).not.to.include('ferretdb');
    // The quick start's demo page is on in the development stack (off by default elsewhere).
    const demo = await fetch(`http://127.0.0.1:${trayPort}/demo`);
    expect(demo.status).to.equal(200);
    expect(await demo.text()).to.include('<script src="/demo/demo.js"');
    expect(output()).to.include(`demo     http://localhost:${trayPort}/demo`);

    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    expect(await exited).to.equal(0);
    await expect(fetch(`http://127.0.0.1:${receiverPort}/healthz`)).to.be.rejected;
    await expect(fetch(`http://127.0.0.1:${trayPort}/healthz`)).to.be.rejected;
    expect(output()).to.include('[stack] stopped');
  });
});
