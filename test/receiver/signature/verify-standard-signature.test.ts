import { expect } from 'chai';
import { parseWebhookSecrets } from '../../../receiver/signature/parse-webhook-secrets.ts';
import { signStandard } from '../../../receiver/signature/sign-standard.ts';
import { verifyStandardSignature } from '../../../receiver/signature/verify-standard-signature.ts';

/** Standard Webhooks' published test vector (its reference libraries test against it). */
const vector = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

const standard = (text: string) =>
  parseWebhookSecrets(text, { schemeOf: () => 'standard-webhooks' }).map((webhook) => {
    if (webhook.scheme !== 'standard-webhooks') throw new Error('expected a standard-webhooks webhook');
    return webhook;
  });
const webhooks = standard(`sw=${vector.secret}`);
const at = (nowSeconds: number) => ({ nowSeconds, toleranceSeconds: 300 });

/** The vector's headers, with one part changed or left out (undefined). */
function headers(change: Record<string, string | undefined> = {}): Record<string, string> {
  const all: Record<string, string | undefined> = {
    'webhook-id': vector.id,
    'webhook-timestamp': String(vector.timestamp),
    'webhook-signature': vector.signature,
    ...change,
  };
  return Object.fromEntries(
    Object.entries(all).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

const verify = (
  change: Record<string, string | undefined> = {},
  nowSeconds = vector.timestamp,
  body = vector.body,
) => verifyStandardSignature(Buffer.from(body), headers(change), webhooks, at(nowSeconds));

describe('verifyStandardSignature', () => {
  describe('with the published test vector', () => {
    it('signs it as published', () => {
      expect(signStandard(vector.body, vector.secret, vector)).to.equal(vector.signature);
      expect(signStandard(Buffer.from(vector.body), vector.secret.slice('whsec_'.length), vector)).to.equal(
        vector.signature,
      );
    });

    it('verifies it, naming the webhook and the message id', () => {
      expect(verify()).to.deep.equal({ ok: true, webhook: 'sw', id: vector.id });
    });

    it('verifies it among other signatures and versions in webhook-signature', () => {
      const others = `v1a,${'A'.repeat(86)}== v1,${Buffer.alloc(32).toString('base64')} ${vector.signature} v2,x`;
      expect(verify({ 'webhook-signature': others })).to.deep.include({ ok: true });
    });

    // A sender rotating its secret may send one webhook-signature line per signature; Node joins
    // repeated lines with ", ". Which line comes first must not decide the verdict.
    describe('with one webhook-signature line per signature, as Node joins them', () => {
      const other = `v1,${Buffer.alloc(32, 7).toString('base64')}`;
      for (const [order, joined] of [
        ['the matching one last', `${other}, ${vector.signature}`],
        ['the matching one first', `${vector.signature}, ${other}`],
        ['three lines, the matching one in the middle', `${other}, ${vector.signature}, ${other}`],
      ] as const) {
        it(`verifies it with ${order}`, () => {
          expect(verify({ 'webhook-signature': joined })).to.deep.include({ ok: true });
        });
      }

      it('verifies it given as a list of lines (headersDistinct), in either order', () => {
        for (const lines of [
          [other, vector.signature],
          [vector.signature, other],
        ]) {
          const given = { ...headers(), 'webhook-signature': lines };
          const result = verifyStandardSignature(
            Buffer.from(vector.body),
            given,
            webhooks,
            at(vector.timestamp),
          );
          expect(result, lines.join(' | ')).to.deep.include({ ok: true });
        }
      });

      it('still refuses lines none of which matches', () => {
        expect(verify({ 'webhook-signature': `${other}, ${other}` })).to.deep.equal({
          ok: false,
          reason: 'mismatch',
        });
      });
    });

    it('verifies it with the second secret of a rotated webhook, after another webhook', () => {
      const rotated = standard(
        `other=whsec_${Buffer.alloc(24, 1).toString('base64')},sw=whsec_${Buffer.alloc(32, 2).toString('base64')},sw=${vector.secret}`,
      );
      const result = verifyStandardSignature(
        Buffer.from(vector.body),
        headers(),
        rotated,
        at(vector.timestamp),
      );
      expect(result).to.deep.equal({ ok: true, webhook: 'sw', id: vector.id });
    });

    it('verifies at the edges of the tolerance, either way', () => {
      expect(verify({}, vector.timestamp + 300).ok).to.equal(true);
      expect(verify({}, vector.timestamp - 300).ok).to.equal(true);
    });
  });

  describe('refuses', () => {
    for (const [rule, change, reason, nowSeconds] of [
      ['a timestamp older than the tolerance', {}, 'stale', vector.timestamp + 301],
      ['a timestamp further in the future than the tolerance', {}, 'future', vector.timestamp - 301],
      ['a delivery without webhook-id', { 'webhook-id': undefined }, 'missing-id'],
      ['an empty webhook-id', { 'webhook-id': '' }, 'missing-id'],
      ['a webhook-id with a space', { 'webhook-id': 'msg 1' }, 'bad-id'],
      ['a webhook-id of 257 characters', { 'webhook-id': 'm'.repeat(257) }, 'bad-id'],
      ['a delivery without webhook-timestamp', { 'webhook-timestamp': undefined }, 'missing-timestamp'],
      ['a timestamp written as a date', { 'webhook-timestamp': '2021-02-24' }, 'bad-timestamp'],
      ['a negative timestamp', { 'webhook-timestamp': '-1614265330' }, 'bad-timestamp'],
      ['a fractional timestamp', { 'webhook-timestamp': '1614265330.5' }, 'bad-timestamp'],
      ['a delivery without webhook-signature', { 'webhook-signature': undefined }, 'missing-signature'],
      ['the signature of another message id', { 'webhook-id': 'msg_another' }, 'mismatch'],
      [
        'the signature of another timestamp',
        { 'webhook-timestamp': String(vector.timestamp + 1) },
        'mismatch',
      ],
      ['a signature without its version', { 'webhook-signature': vector.signature.slice(3) }, 'mismatch'],
      [
        'a signature of another version',
        { 'webhook-signature': `v2,${vector.signature.slice(3)}` },
        'mismatch',
      ],
      [
        'a digest with a byte changed',
        { 'webhook-signature': `${vector.signature.slice(0, 10)}A${vector.signature.slice(11)}` },
        'mismatch',
      ],
    ] as const) {
      it(`${rule} (${reason})`, () => {
        expect(verify(change, nowSeconds ?? vector.timestamp)).to.deep.equal({ ok: false, reason });
      });
    }

    it('a body with any single byte changed', () => {
      for (let i = 0; i < vector.body.length; i += 1) {
        const body = Buffer.from(vector.body);
        body[i] = (body[i] ?? 0) ^ 0x01;
        const result = verifyStandardSignature(body, headers(), webhooks, at(vector.timestamp));
        expect(result, `byte ${i}`).to.deep.equal({ ok: false, reason: 'mismatch' });
      }
    });

    it('the vector under another secret', () => {
      const other = standard(`sw=whsec_${Buffer.alloc(24, 7).toString('base64')}`);
      expect(
        verifyStandardSignature(Buffer.from(vector.body), headers(), other, at(vector.timestamp)),
      ).to.deep.equal({
        ok: false,
        reason: 'mismatch',
      });
    });

    it('a stale delivery before computing any HMAC, whatever its signature', () => {
      expect(verify({ 'webhook-signature': 'garbage' }, vector.timestamp + 10_000)).to.deep.equal({
        ok: false,
        reason: 'stale',
      });
    });
  });
});
