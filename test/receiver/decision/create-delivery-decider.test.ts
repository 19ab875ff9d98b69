import { expect } from 'chai';
import { parseTrustProxy } from '../../../receiver/address/parse-trust-proxy.ts';
import { parseCidrList } from '../../../shared/address/parse-cidr.ts';
import {
  createDeliveryDecider,
  type DeliveryRules,
} from '../../../receiver/decision/create-delivery-decider.ts';
import { decideDelivery, type BufferedDelivery } from '../../../receiver/decision/decide-delivery.ts';
import { parseWebhookSecrets } from '../../../receiver/signature/parse-webhook-secrets.ts';
import { channelDidCreate, sign, testSecret } from '../support/signed-request.ts';

// The platform is simulated by a regional address (Frankfurt); anything else is outside the allowlist.
const platform = '3.127.106.141';
const stranger = '198.51.100.7';

const rules: DeliveryRules = {
  allowlist: parseCidrList(platform),
  trustProxy: { kind: 'none' },
  secrets: parseWebhookSecrets(`default=${testSecret}`),
};

/**
 * A valid signed delivery from the platform; each test changes one thing. Headers are given as
 * Node gives them: lowercase names in `headers`, the lines as sent in `rawHeaders`.
 */
function delivery(
  change: { from?: string; body?: string; headers?: Record<string, string>; without?: string[] } = {},
): BufferedDelivery {
  const body = change.body ?? channelDidCreate('decider');
  const without = new Set(change.without);
  const headers = Object.fromEntries(
    Object.entries({
      'content-type': 'application/json',
      'x-service-signature': sign(body),
      ...change.headers,
    }).filter(([name]) => !without.has(name)),
  );
  return {
    socket: { remoteAddress: change.from ?? platform },
    headers,
    rawHeaders: Object.entries(headers).flat(),
    body: Buffer.from(body),
  };
}

const decide = (request: BufferedDelivery) => decideDelivery(createDeliveryDecider(rules), request);

describe('the receiver decision (receiver/decision), without a server', () => {
  describe('with a valid signed delivery from an allowed address', () => {
    it('accepts it, naming the webhook whose secret signed it and the event', () => {
      const verdict = decide(delivery());
      expect(verdict.verdict).to.equal('accept');
      if (verdict.verdict !== 'accept') return;
      expect(verdict.webhook).to.equal('default');
      expect(verdict.envelope.event).to.equal('channel.didCreate');
    });
  });

  describe('order of checks: the first that fails decides', () => {
    it('1. refuses a source outside the allowlist before anything else (403), even a legacy duplicate', () => {
      const verdict = decide(
        delivery({ from: stranger, headers: { 'x-legacy-signature': 'x', 'content-type': 'text/plain' } }),
      );
      expect(verdict).to.include({ verdict: 'refuse', reason: 'forbidden', kind: 'FORBIDDEN' });
    });

    it('2. drops the legacy duplicate before looking at its content type or signature', () => {
      const verdict = decide(
        delivery({
          headers: { 'x-legacy-signature': 'x', 'content-type': 'text/plain' },
          without: ['x-service-signature'],
        }),
      );
      expect(verdict).to.deep.equal({ verdict: 'drop-legacy' });
    });

    it('3. checks the content type before the signature (415, not 401)', () => {
      const verdict = decide(
        delivery({ headers: { 'content-type': 'text/plain', 'x-service-signature': 'bad' } }),
      );
      expect(verdict).to.include({ reason: 'unsupported_media_type', kind: 'UNSUPPORTED_MEDIA_TYPE' });
    });

    it('3. refuses two Content-Type lines, even if both say JSON (a proxy may have read the other)', () => {
      const request = delivery();
      const twice = { ...request, rawHeaders: [...request.rawHeaders, 'Content-Type', 'application/json'] };
      expect(decide(twice)).to.include({ reason: 'unsupported_media_type' });
    });

    // A compressed body is not the bytes the signature covers; the platform sends none.
    for (const encoding of ['gzip', 'deflate, identity', 'br']) {
      it(`3. refuses Content-Encoding ${encoding} before the body is read (415), not after`, () => {
        expect(decide(delivery({ headers: { 'content-encoding': encoding } }))).to.deep.equal({
          verdict: 'refuse',
          reason: 'unsupported_media_type',
          kind: 'UNSUPPORTED_MEDIA_TYPE',
          message: 'content encoding is not supported',
        });
      });
    }

    it('3. takes Content-Encoding identity, in any case', () => {
      expect(decide(delivery({ headers: { 'content-encoding': ' Identity ' } })).verdict).to.equal('accept');
    });

    it('4. checks the signature before the envelope (401, not 400)', () => {
      const verdict = decide(delivery({ body: '[]', headers: { 'x-service-signature': sign('other') } }));
      expect(verdict).to.include({
        reason: 'bad_signature',
        kind: 'UNAUTHORIZED',
        message: 'x-service-signature is not valid',
      });
    });

    it('4. names a missing signature as missing', () => {
      expect(decide(delivery({ without: ['x-service-signature'] }))).to.include({
        reason: 'bad_signature',
        message: 'x-service-signature is missing',
      });
    });

    it('5. refuses a signed body that is not the envelope (400), naming the problem without echoing it', () => {
      const body = '{"event":5,"data":{"secret":"do-not-echo"}}';
      const verdict = decide(delivery({ body }));
      expect(verdict).to.include({ verdict: 'refuse', reason: 'bad_envelope', kind: 'BAD_REQUEST' });
      if (verdict.verdict === 'refuse') expect(verdict.message).not.to.include('do-not-echo');
    });
  });

  describe('with WEBHOOK_ALLOWLIST=off', () => {
    it('accepts any source address', () => {
      const open = createDeliveryDecider({ ...rules, allowlist: undefined });
      expect(decideDelivery(open, delivery({ from: stranger })).verdict).to.equal('accept');
    });
  });

  describe('with a trusted proxy (TRUST_PROXY=loopback)', () => {
    const behindProxy = createDeliveryDecider({ ...rules, trustProxy: parseTrustProxy('loopback') });

    it('judges the address the proxy reports, per request', () => {
      const viaProxy = (forwardedFor: string) =>
        decideDelivery(
          behindProxy,
          delivery({ from: '127.0.0.1', headers: { 'x-forwarded-for': forwardedFor } }),
        );
      expect(viaProxy(platform).verdict).to.equal('accept');
      expect(viaProxy(stranger)).to.include({ reason: 'forbidden' });
    });
  });

  describe('without a trusted proxy', () => {
    it('ignores X-Forwarded-For: the connection address decides', () => {
      const decider = createDeliveryDecider(rules);
      const connection = { remoteAddress: stranger };
      const first = delivery({ headers: { 'x-forwarded-for': platform } });
      expect(decideDelivery(decider, { ...first, socket: connection })).to.include({ reason: 'forbidden' });
      // The same connection cannot change its address; a new one is judged anew.
      expect(decideDelivery(decider, { ...first, socket: connection })).to.include({ reason: 'forbidden' });
      expect(decideDelivery(decider, { ...first, socket: { remoteAddress: platform } }).verdict).to.equal(
        'accept',
      );
    });
  });
});
