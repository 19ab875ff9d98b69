import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { get, type IncomingMessage } from 'node:http';
import { resolve } from 'node:path';
import { repoRoot } from '../../support/run-script.ts';
import { testStack } from '../../support/test-stack.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { ADMIN_TOKEN } from './admin-fixtures.ts';

const EVENT_COUNT = 100_000;
/** ~1.4 KB per exported line: the whole export is ~140 MB. */
const FILLER = 'x'.repeat(1_200);
/**
 * The reader stops after the first chunk until the server has stopped fetching (its count still for
 * SETTLED_MS: the socket and the stream's buffers are full), for at most FILL_LIMIT_MS, then for
 * QUIET_MS more, in which the server must not fetch another document; then it reads with short
 * pauses.
 */
const FILL_LIMIT_MS = 12_000;
const SETTLED_MS = 2_000;
const QUIET_MS = 8_000;
const READ_PAUSE_EVERY = 512 * 1024;
const READ_PAUSE_MS = 20;
/** Read-ahead allowed while the client stalls: a few storage batches and socket buffers (5% of the export). */
const MAX_READ_AHEAD_DOCS = 5_000;
/**
 * Server RSS growth allowed while the client stalls: without backpressure it would grow toward
 * 140 MB. With the same 3,156 documents read ahead, 16 clean-clone CI runs saw +1 to +37.5 MB (the
 * allocator's and the young generation's slack, not documents): the exact check is the read-ahead
 * above; this one only tells a bounded buffer from a whole export held.
 */
const MAX_RSS_GROWTH_STALLED = 64 * 1024 * 1024;

interface Sample {
  rss: number;
  fetched: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

describe('GET /admin/events/export with 100,000 events and a slow reader', function () {
  this.timeout(400_000);
  const suite = useTrayStorage();
  let server: ChildProcess;
  let port: number;
  const samples: Sample[] = [];

  before(async function () {
    this.timeout(240_000);
    const base = Date.UTC(2026, 10, 1);
    // Stored as the worker stores them, a few at once; kept for a day past now.
    const retentionDays = Math.ceil((Date.now() - base) / 86_400_000) + 1;
    for (let start = 0; start < EVENT_COUNT; start += 1_000) {
      await Promise.all(
        Array.from({ length: 8 }, async (_, lane) => {
          for (let n = start + lane; n < start + 1_000; n += 8) {
            const receivedAt = new Date(base + n * 1000);
            await suite.storage.events.store(
              {
                key: `ev-${String(n).padStart(6, '0')}`,
                event: 'post.didCreate',
                data: { post: { postId: `p-${n}`, text: FILLER } },
                webhook: 'main',
                receivedAt,
              },
              { status: 'stored' },
              { retentionDays, now: receivedAt },
            );
          }
        }),
      );
    }
    const script = resolve(repoRoot, 'test/tray-service/admin/fixtures/export-server.ts');
    server = spawn(process.execPath, ['--expose-gc', script], {
      cwd: repoRoot,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: {
        PATH: process.env.PATH,
        ...suite.env,
        REDIS_URL: testStack().redisUrl,
        ADMIN_TOKEN,
      },
    });
    port = await new Promise<number>((done, fail) => {
      server.once('exit', (code) => fail(new Error(`export server exited with ${code}`)));
      server.on('message', (message: { port?: number } & Partial<Sample>) => {
        if (message.port) done(message.port);
        if (message.rss !== undefined && message.fetched !== undefined) {
          samples.push({ rss: message.rss, fetched: message.fetched });
        }
      });
    });
  });

  after(() => {
    server?.kill('SIGKILL');
  });

  /** Until the server's fetched count has not moved for SETTLED_MS, or FILL_LIMIT_MS have passed. */
  async function untilFetchingStops(): Promise<void> {
    const deadline = Date.now() + FILL_LIMIT_MS;
    let last = samples.at(-1)?.fetched;
    let since = Date.now();
    while (Date.now() < deadline) {
      await sleep(250);
      const now = samples.at(-1)?.fetched;
      if (now !== last) [last, since] = [now, Date.now()];
      else if (Date.now() - since >= SETTLED_MS) return;
    }
  }

  it('streams every event, and a stalled reader stops the server reading storage', async () => {
    await sleep(1_000);
    const before = samples.at(-1)!;
    const response = await new Promise<IncomingMessage>((done, fail) => {
      get(
        `http://127.0.0.1:${port}/admin/events/export`,
        { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
        done,
      ).on('error', fail);
    });
    expect(response.statusCode).to.equal(200);

    let lines = 0;
    let bytes = 0;
    let sincePause = 0;
    let first = '';
    let tail = '';
    let stall: { quiet: Sample[]; all: Sample[] } | undefined;
    for await (const chunk of response as AsyncIterable<Buffer>) {
      if (!stall) {
        // Stop reading: the server's writes fill the socket, then backpressure must reach the cursor.
        const from = samples.length;
        await untilFetchingStops();
        const quietFrom = samples.length;
        await sleep(QUIET_MS);
        stall = { quiet: samples.slice(quietFrom), all: samples.slice(from) };
      }
      const text = chunk.toString('utf8');
      if (first.length < 100) first += text.slice(0, 100);
      tail = (tail + text).slice(-4000);
      for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines += 1;
      bytes += chunk.length;
      sincePause += chunk.length;
      if (sincePause >= READ_PAUSE_EVERY) {
        sincePause = 0;
        await sleep(READ_PAUSE_MS);
      }
    }
    const after = samples.at(-1)!;
    const stalledFetched = stall!.quiet.map((s) => s.fetched);
    const readAhead = Math.max(...stalledFetched) - before.fetched;
    const stalledGrowth = Math.max(...stall!.all.map((s) => s.rss)) - before.rss;
    const exportGrowth = Math.max(...samples.slice(samples.indexOf(before)).map((s) => s.rss)) - before.rss;
    process.stdout.write(
      `      ${lines} lines, ${mb(bytes)} MB; stalled: ${readAhead} documents read ahead, RSS +${mb(stalledGrowth)} MB; ` +
        `whole export: RSS ${mb(before.rss)} -> peak +${mb(exportGrowth)} MB, ${after.fetched - before.fetched} documents fetched\n`,
    );

    expect(lines).to.equal(EVENT_COUNT);
    expect(first).to.match(/^\{"key":"ev-099999"/);
    expect(tail).to.match(/\{"key":"ev-000000"[^\n]*\n$/);
    expect(stalledFetched.length).to.be.greaterThan(10);
    expect(new Set(stalledFetched).size, 'documents fetched while the reader stalled').to.equal(1);
    expect(readAhead).to.be.at.most(MAX_READ_AHEAD_DOCS);
    expect(stalledGrowth).to.be.lessThan(MAX_RSS_GROWTH_STALLED);
  });
});
