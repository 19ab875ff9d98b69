import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { ferretdbBinary, freePort, startPostgres, startRedis } from '../../../scripts/lib/local-servers.ts';
import { pgAdminClient } from '../../../scripts/lib/pg-admin-client.ts';

const localServersModule = fileURLToPath(new URL('../../../scripts/lib/local-servers.ts', import.meta.url));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the scripts' local servers (scripts/lib/local-servers.ts)", () => {
  describe('freePort', () => {
    // The kernel hands out a port just closed again soon, so two calls in a row (a tray's TRAY_PORT
    // and ADMIN_PORT) once got the same port and the process refused to start.
    it('never gives one process the same port twice', async () => {
      const ports: number[] = [];
      for (let i = 0; i < 400; i += 1) ports.push(await freePort());
      expect(new Set(ports).size).to.equal(ports.length);
    });
  });

  // scripts/setup.sh builds the pinned FerretDB into Go's bin folder when the binary there is not
  // that version; a `ferretdb` of another version earlier on PATH was the one the tests then ran.
  describe('ferretdbBinary', () => {
    let dir: string;
    let env: NodeJS.ProcessEnv;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'ferretdb-binary-'));
      for (const folder of ['on-path', 'gopath/bin']) mkdirSync(join(dir, folder), { recursive: true });
      writeFileSync(join(dir, 'on-path', 'ferretdb'), '#!/bin/sh\n', { mode: 0o755 });
      env = {
        ...process.env,
        PATH: `${join(dir, 'on-path')}:${process.env.PATH ?? ''}`,
        GOPATH: join(dir, 'gopath'),
      };
      delete env.FERRETDB_BIN;
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('takes FERRETDB_BIN, then the one scripts/setup.sh builds, then one on PATH', () => {
      expect(ferretdbBinary(env)).to.equal(join(dir, 'on-path', 'ferretdb'));
      writeFileSync(join(dir, 'gopath/bin/ferretdb'), '#!/bin/sh\n', { mode: 0o755 });
      expect(ferretdbBinary(env)).to.equal(join(dir, 'gopath/bin/ferretdb'));
      expect(ferretdbBinary({ ...env, FERRETDB_BIN: '/opt/ferretdb' })).to.equal('/opt/ferretdb');
    });

    it('names the ways to get one when there is none', () => {
      const bare = { ...env, PATH: dirname(process.execPath) + ':/usr/bin:/bin' };
      rmSync(join(dir, 'on-path', 'ferretdb'));
      expect(() => ferretdbBinary(bare)).to.throw('ferretdb not found: run `npm run setup`');
    });
  });

  // The newest installed server was started on any data folder: after an upgrade that left an
  // older major version's folder, PostgreSQL refused it with one line that named no way out.
  // Another program on the port (another suite's Redis that took a freed port) answered the
  // readiness check before the new server failed to bind: the test then ran against the wrong one.
  describe('startRedis on a port another program listens on', () => {
    it("refuses with the server's own failure, instead of taking the other program for it", async () => {
      const port = await freePort();
      const other = createServer().listen(port, '127.0.0.1');
      await once(other, 'listening');
      const dir = mkdtempSync(join(tmpdir(), 'redis-taken-'));
      try {
        await expect(startRedis({ dir, port })).to.be.rejectedWith(/redis-server exited .*during start-up/);
      } finally {
        other.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('startPostgres on a data folder of a major version not installed', () => {
    it('refuses before starting anything, naming both versions and what to do', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'pg-version-'));
      try {
        mkdirSync(join(dir, 'data'), { recursive: true });
        writeFileSync(join(dir, 'data', 'PG_VERSION'), '11\n');
        await expect(startPostgres({ dir })).to.be.rejectedWith(
          /made by PostgreSQL 11, whose server is not installed \(installed: \d+\).*pg_upgrade/,
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  // initdb writes PG_VERSION first: one killed in place mid-way (SIGKILL, a power cut) left a
  // folder that every later start took for a finished cluster, and failed on until removed by hand.
  describe('startPostgres after an initdb cut short', function () {
    this.timeout(120_000);

    it('makes the cluster again and starts', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'pg-cut-'));
      const pgDir = join(dir, 'pg');
      const password = 'cut-short-test';
      const first = spawn(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import { startPostgres } from ${JSON.stringify(localServersModule)};\n` +
            `await startPostgres({ dir: ${JSON.stringify(pgDir)}, password: ${JSON.stringify(password)} });`,
        ],
        { stdio: 'ignore' },
      );
      try {
        const versionFile = () =>
          ['data', 'data.initdb'].some((folder) => existsSync(join(pgDir, folder, 'PG_VERSION')));
        const deadline = Date.now() + 60_000;
        while (!versionFile()) {
          if (Date.now() > deadline) throw new Error('initdb wrote no PG_VERSION within 60 s');
          await sleep(5);
        }
        const cut = spawnSync('pkill', ['-KILL', '-f', `initdb -D ${pgDir}`]);
        expect(cut.status, 'initdb was still running when it was killed').to.equal(0);
        first.kill('SIGKILL');

        const server = await startPostgres({ dir: pgDir, password });
        try {
          const client = pgAdminClient(server.url);
          await client.connect();
          try {
            expect((await client.query('SELECT 1 AS one')).rows).to.deep.equal([{ one: 1 }]);
          } finally {
            await client.end();
          }
        } finally {
          await server.stop();
        }
      } finally {
        first.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  // Run as root, PostgreSQL runs as `postgres`, and only the folder above its own was opened to
  // it: a checkout under /root (0700) failed in initdb with "Permission denied" and no way out.
  describe('startPostgres as root, under a folder the postgres account cannot pass', () => {
    it('refuses before starting anything, naming the folder and what to do', async () => {
      expect(process.getuid?.(), 'the project runs its servers as root here').to.equal(0);
      const outer = mkdtempSync(join(tmpdir(), 'pg-closed-'));
      try {
        chmodSync(outer, 0o700);
        await expect(startPostgres({ dir: join(outer, 'checkout', '.data', 'postgres') })).to.be.rejectedWith(
          `PostgreSQL runs as the postgres account, which cannot pass ${outer} (mode 700): give its data a folder it can reach (npm start: STACK_DATA_DIR), or let it pass (chmod o+x ${outer})`,
        );
        expect(readdirSync(outer), 'nothing made').to.deep.equal([]);
      } finally {
        rmSync(outer, { recursive: true, force: true });
      }
    });
  });

  describe('startRedis({ persistent: true }), the dev stack and fault tests', function () {
    this.timeout(60_000);
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'durable-redis-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    // With `appendfsync everysec` Redis answers writes it only buffered while the last second's
    // fsync runs; killed then, it lost 19-35 acknowledged writes in each of three runs on this
    // machine (CI once lost 9 acknowledged events this way). A busy disk makes those fsyncs long.
    it('keeps every write it acknowledged across a SIGKILL while its disk is busy', async () => {
      const redisDir = join(dir, 'redis');
      const port = await freePort();
      const server = await startRedis({ dir: redisDir, port, persistent: true });
      const hog = spawn(
        'sh',
        [
          '-c',
          `while :; do dd if=/dev/zero of=${join(dir, 'hog')} bs=1M count=64 conv=fsync 2>/dev/null; done`,
        ],
        { stdio: 'ignore', detached: true },
      );
      const writer = new Redis(server.url, {
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
        retryStrategy: () => null,
      });
      writer.on('error', () => undefined);
      const probe = new Redis(server.url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined);
      const acknowledged: number[] = [];
      let next = 0;
      let pendingAtKill = false;
      try {
        await new Promise((resolve) => writer.once('ready', resolve));
        // The settings themselves, beside the kill below: on a fast or memory-backed disk the
        // moment `everysec` loses writes may never come, and the kill alone would pass.
        const settings = (await probe.config('GET', 'append*')) as string[];
        const byName = Object.fromEntries(
          settings.flatMap((value, index) => (index % 2 === 0 ? [[value, settings[index + 1]]] : [])),
        );
        expect(byName).to.deep.include({ appendonly: 'yes', appendfsync: 'always' });
        const writers = Array.from({ length: 16 }, async () => {
          for (;;) {
            const id = next++;
            try {
              await writer.set(`k${id}`, 'x'.repeat(1500));
            } catch {
              return;
            }
            acknowledged.push(id);
          }
        });
        await sleep(1_000);
        // Kill while a background fsync is pending with writes in the buffer if that happens within
        // 5 s (the moment `everysec` loses writes); `always` fsyncs before answering, so never.
        const deadline = Date.now() + 5_000;
        while (Date.now() < deadline && !pendingAtKill) {
          const info = await probe.info('persistence');
          pendingAtKill =
            /aof_pending_bio_fsync:1/.test(info) && Number(/aof_buffer_length:(\d+)/.exec(info)?.[1]) > 0;
        }
        server.process.kill('SIGKILL');
        await Promise.all(writers);
      } finally {
        if (hog.pid !== undefined) process.kill(-hog.pid, 'SIGKILL');
        writer.disconnect();
        probe.disconnect();
      }
      expect(acknowledged.length, 'writes acknowledged before the kill').to.be.above(1_000);

      const restarted = await startRedis({ dir: redisDir, port, persistent: true });
      const reader = new Redis(restarted.url);
      try {
        let missing = 0;
        for (let i = 0; i < acknowledged.length; i += 1_000) {
          const keys = acknowledged.slice(i, i + 1_000).map((id) => `k${id}`);
          missing += keys.length - (await reader.exists(...keys));
        }
        expect({ missing, pendingAtKill }).to.deep.include({ missing: 0 });
      } finally {
        reader.disconnect();
        await restarted.stop();
      }
    });
  });
});
