import { expect } from 'chai';
import { Writable } from 'node:stream';
import { createHash, createHmac } from 'node:crypto';
import { Agent, createServer, request as httpRequest, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createWebhookHandler } from '../../../receiver/http/create-webhook-handler.ts';
import { messageKey } from '../../../receiver/message-key.ts';
import { createReceiverMetrics } from '../../../receiver/receiver-metrics.ts';
import { standardSignatureHeaders } from '../../../receiver/signature/sign-standard.ts';
import { helmetHeaders } from '../../../shared/http/helmet-headers.ts';
import { createMetricsRegistry } from '../../../shared/http/metrics-router.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import {
  channelDidCreate,
  sign,
  signedHeaders,
  standardEvent,
  standardHeaders,
  testSecret,
  testStandardSecret,
} from '../support/signed-request.ts';
import { queuedJobIds, testSettings, useReceiver, type ReceiverOptions } from '../support/use-receiver.ts';

// The test client always connects from loopback; "the platform" is simulated with a regional
// address (Frankfurt, docs/contract.md#source-addresses) that only a trusted proxy can report.
const frankfurt = '3.127.106.141';

let counter = 0;
/** Posts a fresh signed event with extra headers; resolves to the status. */
function deliver(app: Parameters<typeof request>[0], headers: Record<string, string> = {}) {
  const body = channelDidCreate(`source-${(counter += 1)}`);
  return request(app)
    .post('/webhooks')
    .set({ ...signedHeaders(body), ...headers })
    .send(body);
}

function sourceSuite(
  title: string,
  options: ReceiverOptions,
  cases: { forwardedFor?: string; status: 200 | 403; rule: string }[],
) {
  describe(title, () => {
    const receiver = useReceiver(options);
    for (const { forwardedFor, status, rule } of cases) {
      it(rule, async () => {
        const before = await queuedJobIds(receiver());
        const headers: Record<string, string> =
          forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor };
        const res = await deliver(receiver().app, headers).expect(status);
        const after = await queuedJobIds(receiver());
        if (status === 403) {
          expect(res.body).to.deep.equal({
            status: 'error',
            code: 403000,
            message: 'source address is not allowed',
          });
          expect(after).to.deep.equal(before);
        } else {
          expect(after).to.have.lengthOf(before.length + 1);
        }
      });
    }
  });
}

describe('POST /webhooks source address', () => {
  sourceSuite('with the allowlist holding only a regional address and no TRUST_PROXY', { allow: frankfurt }, [
    { status: 403, rule: 'refuses a socket address outside the allowlist with 403 and queues nothing' },
    {
      forwardedFor: frankfurt,
      status: 403,
      rule: 'refuses a spoofed X-Forwarded-For naming an allowed address',
    },
  ]);

  sourceSuite('with the socket address (loopback) in the allowlist', { allow: '127.0.0.1' }, [
    { status: 200, rule: 'accepts the delivery' },
    { forwardedFor: '9.9.9.9', status: 200, rule: 'ignores X-Forwarded-For without TRUST_PROXY' },
  ]);

  sourceSuite('with TRUST_PROXY=loopback', { allow: `${frankfurt},2001:db8::/32`, trustProxy: 'loopback' }, [
    { forwardedFor: frankfurt, status: 200, rule: 'accepts an allowed address reported by the proxy' },
    { forwardedFor: `::ffff:${frankfurt}`, status: 200, rule: 'counts an IPv4-mapped IPv6 address as IPv4' },
    { forwardedFor: '2001:db8::5', status: 200, rule: 'accepts an IPv6 address inside an allowed CIDR' },
    { forwardedFor: '9.9.9.9', status: 403, rule: 'refuses an address outside the allowlist' },
    {
      forwardedFor: `${frankfurt}, 9.9.9.9`,
      status: 403,
      rule: 'uses the nearest untrusted hop, not the first',
    },
    {
      forwardedFor: '003.127.106.141',
      status: 403,
      rule: 'fails closed on leading zeros (octal in inet_aton)',
    },
    { forwardedFor: '58682765', status: 403, rule: 'fails closed on a single-number address' },
    { forwardedFor: `${frankfurt}:443`, status: 403, rule: 'fails closed on an address with a port' },
    { forwardedFor: `garbage, ${frankfurt}`, status: 403, rule: 'fails closed on any malformed entry' },
    { status: 403, rule: 'uses the socket address when the header is absent' },
  ]);

  sourceSuite('with TRUST_PROXY=127.0.0.1 (one proxy)', { allow: frankfurt, trustProxy: '127.0.0.1' }, [
    { forwardedFor: `9.9.9.9, ${frankfurt}`, status: 200, rule: 'uses the entry the proxy appended' },
    { forwardedFor: `${frankfurt}, 9.9.9.9`, status: 403, rule: 'ignores entries a client prepended' },
  ]);

  sourceSuite(
    'with TRUST_PROXY=10.0.0.0/8 and a client connecting directly (not through the proxies)',
    { allow: frankfurt, trustProxy: '10.0.0.0/8' },
    [{ forwardedFor: frankfurt, status: 403, rule: 'ignores the allowed address the client claims' }],
  );

  sourceSuite('with WEBHOOK_ALLOWLIST=off', { allow: 'off' }, [
    { status: 200, rule: 'accepts any source address' },
  ]);

  for (const [allow, status] of [
    ['127.0.0.1', 200],
    [frankfurt, 403],
  ] as const) {
    describe(`with ${allow} allowed, several deliveries on one kept-alive connection`, () => {
      const receiver = useReceiver({ allow });
      it(`answers each of them ${status} (the decision is the socket's, taken once)`, async () => {
        const server = createServer(receiver().app).listen(0, '127.0.0.1');
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        try {
          await new Promise((resolve) => server.once('listening', resolve));
          const { port } = server.address() as AddressInfo;
          const before = await queuedJobIds(receiver());
          const answers: { status?: number; reused: boolean }[] = [];
          for (let i = 0; i < 3; i += 1) {
            const body = channelDidCreate(`kept-alive-${allow}-${i}`);
            answers.push(
              await new Promise((resolve, reject) => {
                const req = httpRequest(
                  {
                    port,
                    host: '127.0.0.1',
                    method: 'POST',
                    path: '/webhooks',
                    agent,
                    headers: signedHeaders(body),
                  },
                  (res) => {
                    res.resume();
                    res.once('end', () => resolve({ status: res.statusCode, reused: req.reusedSocket }));
                  },
                );
                req.once('error', reject);
                req.end(body);
              }),
            );
          }
          expect(answers).to.deep.equal([
            { status, reused: false },
            { status, reused: true },
            { status, reused: true },
          ]);
          expect(await queuedJobIds(receiver())).to.have.lengthOf(before.length + (status === 200 ? 3 : 0));
        } finally {
          agent.destroy();
          server.close();
        }
      });
    });
  }

  // A target in absolute form, which HTTP/1.1 servers must take: it got 404 from the router.
  describe('with its target in absolute form (POST http://host/webhooks)', () => {
    const receiver = useReceiver({ allow: '127.0.0.1' });
    it('takes and queues the delivery', async () => {
      const server = createServer(receiver().app).listen(0, '127.0.0.1');
      try {
        await new Promise((resolve) => server.once('listening', resolve));
        const { port } = server.address() as AddressInfo;
        const before = await queuedJobIds(receiver());
        const body = channelDidCreate('absolute-form');
        const status = await new Promise<number | undefined>((resolve, reject) => {
          const req = httpRequest(
            {
              port,
              host: '127.0.0.1',
              method: 'POST',
              path: `http://recv.example:${port}/webhooks`,
              headers: signedHeaders(body),
            },
            (res) => {
              res.resume();
              res.once('end', () => resolve(res.statusCode));
            },
          );
          req.once('error', reject);
          req.end(body);
        });
        expect(status).to.equal(200);
        expect(await queuedJobIds(receiver())).to.have.lengthOf(before.length + 1);
      } finally {
        server.close();
      }
    });
  });

  describe('from a socket address in IPv4-mapped IPv6 form (dual-stack listener)', () => {
    const receiver = useReceiver({ allow: '127.0.0.1' });
    it('counts it as the IPv4 address', async () => {
      const server = createServer(receiver().app).listen(0, '::');
      try {
        await new Promise((resolve) => server.once('listening', resolve));
        const { port, family } = server.address() as AddressInfo;
        expect(family).to.equal('IPv6');
        const body = channelDidCreate('mapped-socket');
        const res = await fetch(`http://127.0.0.1:${port}/webhooks`, {
          method: 'POST',
          headers: signedHeaders(body),
          body,
        });
        expect(res.status).to.equal(200);
      } finally {
        server.close();
      }
    });
  });
});

describe('POST /webhooks with two Content-Type header lines', () => {
  const receiver = useReceiver({ allow: '127.0.0.1' });

  /** Sends a correctly signed body with `contentTypes` as separate header lines; resolves to the status. */
  async function send(contentTypes: string[], body: string): Promise<number | undefined> {
    const server = createServer(receiver().app).listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      const { port } = server.address() as AddressInfo;
      return await new Promise((resolve, reject) => {
        const req = httpRequest({ port, host: '127.0.0.1', method: 'POST', path: '/webhooks' }, (res) => {
          res.resume();
          res.once('end', () => resolve(res.statusCode));
        });
        req.once('error', reject);
        req.setHeader('x-service-signature', signedHeaders(body)['x-service-signature']!);
        // An array is written as one header line per value.
        req.setHeader('Content-Type', contentTypes);
        req.end(body);
      });
    } finally {
      server.close();
    }
  }

  for (const pair of [
    ['application/json', 'application/json'],
    ['application/json', 'text/plain'],
    ['text/plain', 'application/json'],
  ]) {
    it(`answers ${pair.join(' + ')} with 415 and queues nothing, even when both say JSON`, async () => {
      const before = await queuedJobIds(receiver());
      expect(await send(pair, channelDidCreate(`two-types-${pair.join('-')}`))).to.equal(415);
      expect(await queuedJobIds(receiver())).to.deep.equal(before);
    });
  }

  it('accepts the same delivery with one Content-Type line (the control)', async () => {
    const before = await queuedJobIds(receiver());
    expect(await send(['application/json'], channelDidCreate('one-type'))).to.equal(200);
    expect(await queuedJobIds(receiver())).to.have.lengthOf(before.length + 1);
  });
});

// A Standard Webhooks sender that rotates its secret may send each signature on a line of its own;
// whichever line carries the one that matches, the delivery is accepted.
describe('POST /webhooks with two webhook-signature header lines', () => {
  const receiver = useReceiver({ secrets: `sw=${testStandardSecret}`, schemes: 'sw=standard-webhooks' });
  const retired = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;

  /** Sends `body` with `signatures` as separate webhook-signature lines; resolves to the status. */
  async function send(body: string, id: string, signatures: (headers: Record<string, string>) => string[]) {
    const headers = standardHeaders(body, { id });
    const server = createServer(receiver().app).listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      const { port } = server.address() as AddressInfo;
      return await new Promise<number | undefined>((resolve, reject) => {
        const req = httpRequest({ port, host: '127.0.0.1', method: 'POST', path: '/webhooks' }, (res) => {
          res.resume();
          res.once('end', () => resolve(res.statusCode));
        });
        req.once('error', reject);
        for (const [name, value] of Object.entries(headers)) req.setHeader(name, value);
        // An array is written as one header line per value.
        req.setHeader('webhook-signature', signatures(headers));
        req.end(body);
      });
    } finally {
      server.close();
    }
  }

  for (const order of ['current first', 'retired first'] as const) {
    it(`accepts and queues a delivery signed with the current and a retired secret, ${order}`, async () => {
      const body = standardEvent(`two-lines-${order}`);
      const id = `msg_two_lines_${order.replace(' ', '_')}`;
      const status = await send(body, id, (headers) => {
        const timestamp = Number(headers['webhook-timestamp']);
        const current = headers['webhook-signature']!;
        const old = standardSignatureHeaders(body, retired, { id, timestamp })['webhook-signature'];
        return order === 'current first' ? [current, old] : [old, current];
      });
      expect(status).to.equal(200);
      expect(await queuedJobIds(receiver())).to.include(messageKey('sw', id));
    });
  }

  it('refuses two lines signed with secrets it does not know (the control)', async () => {
    const body = standardEvent('two-lines-unknown');
    const id = 'msg_two_lines_unknown';
    const status = await send(body, id, (headers) => {
      const timestamp = Number(headers['webhook-timestamp']);
      const old = standardSignatureHeaders(body, retired, { id, timestamp })['webhook-signature'];
      return [old, old];
    });
    expect(status).to.equal(401);
  });
});

describe('POST /webhooks with a webhook on its own header and a Standard Webhooks webhook', () => {
  const partnerSecret = 'partner-secret-do-not-use';
  const options: ReceiverOptions = {
    secrets: `eu=${testSecret},partner=${partnerSecret},sw=${testStandardSecret}`,
    schemes: 'sw=standard-webhooks',
    headers: 'partner=X-Partner-Signature',
  };
  const receiver = useReceiver(options);
  const post = (body: string, headers: Record<string, string>) =>
    request(receiver().app).post('/webhooks').set(headers).send(body);
  const now = () => Math.floor(Date.now() / 1000);

  describe('a Standard Webhooks delivery', () => {
    it('responds 200 {} and queues one job keyed by its webhook-id, the payload’s type as the event, the whole payload as data', async () => {
      const body = standardEvent('http-1');
      const res = await post(body, standardHeaders(body, { id: 'msg_http_1' })).expect(200);
      expect(res.body).to.deep.equal({});
      const job = await receiver().queue.queue.getJob(messageKey('sw', 'msg_http_1'));
      expect(job?.data).to.deep.include({
        dedupeKey: messageKey('sw', 'msg_http_1'),
        webhook: 'sw',
        scheme: 'standard-webhooks',
        event: 'invoice.paid',
        data: JSON.parse(body),
      });
    });

    it('queues a retry of the same message (new timestamp and signature) once, counting the duplicate', async () => {
      const body = standardEvent('http-retry');
      await post(body, standardHeaders(body, { id: 'msg_http_retry', timestamp: now() - 30 })).expect(200);
      const before = await queuedJobIds(receiver());
      const res = await post(body, standardHeaders(body, { id: 'msg_http_retry' })).expect(200);
      expect(res.body).to.deep.equal({});
      expect(await queuedJobIds(receiver())).to.deep.equal(before);
      expect(await receiver().registry.metrics()).to.match(
        /webhook_dropped_total\{reason="duplicate"[^}]*\} 1/,
      );
    });

    it('queues two messages with identical bodies but different ids as two events', async () => {
      const body = standardEvent('http-twice');
      await post(body, standardHeaders(body, { id: 'msg_http_twice_1' })).expect(200);
      await post(body, standardHeaders(body, { id: 'msg_http_twice_2' })).expect(200);
      const ids = await queuedJobIds(receiver());
      expect(ids).to.include.members([
        messageKey('sw', 'msg_http_twice_1'),
        messageKey('sw', 'msg_http_twice_2'),
      ]);
    });

    it('is dropped as the legacy duplicate when it carries x-legacy-signature, as configured', async () => {
      const body = standardEvent('http-legacy');
      const before = await queuedJobIds(receiver());
      await post(body, { ...standardHeaders(body), 'x-legacy-signature': 'x' }).expect(200);
      expect(await queuedJobIds(receiver())).to.deep.equal(before);
    });

    const body = standardEvent('http-refused');
    for (const [rule, headers, message] of [
      [
        'a stale timestamp',
        () => standardHeaders(body, { timestamp: now() - 301 }),
        'webhook-timestamp is more than 300 s in the past',
      ],
      [
        'a future timestamp',
        // Ten seconds past the tolerance: the receiver counts whole seconds too, so one second past
        // it was accepted whenever the request crossed a second's boundary (age exactly -300).
        () => standardHeaders(body, { timestamp: now() + 310 }),
        'webhook-timestamp is more than 300 s in the future',
      ],
      ['no webhook-id', () => ({ ...standardHeaders(body), 'webhook-id': '' }), 'webhook-id is missing'],
      [
        'no webhook-timestamp',
        () => ({ ...standardHeaders(body), 'webhook-timestamp': '' }),
        'webhook-timestamp is missing',
      ],
      [
        'no webhook-signature',
        () => ({ ...standardHeaders(body), 'webhook-signature': '' }),
        'webhook-signature is missing',
      ],
      [
        'a signature for another id',
        () => ({ ...standardHeaders(body, { id: 'msg_a' }), 'webhook-id': 'msg_b' }),
        'webhook-signature is not valid',
      ],
    ] as const) {
      it(`with ${rule}: responds 401 with the JSON error naming it and queues nothing`, async () => {
        const before = await queuedJobIds(receiver());
        const res = await post(body, headers()).expect(401);
        expect(res.body).to.deep.equal({ status: 'error', code: 401000, message });
        expect(await queuedJobIds(receiver())).to.deep.equal(before);
      });
    }
  });

  describe('a platform delivery', () => {
    it('of webhook partner is accepted in X-Partner-Signature', async () => {
      const body = channelDidCreate('http-partner');
      await post(body, {
        'content-type': 'application/json',
        'x-partner-signature': sign(body, partnerSecret),
      }).expect(200);
      const job = await receiver().queue.queue.getJob(createHash('sha256').update(body).digest('hex'));
      // The scheme goes with the job: the tray applies no Standard Webhooks delivery.
      expect(job?.data).to.deep.include({ webhook: 'partner', scheme: 'platform' });
    });

    // The header only moves the platform scheme's signature: its value is still Base64 of the
    // HMAC-SHA256 of the body, never the `sha256=<hex>` some other senders write (docs/receiver.md).
    it('of webhook partner with the same HMAC written as sha256=<hex> is refused', async () => {
      const body = channelDidCreate('http-partner-hex');
      const hex = createHmac('sha256', partnerSecret).update(body).digest('hex');
      const res = await post(body, {
        'content-type': 'application/json',
        'x-partner-signature': `sha256=${hex}`,
      }).expect(401);
      expect(res.body.message).to.equal('x-partner-signature is not valid');
    });

    it('of webhook eu is still accepted in x-service-signature', async () => {
      const body = channelDidCreate('http-eu');
      await post(body, signedHeaders(body)).expect(200);
    });

    it('without any signature header is refused naming the headers it could carry', async () => {
      const body = channelDidCreate('http-none');
      const res = await post(body, { 'content-type': 'application/json' }).expect(401);
      expect(res.body.message).to.equal(
        'x-service-signature or x-partner-signature or webhook-signature is missing',
      );
    });
  });

  describe('from a source outside the allowlist', () => {
    const outside = useReceiver({ ...options, allow: frankfurt });

    it('a valid Standard Webhooks delivery is refused with 403 before its signature is looked at', async () => {
      const body = standardEvent('http-outside');
      const res = await request(outside().app)
        .post('/webhooks')
        .set(standardHeaders(body))
        .send(body)
        .expect(403);
      expect(res.body.code).to.equal(403000);
    });
  });
});

describe('POST /webhooks when the handler itself fails (a bug, not a refusal)', () => {
  const receiver = useReceiver();

  it('responds 500 with the JSON error shape and helmet headers, and stores nothing', async () => {
    const securityHeaders = helmetHeaders();
    const logged: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logged.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const registry = createMetricsRegistry('receiver', false);
    const handler = createWebhookHandler({
      settings: testSettings(),
      enqueue: () => Promise.reject(new Error('not reached')),
      spool: receiver().spool,
      metrics: createReceiverMetrics(registry, () => 0),
      logger: createLogger({ name: 'test', level: 'error', destination }),
      securityHeaders,
      now: () => {
        throw new Error('the clock failed');
      },
    });
    // Without Express around it, nothing else would answer the request (or catch the rejection).
    const listener: RequestListener = (req, res) => void handler(req, res);
    const body = channelDidCreate('handler-failed');
    const res = await request(listener).post('/webhooks').set(signedHeaders(body)).send(body).expect(500);
    expect(res.body).to.deep.equal({ status: 'error', code: 500000, message: 'internal error' });
    for (const [name, value] of securityHeaders) expect(res.headers[name]).to.equal(value);
    expect(receiver().spool.depth()).to.equal(0);
    // The answer names the one log line an operator looks for.
    expect(res.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
    expect(logged.map((line) => [line.msg, line.requestId])).to.deep.equal([
      ['internal error', res.headers['x-request-id']],
    ]);
    // And the metrics show it: a 500 on every delivery is what an alert on them must see.
    expect(await registry.getSingleMetricAsString('webhook_rejected_total')).to.match(
      /webhook_rejected_total\{reason="internal"[^}]*\} 1/,
    );
    expect(await registry.getSingleMetricAsString('webhook_ack_duration_seconds')).to.match(
      /webhook_ack_duration_seconds_count\{[^}]*status="500"[^}]*\} 1/,
    );
  });
});

// A secret rotated on one side only refuses every delivery: at the default log level an operator
// must see it without a metrics alert, and a flood of refusals must not flood the log.
describe('POST /webhooks refused for the same reason over and over', () => {
  const receiver = useReceiver();

  it('logs the first at warn, then one line a minute per reason with how many went unlogged', async () => {
    const logged: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logged.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    let clock = Date.parse('2026-12-04T10:00:00Z');
    const handler = createWebhookHandler({
      settings: testSettings(),
      enqueue: () => Promise.reject(new Error('not reached')),
      spool: receiver().spool,
      metrics: createReceiverMetrics(createMetricsRegistry('receiver', false), () => 0),
      logger: createLogger({ name: 'test', level: 'info', destination }),
      securityHeaders: helmetHeaders(),
      now: () => new Date(clock),
    });
    const listener: RequestListener = (req, res) => void handler(req, res);
    const refused = async () => {
      const body = channelDidCreate(`refused-${(counter += 1)}`);
      await request(listener)
        .post('/webhooks')
        .set({ ...signedHeaders(body), 'x-service-signature': 'sha256=' + '0'.repeat(64) })
        .send(body)
        .expect(401);
    };
    for (let i = 0; i < 3; i++) await refused();
    clock += 59_000;
    await refused();
    clock += 1_000;
    await refused();
    const lines = logged.map((line) => [line.level, line.reason, line.unlogged]);
    expect(lines).to.deep.equal([
      [40, 'bad_signature', undefined],
      [40, 'bad_signature', 3],
    ]);
    expect(logged[0]).to.not.have.property('signature');
    expect(JSON.stringify(logged)).to.not.include('0'.repeat(64));
  });

  // The platform sending from a new egress range, or a balancer writing `ip:port` entries, refuses
  // every delivery 403: the line must name the address to allow, or the header to fix, which a
  // scanner's refusal does not tell apart otherwise.
  it('names the source address and the forwarded header of a delivery refused for its address', async () => {
    const logged: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logged.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const handler = createWebhookHandler({
      settings: testSettings({ allow: '10.9.0.0/16', trustProxy: '127.0.0.1' }),
      enqueue: () => Promise.reject(new Error('not reached')),
      spool: receiver().spool,
      metrics: createReceiverMetrics(createMetricsRegistry('receiver', false), () => 0),
      logger: createLogger({ name: 'test', level: 'info', destination }),
      securityHeaders: helmetHeaders(),
    });
    const listener: RequestListener = (req, res) => void handler(req, res);
    const body = channelDidCreate(`refused-${(counter += 1)}`);
    await request(listener)
      .post('/webhooks')
      .set({ ...signedHeaders(body), 'x-forwarded-for': '203.0.113.9:443' })
      .send(body)
      .expect(403);
    expect(logged).to.have.lengthOf(1);
    expect(logged[0]).to.include({
      reason: 'forbidden',
      remoteAddress: '127.0.0.1',
      forwardedFor: '203.0.113.9:443',
    });
  });
});
