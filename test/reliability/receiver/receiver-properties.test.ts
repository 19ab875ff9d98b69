import { expect } from 'chai';
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import request from 'supertest';
import { httpPost } from '../support/raw-http.ts';
import { reportFigures, tally } from '../support/report-figures.ts';
import { dedupeKey } from '../../../receiver/dedupe-key.ts';
import { channelDidCreate, sign, signedHeaders } from '../../receiver/support/signed-request.ts';
import { queuedJob, queueFootprint, useListeningReceiver } from '../support/listening-receiver.ts';

/** Runs per property: enough to find header/body edge cases, cheap enough for a shared 2-core box. */
const numRuns = Number(process.env.RELIABILITY_RUNS ?? 1000);
const frankfurt = '3.127.106.141';

const printable = (max: number) => fc.stringMatching(new RegExp(`^[\\x20-\\x7e]{0,${max}}$`));
// Weighted so most requests get past the content-type check to the signature (and Node's own 417
// for an odd Expect header stays rare).
const headerName = fc.oneof(
  { arbitrary: fc.stringMatching(/^x-[a-z0-9-]{1,20}$/), weight: 8 },
  {
    arbitrary: fc.constantFrom('accept', 'user-agent', 'x-forwarded-for', 'forwarded', 'x-real-ip', 'cookie'),
    weight: 3,
  },
  { arbitrary: fc.constantFrom('expect', 'x-legacy-signature'), weight: 1 },
);
const contentType = fc.oneof(
  { arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8'), weight: 6 },
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'application/json; charset=latin1',
    'application/json;;',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
  ),
  printable(60),
);
/** Signatures that can never match: absent, garbage, well-formed random digests, other bodies'. */
const wrongSignature = fc.oneof(
  fc.constant(undefined),
  printable(80),
  fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => Buffer.from(bytes).toString('base64')),
  fc.string().map((other) => sign(`${other}#not-the-body`)),
  fc.constant(`${sign('x')}, ${sign('y')}`),
);
const body = fc.oneof(
  fc.uint8Array({ maxLength: 2_048 }).map((bytes) => Buffer.from(bytes)),
  fc.string({ maxLength: 500 }).map((text) => Buffer.from(text)),
  fc.jsonValue({ maxDepth: 6 }).map((value) => Buffer.from(JSON.stringify(value) ?? 'null')),
  fc
    .record({ event: fc.string(), data: fc.jsonValue({ maxDepth: 4 }) })
    .map((v) => Buffer.from(JSON.stringify(v))),
  fc.nat(1_000).map((n) => Buffer.from(channelDidCreate(`prop-${n}`))),
);
const extraHeaders = fc.dictionary(headerName, printable(100), { maxKeys: 6 });

/** Object keys that have bitten JavaScript parsers, mixed with arbitrary ones. */
const hostileKey = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', ''),
  fc.string({ maxLength: 12 }),
);
const hostileObject = fc.dictionary(
  hostileKey,
  fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.dictionary(hostileKey, fc.jsonValue({ maxDepth: 2 }))),
  { maxKeys: 8 },
);

function expectPrototypesClean() {
  expect(Object.keys(Object.prototype), 'Object.prototype keys').to.deep.equal([]);
  expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
}

describe('receiver properties (fast-check, real Redis queue)', function () {
  this.timeout(180_000);

  describe('arbitrary bodies and headers without a valid signature', () => {
    const listening = useListeningReceiver({ allow: 'off' });
    it(`never answer 5xx or 200-with-a-job, never queue or mark anything, never crash (${numRuns} runs)`, async () => {
      const statuses: number[] = [];
      await fc.assert(
        fc.asyncProperty(
          body,
          contentType,
          wrongSignature,
          extraHeaders,
          async (raw, type, signature, extra) => {
            const headers: Record<string, string> = { ...extra, 'content-type': type };
            if (signature !== undefined) headers['x-service-signature'] = signature;
            const res = await httpPost(listening().port, '/webhooks', headers, raw);
            statuses.push(res.status);
            expect(res.status, `status for ${JSON.stringify(headers)}`).to.be.below(500);
            if (res.status === 200) {
              // Only the legacy duplicate is acknowledged without a signature, and it is never queued.
              expect(Object.keys(extra)).to.include('x-legacy-signature');
            } else if (res.status !== 417) {
              // 417 is Node's own answer to an Expect header other than 100-continue, before the app.
              expect(res.json, `answer ${res.status}`).to.include.keys(['status', 'code', 'message']);
            }
          },
        ),
        { numRuns },
      );
      const footprint = await queueFootprint(listening().receiver);
      reportFigures('receiver unsigned arbitrary input', {
        requests: statuses.length,
        statuses: tally(statuses),
        queued: footprint.jobs.length,
        dedupeMarks: footprint.marks.length,
      });
      expect(footprint).to.deep.equal({ jobs: [], marks: [] });
      await request(listening().server).get('/healthz').expect(200);
      expectPrototypesClean();
    });
  });

  describe('arbitrary signed bodies', () => {
    const listening = useListeningReceiver({ allow: 'off' });
    it(`answer 200 and queue exactly the valid envelopes (data kept verbatim, __proto__ keys as data), else 400 (${numRuns} runs)`, async () => {
      const envelope = fc.oneof(
        fc.record({ event: fc.string({ minLength: 1, maxLength: 40 }), data: hostileObject }),
        fc.record({ event: fc.oneof(fc.string(), fc.integer(), fc.constant(null)), data: fc.jsonValue() }),
        fc.jsonValue({ maxDepth: 4 }),
      );
      const expectedJobs = new Set<string>();
      const statuses: number[] = [];
      await fc.assert(
        fc.asyncProperty(envelope, fc.string({ maxLength: 8 }), async (value, salt) => {
          // Whitespace around the JSON changes the bytes, so a redelivery and a new body both occur.
          const text = JSON.stringify(value) ?? 'null';
          const raw = Buffer.from(salt.length % 2 === 0 ? text : ` ${text} `);
          const res = await httpPost(listening().port, '/webhooks', signedHeaders(raw), raw);
          statuses.push(res.status);
          const parsed = JSON.parse(raw.toString()) as unknown;
          const valid =
            typeof parsed === 'object' &&
            parsed !== null &&
            !Array.isArray(parsed) &&
            typeof (parsed as { event?: unknown }).event === 'string' &&
            (parsed as { event: string }).event.length >= 1 &&
            (parsed as { event: string }).event.length <= 200 &&
            typeof (parsed as { data?: unknown }).data === 'object' &&
            (parsed as { data?: unknown }).data !== null &&
            !Array.isArray((parsed as { data?: unknown }).data);
          if (!valid) {
            expect(res.status, raw.toString()).to.equal(400);
            return;
          }
          expect(res.status, raw.toString()).to.equal(200);
          const id = dedupeKey(raw);
          expectedJobs.add(id);
          const job = await queuedJob(listening().receiver, id);
          expect(job, `job for ${raw.toString()}`).to.not.equal(null);
          expect(JSON.stringify(job!.data.data)).to.equal(JSON.stringify((parsed as { data: unknown }).data));
          expect(job!.data.event).to.equal((parsed as { event: string }).event);
          expectPrototypesClean();
        }),
        { numRuns },
      );
      // Exactly the accepted bodies, once each, and nothing else.
      const { jobs } = await queueFootprint(listening().receiver);
      reportFigures('receiver signed arbitrary JSON', {
        requests: statuses.length,
        statuses: tally(statuses),
        distinctValidBodies: expectedJobs.size,
        queued: jobs.length,
      });
      expect(jobs).to.deep.equal([...expectedJobs].sort());
    });
  });

  describe('arbitrary X-Forwarded-For with TRUST_PROXY=loopback and only a Frankfurt address allowed', () => {
    const listening = useListeningReceiver({ allow: frankfurt, trustProxy: 'loopback' });
    const canonicalIpv4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
    const entry = fc.oneof(
      fc.constant(frankfurt),
      fc.constant(`::ffff:${frankfurt}`),
      fc.constantFrom(
        '003.127.106.141',
        '58682765',
        '0x37f6a8d',
        '3.127.27277',
        `${frankfurt}:443`,
        `[${frankfurt}]`,
      ),
      fc.constantFrom('127.0.0.1', '::1', '127.0.0.2'),
      fc.ipV4(),
      fc.ipV4Extended(),
      fc.ipV6(),
      printable(20).filter((text) => !text.includes(',')),
    );
    const loopbackHop = fc.constantFrom('127.0.0.1', '::1', '127.0.0.2');
    // About a quarter of the chains end (before their loopback hops) at the allowed address, so
    // the runs show acceptance as well as refusal.
    const chain = fc.oneof(
      { arbitrary: fc.array(entry, { maxLength: 5 }), weight: 3 },
      {
        arbitrary: fc
          .tuple(
            fc.array(fc.oneof(fc.ipV4(), fc.ipV6()), { maxLength: 2 }),
            fc.constantFrom(frankfurt, `::ffff:${frankfurt}`),
            fc.array(loopbackHop, { maxLength: 2 }),
          )
          .map(([before, client, proxies]) => [...before, client, ...proxies]),
        weight: 1,
      },
    );
    it(`answer 200 exactly when the nearest untrusted hop is the allowed address, else 403 with nothing queued (${numRuns} runs)`, async () => {
      const statuses: number[] = [];
      await fc.assert(
        fc.asyncProperty(chain, async (entries) => {
          const raw = Buffer.from(channelDidCreate(`xff-${randomBytes(8).toString('hex')}`));
          const headers: Record<string, string> = signedHeaders(raw);
          if (entries.length > 0) headers['x-forwarded-for'] = entries.join(', ');
          const res = await httpPost(listening().port, '/webhooks', headers, raw);
          statuses.push(res.status);
          // Independent oracle (Node's own address parser, not the receiver's): every entry is a
          // plain address (dotted quad in canonical form, or IPv6 without brackets or a zone), and
          // skipping loopback hops from the right lands on Frankfurt (plain or IPv4-mapped).
          const trimmed = entries.map((text) => text.trim());
          const wellFormed = (text: string) =>
            isIP(text) === 4 ? canonicalIpv4.test(text) : isIP(text) === 6 && !/[[\]%]/.test(text);
          const loopback = (text: string) => text === '::1' || text.startsWith('127.');
          const client = [...trimmed].reverse().find((text) => !loopback(text));
          const allowed =
            trimmed.length > 0 &&
            trimmed.every(wellFormed) &&
            [frankfurt, `::ffff:${frankfurt}`, '::ffff:37f:6a8d'].includes(client?.toLowerCase() ?? '');
          expect(res.status, `X-Forwarded-For: ${entries.join(', ')}`).to.equal(allowed ? 200 : 403);
          const job = await queuedJob(listening().receiver, dedupeKey(raw));
          expect(job !== null, 'queued iff accepted').to.equal(res.status === 200);
        }),
        { numRuns },
      );
      const { jobs } = await queueFootprint(listening().receiver);
      reportFigures('receiver arbitrary X-Forwarded-For', {
        requests: statuses.length,
        statuses: tally(statuses),
        queued: jobs.length,
      });
      expect(jobs).to.have.lengthOf(statuses.filter((status) => status === 200).length);
      expect(statuses.filter((status) => status === 200).length, 'some runs accepted').to.be.above(0);
    });
  });
});
