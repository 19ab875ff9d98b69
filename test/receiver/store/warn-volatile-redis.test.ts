import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { persistenceProblem, warnVolatileRedis } from '../../../receiver/store/warn-volatile-redis.ts';
import { recordingLogger } from '../../support/recording-logger.ts';
import { useRedisClients } from '../../support/use-redis-clients.ts';
import { cleanEnv, startScript } from '../../support/run-script.ts';

const fix = 'set appendonly yes and appendfsync always';
const settings = (entries: Record<string, string>) => new Map(Object.entries(entries));

describe('persistenceProblem', () => {
  it('accepts appendonly yes with appendfsync always', () => {
    expect(persistenceProblem(settings({ appendonly: 'yes', appendfsync: 'always' }))).to.equal(undefined);
  });
  for (const appendfsync of ['everysec', 'no']) {
    it(`names appendfsync ${appendfsync}, the loss and the fix in one line`, () => {
      const message = persistenceProblem(settings({ appendonly: 'yes', appendfsync }));
      expect(message).to.include(`appendfsync is "${appendfsync}"`).and.to.include(fix);
      expect(message).to.include('lose acknowledged events').and.not.to.include('\n');
    });
  }
  it('names a missing append-only file first, whatever the fsync policy', () => {
    const message = persistenceProblem(settings({ appendonly: 'no', appendfsync: 'always' }));
    expect(message).to.include('appendonly no').and.to.include(fix);
  });
  it('names no-appendfsync-on-rewrite yes, which skips the fsync while Redis saves', () => {
    const message = persistenceProblem(
      settings({ appendonly: 'yes', appendfsync: 'always', 'no-appendfsync-on-rewrite': 'yes' }),
    );
    expect(message).to.include('no-appendfsync-on-rewrite is yes').and.to.include('power loss');
    expect(message).to.include('set no-appendfsync-on-rewrite no').and.not.to.include('\n');
    expect(
      persistenceProblem(
        settings({ appendonly: 'yes', appendfsync: 'always', 'no-appendfsync-on-rewrite': 'no' }),
      ),
    ).to.equal(undefined);
  });
  it('has nothing to say about settings the server does not report', () => {
    expect(persistenceProblem(settings({}))).to.equal(undefined);
  });
});

describe('warnVolatileRedis against a real redis-server', function () {
  this.timeout(30_000);
  let dir: string;
  let volatile: LocalServer;
  let durable: LocalServer;
  const { connect } = useRedisClients();
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'volatile-redis-'));
    [volatile, durable] = await Promise.all([
      startRedis({ dir: join(dir, 'volatile') }),
      startRedis({ dir: join(dir, 'durable'), persistent: true }),
    ]);
  });
  after(async () => {
    await Promise.all([volatile.stop(), durable.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('warns about a server without an append-only file', async () => {
    const { messages, logger } = recordingLogger();
    await warnVolatileRedis(connect(volatile.url), { logger });
    expect(messages).to.have.lengthOf(1);
    expect(messages[0]).to.include('appendonly no').and.to.include(fix);
  });

  it('is silent about a durable server, and warns once it reconnects after a switch to everysec', async () => {
    const { messages, logger } = recordingLogger();
    const admin = connect(durable.url);
    const client = connect(durable.url);
    await warnVolatileRedis(client, { logger });
    expect(messages).to.deep.equal([]);
    await admin.config('SET', 'appendfsync', 'everysec');
    try {
      const reconnected = new Promise((resolve) => client.once('ready', resolve));
      await admin.client('KILL', 'ID', String(await client.client('ID')));
      await reconnected;
      // The check runs on 'ready'; give its CONFIG GET a bounded number of round trips.
      for (let n = 0; n < 100 && messages.length === 0; n += 1) await new Promise((r) => setTimeout(r, 20));
      expect(messages).to.have.lengthOf(1);
      expect(messages[0]).to.include('appendfsync is "everysec"');
    } finally {
      await admin.config('SET', 'appendfsync', 'always');
    }
  });

  it('reads no-appendfsync-on-rewrite from the server too', async () => {
    const admin = connect(durable.url);
    await admin.config('SET', 'no-appendfsync-on-rewrite', 'yes');
    try {
      const { messages, logger } = recordingLogger();
      await warnVolatileRedis(connect(durable.url), { logger });
      expect(messages).to.have.lengthOf(1);
      expect(messages[0]).to.include('no-appendfsync-on-rewrite is yes');
    } finally {
      await admin.config('SET', 'no-appendfsync-on-rewrite', 'no');
    }
  });

  it('says it could not read the settings when CONFIG is not allowed (as on managed services)', async () => {
    const admin = connect(durable.url);
    await admin.call(
      'ACL',
      'SETUSER',
      'no-config',
      'on',
      '>no-config-password',
      '~*',
      '&*',
      '+@all',
      '-config',
    );
    const { messages, lines, logger } = recordingLogger();
    await warnVolatileRedis(connect(durable.url, { username: 'no-config', password: 'no-config-password' }), {
      logger,
    });
    expect(messages).to.have.lengthOf(1);
    expect(messages[0]).to.include('could not read the Redis persistence settings');
    expect(String(lines[0]?.err)).to.include('NOPERM');
  });

  describe('receiver/main.ts pointed at a server without an append-only file', () => {
    it('logs the warning before it listens, and starts', async () => {
      const { child, output } = await startScript(
        'receiver/main.ts',
        cleanEnv({
          REDIS_URL: volatile.url,
          WEBHOOK_SECRETS: 'volatile-test-secret',
          SPOOL_DIR: join(dir, 'spool'),
          RECEIVER_PORT: String(await freePort()),
        }),
        /receiver listening/,
      );
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      const warnings = output()
        .split('\n')
        .filter((line) => line.includes('append-only file'));
      expect(warnings, output()).to.have.lengthOf(1);
      expect(output().indexOf('append-only file')).to.be.below(output().indexOf('receiver listening'));
    });
  });
});
