import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { dirname, join, normalize } from 'node:path';
import {
  createWebhookVerifier,
  type RequestHeaders,
  type VerifierRules,
} from '../../../receiver/decision/create-webhook-verifier.ts';
import { messageKey } from '../../../receiver/message-key.ts';
import { loadReceiverConfig } from '../../../receiver/receiver-config.ts';
import { readRepositoryFile } from '../../support/repository-files.ts';
import {
  channelDidCreate,
  sign,
  standardEvent,
  standardHeaders,
  testSecret,
  testStandardSecret,
} from '../support/signed-request.ts';

const hubSecret = 'hub-secret-do-not-use';
const now = 1_790_000_000;

/** Three webhooks as an operator would configure them: the platform's, one on its own header, one Standard Webhooks. */
const rules = (change: Partial<VerifierRules> = {}): VerifierRules => ({
  secrets: loadReceiverConfig({
    WEBHOOK_SECRETS: `eu=${testSecret},gh=${hubSecret},sw=${testStandardSecret}`,
    WEBHOOK_SIGNATURE_SCHEME: 'sw=standard-webhooks',
    WEBHOOK_SIGNATURE_HEADER: 'gh=X-Hub-Signature',
  }).WEBHOOK_SECRETS,
  now: () => now * 1000,
  ...change,
});

const verify = (body: string, headers: RequestHeaders, change: Partial<VerifierRules> = {}) =>
  createWebhookVerifier(rules(change))(Buffer.from(body), headers);
const sha256 = (body: string) => createHash('sha256').update(body).digest('hex');
const standard = (body: string, change: { id?: string; timestamp?: number; secret?: string } = {}) =>
  standardHeaders(body, { timestamp: now, ...change });
const unauthorized = (message: string) => ({
  verdict: 'refuse',
  reason: 'bad_signature',
  kind: 'UNAUTHORIZED',
  message,
});

describe('createWebhookVerifier (the receiver’s verification core, without a server)', () => {
  describe('a platform webhook on x-service-signature', () => {
    it('accepts its delivery, keyed by the body’s SHA-256', () => {
      const body = channelDidCreate('verifier-1');
      expect(verify(body, { 'x-service-signature': sign(body) })).to.deep.include({
        verdict: 'accept',
        webhook: 'eu',
        scheme: 'platform',
        dedupeKey: sha256(body),
      });
    });
  });

  describe('a platform webhook on its own header (WEBHOOK_SIGNATURE_HEADER=gh=X-Hub-Signature)', () => {
    const body = channelDidCreate('verifier-gh');

    it('accepts its signature in that header', () => {
      expect(verify(body, { 'x-hub-signature': sign(body, hubSecret) })).to.deep.include({
        verdict: 'accept',
        webhook: 'gh',
        scheme: 'platform',
      });
    });

    it('refuses its signature in another webhook’s header', () => {
      expect(verify(body, { 'x-service-signature': sign(body, hubSecret) })).to.deep.equal(
        unauthorized('x-service-signature is not valid'),
      );
    });
  });

  describe('a Standard Webhooks webhook', () => {
    const body = standardEvent('verifier-sw');

    it('accepts its delivery: the event is the payload’s type, the data the whole payload, the key from webhook-id', () => {
      const verdict = verify(body, standard(body, { id: 'msg_1' }));
      expect(verdict).to.deep.equal({
        verdict: 'accept',
        webhook: 'sw',
        scheme: 'standard-webhooks',
        envelope: { event: 'invoice.paid', dataJson: body },
        dedupeKey: messageKey('sw', 'msg_1'),
      });
    });

    it('keys a retry of the same message alike, though its timestamp and signature differ', () => {
      const first = verify(body, standard(body, { id: 'msg_2', timestamp: now - 60 }));
      const retry = verify(body, standard(body, { id: 'msg_2', timestamp: now }));
      expect(first.verdict === 'accept' && first.dedupeKey).to.equal(
        retry.verdict === 'accept' && retry.dedupeKey,
      );
    });

    for (const [rule, headers, message] of [
      [
        'a stale timestamp',
        standard(body, { timestamp: now - 301 }),
        'webhook-timestamp is more than 300 s in the past',
      ],
      [
        'a future timestamp',
        standard(body, { timestamp: now + 301 }),
        'webhook-timestamp is more than 300 s in the future',
      ],
      ['a missing id', { ...standard(body), 'webhook-id': undefined }, 'webhook-id is missing'],
      [
        'a missing timestamp',
        { ...standard(body), 'webhook-timestamp': undefined },
        'webhook-timestamp is missing',
      ],
      [
        'a missing signature',
        { ...standard(body), 'webhook-signature': undefined },
        'webhook-signature is missing',
      ],
      [
        'a signature for another id',
        { ...standard(body, { id: 'msg_a' }), 'webhook-id': 'msg_b' },
        'webhook-signature is not valid',
      ],
      [
        'a signature under another secret',
        standard(body, { secret: `whsec_${Buffer.alloc(24, 5).toString('base64')}` }),
        'webhook-signature is not valid',
      ],
    ] as const) {
      it(`refuses ${rule} with 401, naming it`, () => {
        expect(verify(body, headers)).to.deep.equal(unauthorized(message));
      });
    }

    it('keeps the configured tolerance (WEBHOOK_TOLERANCE_SECONDS)', () => {
      const headers = standard(body, { timestamp: now - 61 });
      expect(verify(body, headers, { timestampToleranceSeconds: 60 })).to.deep.equal(
        unauthorized('webhook-timestamp is more than 60 s in the past'),
      );
      expect(verify(body, headers).verdict).to.equal('accept');
    });

    it('refuses a payload without a string type (400): the platform’s envelope is not its envelope', () => {
      const platformBody = channelDidCreate('verifier-sw-platform');
      expect(verify(platformBody, standard(platformBody))).to.deep.include({
        verdict: 'refuse',
        reason: 'bad_envelope',
        kind: 'BAD_REQUEST',
        message: '"type" must be a non-empty string of at most 200 characters',
      });
    });
  });

  describe('the platform’s envelope stays required of platform webhooks', () => {
    it('refuses a Standard Webhooks payload signed the platform’s way (400)', () => {
      const body = standardEvent('verifier-eu-standard');
      expect(verify(body, { 'x-service-signature': sign(body) })).to.deep.include({
        reason: 'bad_envelope',
        message: '"event" must be a non-empty string of at most 200 characters',
      });
    });
  });

  describe('a delivery validly signed for several webhooks', () => {
    // A body both envelopes take, so only the order decides the sender (and with it the dedupe key).
    const body = JSON.stringify({
      event: 'post.didCreate',
      type: 'invoice.paid',
      timestamp: '2026-11-20T09:00:00.000Z',
      data: { invoiceId: 'both-1' },
    });
    const usSecret = 'us-secret-do-not-use';
    const headers = {
      ...standard(body, { id: 'msg_both' }),
      'x-service-signature': sign(body, usSecret),
      'x-hub-signature': sign(body, hubSecret),
    };
    const senderWith = (secrets: string, schemes: string, signatureHeaders: string) =>
      createWebhookVerifier({
        secrets: loadReceiverConfig({
          WEBHOOK_SECRETS: secrets,
          WEBHOOK_SIGNATURE_SCHEME: schemes,
          WEBHOOK_SIGNATURE_HEADER: signatureHeaders,
        }).WEBHOOK_SECRETS,
        now: () => now * 1000,
      })(Buffer.from(body), headers);

    it('is the first of WEBHOOK_SECRETS whose signature matches, whatever the schemes', () => {
      const standardFirst = senderWith(
        `sw=${testStandardSecret},us=${usSecret}`,
        'sw=standard-webhooks',
        'us=x-service-signature',
      );
      expect(standardFirst).to.deep.include({ verdict: 'accept', webhook: 'sw' });
      expect(standardFirst).to.have.property('dedupeKey', messageKey('sw', 'msg_both'));
      expect(
        senderWith(
          `us=${usSecret},sw=${testStandardSecret}`,
          'sw=standard-webhooks',
          'us=x-service-signature',
        ),
      ).to.deep.include({ verdict: 'accept', webhook: 'us', dedupeKey: sha256(body) });
    });

    it('is the first of WEBHOOK_SECRETS whose signature matches, whatever the headers', () => {
      // eu and us share x-service-signature, gh (configured between them) has its own header.
      expect(
        senderWith(`eu=${testSecret},gh=${hubSecret},us=${usSecret}`, 'platform', 'gh=X-Hub-Signature'),
      ).to.deep.include({ verdict: 'accept', webhook: 'gh' });
    });
  });

  describe('a delivery with no signature header of any configured webhook', () => {
    it('is refused naming every header it could have carried', () => {
      expect(verify(channelDidCreate(), { 'content-type': 'application/json' })).to.deep.equal(
        unauthorized('x-service-signature or x-hub-signature or webhook-signature is missing'),
      );
    });
  });

  describe('imported on its own', () => {
    it('loads no package at all, only Node built-ins and files of receiver/ and shared/', () => {
      const packages = new Set<string>();
      const seen = new Set<string>();
      // What runs: static imports and re-exports except `import type` (erased), bare imports, import().
      const loaded =
        /^(?:import|export)(?!\s+type\b)[^'"]*?\bfrom\s*['"]([^'"]+)['"]|^import\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]/gm;
      const visit = (file: string) => {
        if (seen.has(file)) return;
        seen.add(file);
        for (const match of readRepositoryFile(file).matchAll(loaded)) {
          const specifier = match[1] ?? match[2] ?? match[3] ?? '';
          if (specifier.startsWith('.'))
            visit(
              normalize(join(dirname(file), specifier))
                .split('\\')
                .join('/'),
            );
          else if (!specifier.startsWith('node:')) packages.add(specifier);
        }
      };
      visit('receiver/decision/create-webhook-verifier.ts');
      expect(seen.size).to.be.greaterThan(5);
      expect([...packages]).to.deep.equal([]);
      expect([...seen].filter((file) => !/^(receiver|shared)\//.test(file))).to.deep.equal([]);
    });
  });
});
