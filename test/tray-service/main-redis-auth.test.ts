import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startRedis, type LocalServer } from '../../scripts/lib/local-servers.ts';
import { startTrayProcess, trayToken, type TrayProcess } from '../reliability/support/tray-process.ts';
import { uniqueName, useQueuePrefix } from '../support/suite-resources.ts';
import { useTrayStorage } from '../support/use-tray-storage.ts';
import { waitFor } from '../support/wait-for.ts';
import { openSse, type SseStream } from './live/support/sse-client.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// A password rotation done in the wrong order (Redis first, the service after), or an ACL user
// disabled for a while: Redis refuses the tray's AUTH on every reconnect. The tray used to exit
// on the first refusal, an unhandled rejection of ioredis's own re-SUBSCRIBE, with the password
// in its fatal line. It must keep running, say nothing of the password, and work again once
// Redis takes the password again.
describe('tray-service/main.ts while Redis refuses its password', function () {
  this.timeout(120_000);
  const suite = useTrayStorage();
  const prefix = useQueuePrefix();
  const password = `canary-${uniqueName('pw')}`;
  const dir = mkdtempSync(join(tmpdir(), 'tray-redis-auth-'));
  let redis: LocalServer | undefined;
  let admin: Redis | undefined;
  let tray: TrayProcess | undefined;
  let stream: SseStream | undefined;

  before(async () => {
    redis = await startRedis({ dir: join(dir, 'redis'), password });
    admin = new Redis(redis.url);
  });
  after(async () => {
    stream?.close();
    await tray?.kill();
    admin?.disconnect();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps running, logs no password, and serves again once the password is accepted', async () => {
    tray = await startTrayProcess({
      redisUrl: redis!.url,
      prefix,
      env: { ...suite.env, STREAM_REDIS_PREFIX: uniqueName('live') },
    });
    const base = `http://127.0.0.1:${tray.port}`;
    // An open stream: its instance then holds a subscription of its own on Redis (bull's
    // subscriber connection has one already), which ioredis re-subscribes after a reconnect.
    stream = await openSse(`${base}/notifications/v3/stream`, {
      Authorization: `Bearer ${await trayToken('u-auth')}`,
    });
    const state = async () => ((await (await fetch(`${base}/readyz`)).json()) as { status: string }).status;
    await waitFor(async () => (await state()) === 'ready', 10_000, 'the tray to be ready');

    // Redis takes another password now; the tray's connections are cut and reconnect with the old.
    await admin!.config('SET', 'requirepass', `${password}-next`);
    await admin!.call('CLIENT', 'KILL', 'TYPE', 'normal');
    await admin!.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    // Several reconnects with the backoff's longest wait (2 s) between them.
    await sleep(8_000);
    expect(tray.child.exitCode, tray.output()).to.equal(null);
    expect(tray.child.signalCode, tray.output()).to.equal(null);
    // Degraded, not out of the balancer: history and counts come from storage.
    expect(await state()).to.equal('degraded');
    expect(tray.output()).to.include('WRONGPASS');

    await admin!.config('SET', 'requirepass', password);
    await waitFor(async () => (await state()) === 'ready', 15_000, 'the tray to be ready again');
    expect(tray.child.exitCode, tray.output()).to.equal(null);
    expect(tray.output()).not.to.include(password);
  });
});
