import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeServer, listen } from '../../shared/http/listen.ts';
import { startTrayProcess, trayJwtSecret, type TrayProcess } from '../reliability/support/tray-process.ts';
import { startTestReceiver, type TestReceiver } from '../receiver/support/use-receiver.ts';
import { testSecret } from '../receiver/support/signed-request.ts';
import { freePort } from '../../scripts/lib/local-servers.ts';
import { cleanEnv, runScript } from '../support/run-script.ts';
import { useQueuePrefix } from '../support/suite-resources.ts';
import { testStack } from '../support/test-stack.ts';
import { useTrayStorage } from '../support/use-tray-storage.ts';

// The run itself needs `npm start`; BENCHMARKS.md records one. Here: the operator-facing edges.
describe('scripts/try-stack.ts', () => {
  it('--help prints the usage and exits 0', async () => {
    const result = await runScript('scripts/try-stack.ts', ['--help'], cleanEnv());
    expect(result.code).to.equal(0);
    expect(result.stdout).to.match(/^Usage: npm run try-stack/);
  });

  it('a single member exits 2: no one but the author would be told of the last post', async () => {
    const result = await runScript('scripts/try-stack.ts', ['--members', '1'], cleanEnv());
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include('--members: expected >= 2');
  });

  it('a bad count exits 2 naming the option', async () => {
    const result = await runScript('scripts/try-stack.ts', ['--members', 'many'], cleanEnv());
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include('--members: expected a whole number >= 1');
  });

  it('a --walk other than on, off or only exits 2 naming the option', async () => {
    const result = await runScript('scripts/try-stack.ts', ['--walk', 'yes'], cleanEnv());
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include('--walk: expected on, off or only, got "yes"');
  });

  it('too few dense records for the walk exits 2 naming --dense', async () => {
    const result = await runScript('scripts/try-stack.ts', ['--dense', '100'], cleanEnv());
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include('--dense: the walk reads 40 of them and snoozes 100');
  });

  it('without WEBHOOK_SECRET and no secrets from npm start, exits 2 naming the variable', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'try-stack-'));
    try {
      const result = await runScript('scripts/try-stack.ts', [], cleanEnv({ STACK_DATA_DIR: dataDir }));
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include('WEBHOOK_SECRET: not set, and there are no development secrets');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  // Without a stack: the ports npm start would use (RECEIVER_PORT, ...), with nothing listening.
  describe('with no stack listening', () => {
    const noStack = async () => {
      const [receiver, tray, admin] = [await freePort(), await freePort(), await freePort()];
      return {
        receiver,
        env: cleanEnv({
          RECEIVER_PORT: String(receiver),
          TRAY_PORT: String(tray),
          ADMIN_PORT: String(admin),
          WEBHOOK_SECRET: testSecret,
          JWT_SECRET: trayJwtSecret,
          ADMIN_TOKEN: 'a'.repeat(43),
        }),
      };
    };

    for (const args of [[], ['--walk', 'only']]) {
      it(`${args.join(' ') || 'the load'}: one line naming the receiver's URL and why, from RECEIVER_PORT`, async () => {
        const { receiver, env } = await noStack();
        const result = await runScript('scripts/try-stack.ts', args, env);
        expect(result.code).to.equal(1);
        expect(result.stdout).to.equal('');
        expect(result.stderr).to.equal(
          `error: cannot reach the receiver at http://127.0.0.1:${receiver}/webhooks (ECONNREFUSED): is npm start running? --receiver, or RECEIVER_PORT and HOST, say where it is\n`,
        );
      });
    }
  });

  // A small run against a real receiver and a real tray process (worker and API) on this suite's
  // queue and storage, as `npm start` would run them.
  describe('against a running stack', function () {
    this.timeout(60_000);
    const storage = useTrayStorage();
    const prefix = useQueuePrefix();
    let receiver: TestReceiver;
    let receiverServer: Server;
    let tray: TrayProcess;
    let receiverUrl: string;
    before(async () => {
      receiver = await startTestReceiver(prefix);
      receiverServer = await listen(receiver.app, { port: 0 });
      receiverUrl = `http://127.0.0.1:${(receiverServer.address() as AddressInfo).port}/webhooks`;
      tray = await startTrayProcess({ redisUrl: testStack().redisUrl, prefix, env: storage.env });
    });
    after(async () => {
      await tray?.kill();
      if (receiverServer) await closeServer(receiverServer, 1_000);
      await receiver?.close();
      rmSync(receiver.spoolDir, { recursive: true, force: true });
    });
    const run = (members: string, secrets: { webhook: string; jwt: string }, timeoutMs = 30_000) =>
      runScript(
        'scripts/try-stack.ts',
        [
          ...['--members', members, '--feed-posts', '1', '--comments', '1', '--dense', '1'],
          ...['--samples', '1', '--walk', 'off', '--receiver', receiverUrl],
          ...['--tray', `http://127.0.0.1:${tray.port}`, '--secret', secrets.webhook],
          ...['--jwt-secret', secrets.jwt],
        ],
        cleanEnv(),
        timeoutMs,
      );

    // 20 divides the 120 of the last post's author, u((100 + 19) % members): the last member, who
    // was also the reader, and an author is never told of their own post.
    it('with --members 20, reads the last post as a member who did not write it', async () => {
      const result = await run('20', { webhook: testSecret, jwt: trayJwtSecret });
      expect(result.stderr).to.equal('');
      expect(result.code).to.equal(0);
      expect(result.stdout).to.match(/the last community post showed in try-\w+-u18's v3 history/);
      // As many calls as were made: one member, one of each.
      expect(result.stdout).to.include('(1 calls each;');
    });

    it('a wrong --secret: stops at once with one line naming the receiver and its status', async () => {
      const started = Date.now();
      const result = await run('20', { webhook: 'not-the-secret', jwt: trayJwtSecret });
      expect(result.code).to.equal(1);
      expect(result.stderr).to.match(/^error: the receiver at \S+ refused the events: 401 .*--secret.*\n$/);
      expect(Date.now() - started).to.be.below(10_000);
    });

    it('a wrong --jwt-secret: stops at once with one line naming the tray service and its status', async () => {
      const started = Date.now();
      const result = await run('20', { webhook: testSecret, jwt: 'not-the-jwt-secret-of-this-tray-service' });
      expect(result.code).to.equal(1);
      expect(result.stderr).to.match(
        /^error: the tray service at \S+ refused the token: 401 .*--jwt-secret.*\n$/,
      );
      // Before the load: not after sending every event for nothing.
      expect(result.stdout).not.to.include('sent ');
      expect(Date.now() - started).to.be.below(10_000);
    });
  });
});
