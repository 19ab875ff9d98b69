import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createReceiverApp } from '../../receiver/create-receiver-app.ts';
import { createReceiverMetrics } from '../../receiver/receiver-metrics.ts';
import { openSpool } from '../../receiver/spool/open-spool.ts';
import { createMetricsRegistry } from '../../shared/http/metrics-router.ts';
import { createLogger } from '../../shared/logging/create-logger.ts';
import { helmetHeaders } from '../../shared/http/helmet-headers.ts';
import { encodeWebhookJob, webhookJobOptions } from '../../shared/queue/webhook-queue.ts';
import { channelDidCreate, sign, signedHeaders, testSecret } from './support/signed-request.ts';
import { queuedJobIds, useReceiver, type TestReceiver } from './support/use-receiver.ts';
import { createRedisWriteHealth } from '../../receiver/store/redis-write-health.ts';
import { METRICS_GUESS_LIMIT } from '../../receiver/http/metrics-guess-limit.ts';

/** Runs `action` and asserts that the queue and the spool hold no more events afterwards. */
async function expectNothingQueued(receiver: TestReceiver, action: () => Promise<unknown>) {
  const before = await queuedJobIds(receiver);
  await action();
  expect(await queuedJobIds(receiver)).to.deep.equal(before);
  expect(receiver.spool.depth()).to.equal(0);
}

/** The app of a wired test receiver, rebuilt from its parts (to vary one setting). */
const appDeps = (receiver: TestReceiver) => {
  const registry = createMetricsRegistry('receiver', false);
  return {
    logger: createLogger({ name: 'test', level: 'silent' }),
    redis: createRedisWriteHealth(receiver.queue.client, receiver.prefix).check,
    registry,
    metrics: { kind: 'open' } as const,
    receiverMetrics: createReceiverMetrics(registry, () => receiver.spool.depth()),
    spool: receiver.spool,
    enqueue: () => Promise.reject(new Error('not used')),
    webhookPath: '/webhooks',
    settings: {
      allowlist: undefined,
      trustProxy: { kind: 'none' } as const,
      secrets: [],
      maxBodyBytes: 1024,
    },
  };
};

/** An event as the handler would spool it. */
const spooledJob = {
  dedupeKey: 'readyz-1',
  webhook: 'default',
  receivedAt: '2026-11-21T00:00:00.000Z',
  event: 'post.didCreate',
  data: {},
};

const sha256 = (body: string) => createHash('sha256').update(body).digest('hex');

describe('receiver app', () => {
  describe('operations', () => {
    const receiver = useReceiver();

    it('GET /healthz answers 200 { status: "ok" }', async () => {
      const res = await request(receiver().app).get('/healthz').expect(200);
      expect(res.body).to.deep.equal({ status: 'ok' });
    });

    it('GET /readyz reports Redis reachable, the spool writable and its depth', async () => {
      const res = await request(receiver().app).get('/readyz').expect(200);
      expect(res.body).to.deep.include({ status: 'ready' });
      expect(res.body.checks.redis).to.deep.equal({ ok: true });
      expect(res.body.checks.spool).to.deep.equal({ ok: true, detail: { depth: 0 } });
    });

    it('a flood of GET /readyz from anyone pings Redis at most once a second and writes nothing to the spool', async () => {
      const pings = async () => {
        const stats = String(await receiver().queue.client.info('commandstats'));
        return Number(/cmdstat_ping:calls=(\d+)/.exec(stats)?.[1] ?? 0);
      };
      await new Promise((resolve) => setTimeout(resolve, 1_050)); // past any cached result
      const before = await pings();
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: 200 }, () => request(receiver().app).get('/readyz')),
      );
      const elapsedSeconds = (performance.now() - started) / 1000;
      expect(answers.every((res) => res.status === 200)).to.equal(true);
      expect((await pings()) - before).to.be.at.most(Math.ceil(elapsedSeconds) + 1);
      expect(readdirSync(receiver().spool.dir)).to.deep.equal([]);
    });

    it('GET /readyz is 200 again once a spool directory that failed a write can be written, with nothing more spooled', async () => {
      const spoolDir = mkdtempSync(join(tmpdir(), 'receiver-readyz-'));
      const spool = await openSpool(spoolDir, { probeIntervalMs: 0 });
      try {
        const app = createReceiverApp({ ...appDeps(receiver()), spool });
        rmSync(spoolDir, { recursive: true });
        writeFileSync(spoolDir, 'a file where the directory was');
        await expect(spool.append(encodeWebhookJob(spooledJob))).to.be.rejected;
        const failed = await request(app).get('/readyz').expect(503);
        expect(failed.body.checks.spool).to.deep.include({ ok: false, reason: 'failed' });
        rmSync(spoolDir);
        mkdirSync(spoolDir, { mode: 0o700 });
        await new Promise((resolve) => setTimeout(resolve, 1_050)); // past the cached result
        const recovered = await request(app).get('/readyz').expect(200);
        expect(recovered.body.checks.spool).to.deep.equal({ ok: true, detail: { depth: 0 } });
        expect(readdirSync(spool.dir)).to.deep.equal([]);
      } finally {
        await spool.close();
        rmSync(spoolDir, { recursive: true, force: true });
      }
    });

    it('does not serve GET /metrics without METRICS_TOKEN (404)', async () => {
      const app = createReceiverApp({ ...appDeps(receiver()), metrics: { kind: 'off' } });
      await request(app).get('/metrics').expect(404);
    });

    it('answers an unknown path with 404 and the JSON error shape, without x-powered-by', async () => {
      const res = await request(receiver().app).get('/nope').expect(404);
      expect(res.body).to.deep.equal({ status: 'error', code: 404000, message: 'no route for GET /nope' });
      expect(res.headers).not.to.have.property('x-powered-by');
    });

    it('sets helmet headers', async () => {
      const res = await request(receiver().app).get('/healthz');
      expect(res.headers['x-content-type-options']).to.equal('nosniff');
      expect(res.headers).to.have.property('content-security-policy');
    });

    it('sends the same helmet headers on every answer of POST /webhooks: ack, legacy drop, refusal', async () => {
      const helmetNames = [...helmetHeaders().keys()];
      const securityHeaders = (res: request.Response) =>
        Object.fromEntries(helmetNames.map((name) => [name, res.headers[name]]));
      const expected = securityHeaders(await request(receiver().app).get('/healthz').expect(200));
      expect(Object.values(expected)).to.not.include(undefined);
      const body = channelDidCreate('headers-1');
      const post = () => request(receiver().app).post('/webhooks');
      const answers = [
        await post().set(signedHeaders(body)).send(body).expect(200),
        await post()
          .set({ ...signedHeaders(body), 'x-legacy-signature': 'x' })
          .send(body)
          .expect(200),
        await post().set(signedHeaders(body, 'wrong-secret')).send(body).expect(401),
        await post().set('content-type', 'text/plain').send('x').expect(415),
        // The path as only Express's matching takes it: routed to the same handler.
        await request(receiver().app)
          .post('/webhooks/')
          .set(signedHeaders(body, 'wrong-secret'))
          .send(body)
          .expect(401),
      ];
      for (const res of answers) {
        expect(securityHeaders(res)).to.deep.equal(expected);
        expect(res.headers).not.to.have.property('x-powered-by');
      }
      expect(answers[0]?.headers['content-length']).to.equal('2');
      // Refusals, written without Express, have the content type of the error middleware's answers.
      const notFound = await request(receiver().app).get('/nope').expect(404);
      for (const res of answers.slice(2)) {
        expect(res.headers['content-type']).to.equal(notFound.headers['content-type']);
      }
    });

    for (const method of ['get', 'put', 'delete', 'patch'] as const) {
      it(`answers ${method.toUpperCase()} /webhooks with 405, Allow: POST and the JSON error shape`, async () => {
        const res = await request(receiver().app)[method]('/webhooks').expect(405);
        expect(res.headers.allow).to.equal('POST');
        expect(res.body).to.deep.include({ status: 'error', code: 405000 });
      });
    }

    it('exposes the receiver metrics in Prometheus format, counting each answer once', async () => {
      const series = async () => {
        const { text } = await request(receiver().app).get('/metrics').expect(200);
        const value = (name: string, labels: string) => {
          const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
          return Number(line?.split(' ').at(-1) ?? 0);
        };
        return {
          text,
          received: value('webhook_received_total', ''),
          queued: value('webhook_accepted_total', 'stored_in="queue"'),
          duplicates: value('webhook_dropped_total', 'reason="duplicate"'),
          badSignatures: value('webhook_rejected_total', 'reason="bad_signature"'),
          acked200: value('webhook_ack_duration_seconds_count', 'status="200"'),
          answered401: value('webhook_ack_duration_seconds_count', 'status="401"'),
          enqueuedQueued: value('webhook_enqueue_duration_seconds_count', 'outcome="queued"'),
          waiting: value('webhook_queue_jobs', 'state="waiting"'),
        };
      };
      const before = await series();
      const body = channelDidCreate('metrics-1');
      await request(receiver().app).post('/webhooks').set(signedHeaders(body)).send(body).expect(200);
      await request(receiver().app).post('/webhooks').set(signedHeaders(body)).send(body).expect(200);
      await request(receiver().app)
        .post('/webhooks')
        .set(signedHeaders(body, 'wrong'))
        .send(body)
        .expect(401);
      const after = await series();
      expect({
        received: after.received - before.received,
        queued: after.queued - before.queued,
        duplicates: after.duplicates - before.duplicates,
        badSignatures: after.badSignatures - before.badSignatures,
        acked200: after.acked200 - before.acked200,
        answered401: after.answered401 - before.answered401,
        enqueuedQueued: after.enqueuedQueued - before.enqueuedQueued,
        waiting: after.waiting - before.waiting,
      }).to.deep.equal({
        received: 3,
        queued: 1,
        duplicates: 1,
        badSignatures: 1,
        acked200: 2,
        answered401: 1,
        enqueuedQueued: 1,
        waiting: 1,
      });
      for (const name of ['webhook_enqueue_duration_seconds_bucket', 'webhook_spool_depth']) {
        expect(after.text).to.include(name);
      }
    });
  });

  describe('GET /metrics with METRICS_TOKEN: wrong guesses per address', () => {
    const TOKEN = 'receiver-metrics-token-of-32-characters';
    // Behind a proxy on loopback, so each call names its client in X-Forwarded-For.
    const receiver = useReceiver({
      metrics: { kind: 'token', token: TOKEN },
      trustProxy: 'loopback',
      allow: '198.51.100.0/24,203.0.113.0/24',
    });
    const scrape = (from: string, token: string) =>
      request(receiver().app)
        .get('/metrics')
        .set('X-Forwarded-For', from)
        .set('Authorization', `Bearer ${token}`);

    it(`refuses an address with 429 after ${METRICS_GUESS_LIMIT} wrong tokens, even the right one then, and no other address`, async () => {
      const guesser = '198.51.100.7';
      for (let i = 0; i < METRICS_GUESS_LIMIT; i += 1) {
        await scrape(guesser, `wrong-${i}`.padEnd(32, 'x')).expect(401);
      }
      // The guess over the limit is still answered as a wrong token; from then on the address is refused.
      await scrape(guesser, 'one-more-wrong-guess-xxxxxxxxxxxxx').expect(401);
      const refused = await scrape(guesser, TOKEN).expect(429);
      expect(refused.body).to.deep.equal({
        status: 'error',
        code: 400311,
        message: 'too many failed authentication attempts from this address; try again later',
      });
      expect(Number(refused.headers['retry-after'])).to.be.within(1, 60);
      // Its /64 for IPv6, as on the tray; another address still scrapes.
      await scrape('203.0.113.9', TOKEN).expect(200);
    });

    it('counts no scrape that sent no token (a page elsewhere can make those from a visitor), nor another scheme', async () => {
      const from = '198.51.100.9';
      for (let i = 0; i <= METRICS_GUESS_LIMIT; i += 1) {
        await request(receiver().app).get('/metrics').set('X-Forwarded-For', from).expect(401);
        await request(receiver().app)
          .get('/metrics')
          .set('X-Forwarded-For', from)
          .set('Authorization', 'Basic dXNlcjpwYXNz')
          .expect(401);
      }
      await scrape(from, TOKEN).expect(200);
    });

    it('counts guesses with a malformed X-Forwarded-For apart, never against the proxy they came through', async () => {
      for (let i = 0; i <= METRICS_GUESS_LIMIT; i += 1) await scrape('010.0.0.1', 'wrong'.padEnd(32, 'x'));
      await scrape('not-an-address', TOKEN).expect(429);
      // The proxy itself (loopback, no header) and the clients behind it scrape as before.
      await request(receiver().app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`).expect(200);
      await scrape('198.51.100.20', TOKEN).expect(200);
    });

    it('never refuses a webhook delivery, nor the probes, from an address refused for /metrics', async () => {
      const guesser = '198.51.100.8';
      for (let i = 0; i <= METRICS_GUESS_LIMIT; i += 1) await scrape(guesser, 'wrong'.padEnd(32, 'x'));
      await scrape(guesser, TOKEN).expect(429);
      const body = channelDidCreate('metrics-guesser-1');
      await request(receiver().app)
        .post('/webhooks')
        .set('X-Forwarded-For', guesser)
        .set(signedHeaders(body))
        .send(body)
        .expect(200);
      expect(await queuedJobIds(receiver())).to.include(sha256(body));
      await request(receiver().app).get('/healthz').set('X-Forwarded-For', guesser).expect(200);
    });
  });

  describe('POST /webhooks', () => {
    const receiver = useReceiver({ secrets: `frankfurt=${testSecret},singapore=sg-old,singapore=sg-new` });
    const post = (body: string | Buffer, headers: Record<string, string>) =>
      request(receiver().app).post('/webhooks').set(headers).send(body);

    describe('with a valid signed channel.didCreate', () => {
      it('responds 200 {} and queues one job whose id is the SHA-256 of the body', async () => {
        const body = channelDidCreate('valid-1');
        const res = await post(body, signedHeaders(body)).expect(200);
        expect(res.body).to.deep.equal({});
        expect(res.headers['content-type']).to.match(/^application\/json/);
        const job = await receiver().queue.queue.getJob(sha256(body));
        expect(job?.data).to.deep.include({
          dedupeKey: sha256(body),
          webhook: 'frankfurt',
          event: 'channel.didCreate',
          data: JSON.parse(body).data,
        });
        expect(job?.opts).to.deep.include({
          attempts: webhookJobOptions.attempts,
          backoff: webhookJobOptions.backoff,
        });
      });
    });

    describe('on the path as only Express matches it (trailing slash, other case, query string)', () => {
      for (const path of ['/webhooks/', '/Webhooks', '/webhooks?via=proxy']) {
        it(`${path}: responds 200 {} and queues it, and refuses a wrong signature with 401 and the JSON error shape`, async () => {
          const body = channelDidCreate(`path-${path}`);
          const res = await request(receiver().app)
            .post(path)
            .set(signedHeaders(body))
            .send(body)
            .expect(200);
          expect(res.body).to.deep.equal({});
          expect(await receiver().queue.queue.getJob(sha256(body))).to.not.equal(null);
          const refused = await request(receiver().app)
            .post(path)
            .set(signedHeaders(body, 'wrong'))
            .send(body)
            .expect(401);
          expect(refused.body).to.deep.include({ status: 'error', code: 401000 });
        });
      }
    });

    describe('signed with the second secret of a rotated webhook', () => {
      it('responds 200 and the job names that webhook', async () => {
        const body = channelDidCreate('rotated-1');
        await post(body, signedHeaders(body, 'sg-new')).expect(200);
        expect((await receiver().queue.queue.getJob(sha256(body)))?.data.webhook).to.equal('singapore');
      });
    });

    describe('with a chunked body (no Content-Length)', () => {
      it('responds 200 and queues it', async () => {
        const body = channelDidCreate('chunked-1');
        const req = request(receiver().app).post('/webhooks').set(signedHeaders(body));
        req.write(body.slice(0, 100));
        req.write(body.slice(100));
        await req.expect(200);
        expect(await receiver().queue.queue.getJob(sha256(body))).to.not.equal(null);
      });
    });

    describe('with an x-legacy-signature header (the legacy duplicate)', () => {
      it('responds 200 {}, queues nothing and counts it', async () => {
        const body = channelDidCreate('legacy-1');
        await expectNothingQueued(receiver(), async () => {
          const res = await post(body, { ...signedHeaders(body), 'x-legacy-signature': 'anything' }).expect(
            200,
          );
          expect(res.body).to.deep.equal({});
        });
        const metrics = await receiver().registry.metrics();
        expect(metrics).to.match(/webhook_dropped_total\{reason="legacy"[^}]*\} 1/);
      });
    });

    describe('redelivered with an identical body', () => {
      it('responds 200 {}, queues it once and counts the duplicate', async () => {
        const body = channelDidCreate('dedupe-1');
        await post(body, signedHeaders(body)).expect(200);
        const before = await queuedJobIds(receiver());
        const res = await post(body, signedHeaders(body)).expect(200);
        expect(res.body).to.deep.equal({});
        expect(await queuedJobIds(receiver())).to.deep.equal(before);
        expect(await receiver().registry.metrics()).to.match(
          /webhook_dropped_total\{reason="duplicate"[^}]*\} 1/,
        );
      });
    });

    describe('a rejoin byte-identical to the first join (no createdAt)', () => {
      it('queues both: without a time the body cannot tell a rejoin from a redelivery, and a lost rejoin costs a member', async () => {
        const join = JSON.stringify({
          event: 'community.didJoin',
          data: { community: { communityId: 'c-re', displayName: 'Re' }, userIds: ['u-eve'] },
        });
        const before = (await queuedJobIds(receiver())).length;
        await post(join, signedHeaders(join)).expect(200);
        await post(join, signedHeaders(join)).expect(200);
        expect((await queuedJobIds(receiver())).length).to.equal(before + 2);
      });
    });

    describe('a profile changed back within the dedupe window (user.didUpdate names no time)', () => {
      it('queues each: Ana, then Ana B, then Ana again, or the tray would keep Ana B', async () => {
        const profile = (displayName: string) =>
          JSON.stringify({ event: 'user.didUpdate', data: { users: [{ userId: 'u-ana-p', displayName }] } });
        const before = (await queuedJobIds(receiver())).length;
        for (const name of ['Ana', 'Ana B', 'Ana'])
          await post(profile(name), signedHeaders(profile(name))).expect(200);
        expect((await queuedJobIds(receiver())).length).to.equal(before + 3);
      });
    });

    describe('a join with createdAt redelivered with an identical body', () => {
      it('queues it once (a real rejoin has another createdAt)', async () => {
        const join = JSON.stringify({
          event: 'community.didJoin',
          data: {
            community: { communityId: 'c-re', displayName: 'Re' },
            userIds: ['u-eve'],
            createdAt: '2026-11-20T09:30:00.000Z',
          },
        });
        await post(join, signedHeaders(join)).expect(200);
        await expectNothingQueued(receiver(), () => post(join, signedHeaders(join)).expect(200));
        expect(await receiver().queue.queue.getJob(sha256(join))).to.not.equal(null);
      });
    });

    describe('redelivered after the job was processed and removed', () => {
      it('responds 200 and does not queue it again (the dedupe mark outlives the job)', async () => {
        const body = channelDidCreate('dedupe-2');
        await post(body, signedHeaders(body)).expect(200);
        await (await receiver().queue.queue.getJob(sha256(body)))?.remove();
        await expectNothingQueued(receiver(), () => post(body, signedHeaders(body)).expect(200));
      });
    });

    describe('with Content-Type application/json; charset=UTF-8 and Content-Encoding identity', () => {
      it('responds 200 and queues it', async () => {
        const body = channelDidCreate('charset-1');
        await post(body, {
          ...signedHeaders(body),
          'content-type': 'application/json; charset=UTF-8',
          'content-encoding': 'identity',
        }).expect(200);
        expect(await receiver().queue.queue.getJob(sha256(body))).to.not.equal(null);
      });
    });

    const rejections: {
      name: string;
      status: number;
      code: number;
      build: () => { body: string | Buffer; headers: Record<string, string> };
    }[] = [
      {
        name: 'without a content type',
        status: 415,
        code: 415000,
        build: () => {
          const body = channelDidCreate('r-ct-1');
          return { body: Buffer.from(body), headers: { 'x-service-signature': sign(body) } };
        },
      },
      {
        name: 'with Content-Type text/plain',
        status: 415,
        code: 415000,
        build: () => {
          const body = channelDidCreate('r-ct-2');
          return { body, headers: { ...signedHeaders(body), 'content-type': 'text/plain' } };
        },
      },
      {
        name: 'with a charset other than UTF-8',
        status: 415,
        code: 415000,
        build: () => {
          const body = channelDidCreate('r-ct-3');
          return {
            body,
            headers: { ...signedHeaders(body), 'content-type': 'application/json; charset=latin1' },
          };
        },
      },
      {
        name: 'with Content-Encoding gzip',
        status: 415,
        code: 415000,
        build: () => {
          const body = channelDidCreate('r-ce-1');
          return { body, headers: { ...signedHeaders(body), 'content-encoding': 'gzip' } };
        },
      },
      {
        name: 'without x-service-signature',
        status: 401,
        code: 401000,
        build: () => ({ body: channelDidCreate('r-sig-1'), headers: { 'content-type': 'application/json' } }),
      },
      {
        name: 'with a signature that is not Base64 of 32 bytes',
        status: 401,
        code: 401000,
        build: () => {
          const body = channelDidCreate('r-sig-2');
          return {
            body,
            headers: { ...signedHeaders(body), 'x-service-signature': sign(body).slice(0, 20) },
          };
        },
      },
      {
        name: 'signed with a wrong secret',
        status: 401,
        code: 401000,
        build: () => {
          const body = channelDidCreate('r-sig-3');
          return { body, headers: signedHeaders(body, 'not-the-secret') };
        },
      },
      {
        name: 'with a re-serialised body',
        status: 401,
        code: 401000,
        build: () => {
          const body = channelDidCreate('r-sig-4');
          return { body: JSON.stringify(JSON.parse(body), null, 2), headers: signedHeaders(body) };
        },
      },
      {
        name: 'with one flipped byte',
        status: 401,
        code: 401000,
        build: () => {
          const body = channelDidCreate('r-sig-5');
          const flipped = Buffer.from(body);
          flipped[40] = (flipped[40] ?? 0) ^ 0x01;
          return { body: flipped, headers: signedHeaders(body) };
        },
      },
      {
        name: 'with a JSON array body',
        status: 400,
        code: 400000,
        build: () => ({ body: '[1,2]', headers: signedHeaders('[1,2]') }),
      },
      {
        name: 'with invalid JSON',
        status: 400,
        code: 400000,
        build: () => ({ body: '{"event":', headers: signedHeaders('{"event":') }),
      },
      {
        name: 'without a string event',
        status: 400,
        code: 400000,
        build: () => {
          const body = '{"event":5,"data":{}}';
          return { body, headers: signedHeaders(body) };
        },
      },
      {
        name: 'with data that is not an object',
        status: 400,
        code: 400000,
        build: () => {
          const body = '{"event":"post.didCreate","data":[]}';
          return { body, headers: signedHeaders(body) };
        },
      },
      {
        name: 'nested deeper than the limit',
        status: 400,
        code: 400000,
        build: () => {
          const body = `{"event":"x","data":{"a":${'['.repeat(100)}${']'.repeat(100)}}}`;
          return { body, headers: signedHeaders(body) };
        },
      },
    ];
    for (const rejection of rejections) {
      describe(rejection.name, () => {
        it(`responds ${rejection.status} with the JSON error shape and queues nothing`, async () => {
          const { body, headers } = rejection.build();
          await expectNothingQueued(receiver(), async () => {
            const res = await post(body, headers).expect(rejection.status);
            expect(res.body).to.have.keys(['status', 'code', 'message']);
            expect(res.body).to.deep.include({ status: 'error', code: rejection.code });
            const signature = headers['x-service-signature'];
            if (signature) expect(res.text).not.to.include(signature);
            expect(res.text).not.to.include(testSecret);
          });
        });
      });
    }
  });

  describe('POST /webhooks with a 1 KiB body limit', () => {
    const receiver = useReceiver({ maxBodyBytes: 1024 });
    // Far over the limit, so the client is still sending when the receiver decides.
    const big = JSON.stringify({ event: 'x', data: { pad: 'a'.repeat(512 * 1024) } });

    describe('with a declared Content-Length over the limit', () => {
      it('responds 413 and queues nothing', async () => {
        await expectNothingQueued(receiver(), async () => {
          const res = await request(receiver().app)
            .post('/webhooks')
            .set(signedHeaders(big))
            .send(big)
            .expect(413);
          expect(res.body).to.deep.include({ status: 'error', code: 413000 });
        });
      });
    });

    describe('with a chunked body that grows over the limit', () => {
      it('responds 413 and queues nothing', async () => {
        await expectNothingQueued(receiver(), async () => {
          const req = request(receiver().app).post('/webhooks').set(signedHeaders(big));
          for (let i = 0; i < big.length; i += 16 * 1024) req.write(big.slice(i, i + 16 * 1024));
          const res = await req.catch((error: { response?: request.Response }) => error.response);
          expect(res?.status).to.equal(413);
        });
      });
    });
  });
});
