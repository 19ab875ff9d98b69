import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { parseWebhookSecrets } from '../../../receiver/signature/parse-webhook-secrets.ts';
import { verifySignature } from '../../../receiver/signature/verify-signature.ts';

/** The platform's signature vectors, byte for byte (docs/contract.md#signature). */
interface Vectors {
  cases: { name: string; secret: string; body: string; signature: string }[];
}
const vectors = JSON.parse(
  readFileSync(new URL('../../fixtures/signatures.json', import.meta.url), 'utf8'),
) as Vectors;

const secretsFor = (secret: string) => parseWebhookSecrets(`default=${secret}`);

describe('verifySignature', () => {
  it('has vectors to check', () => {
    expect(vectors.cases.length).to.be.greaterThan(0);
  });

  for (const vector of vectors.cases) {
    describe(`vector ${vector.name}`, () => {
      const body = Buffer.from(vector.body, 'utf8');

      it('verifies', () => {
        expect(verifySignature(body, vector.signature, secretsFor(vector.secret))).to.deep.equal({
          ok: true,
          webhook: 'default',
        });
      });

      it('does not verify once re-serialised', () => {
        const reserialised = Buffer.from(JSON.stringify(JSON.parse(vector.body), null, 1), 'utf8');
        expect(reserialised.equals(body)).to.equal(false);
        expect(verifySignature(reserialised, vector.signature, secretsFor(vector.secret))).to.deep.equal({
          ok: false,
          reason: 'mismatch',
        });
      });

      it('does not verify with any single byte flipped', () => {
        for (let i = 0; i < body.length; i += 1) {
          const flipped = Buffer.from(body);
          flipped[i] = (flipped[i] ?? 0) ^ 0x01;
          expect(
            verifySignature(flipped, vector.signature, secretsFor(vector.secret)).ok,
            `byte ${i}`,
          ).to.equal(false);
        }
      });

      it('does not verify a well-formed digest that differs only in one of its last 16 bytes', () => {
        const digest = Buffer.from(vector.signature, 'base64');
        for (let i = 16; i < digest.length; i += 1) {
          const forged = Buffer.from(digest);
          forged[i] = (forged[i] ?? 0) ^ 0x80;
          const header = forged.toString('base64');
          expect(header).to.match(/^[A-Za-z0-9+/]{43}=$/);
          expect(verifySignature(body, header, secretsFor(vector.secret)), `byte ${i}`).to.deep.equal({
            ok: false,
            reason: 'mismatch',
          });
        }
      });

      it('does not verify with a wrong secret', () => {
        expect(verifySignature(body, vector.signature, secretsFor(`${vector.secret}x`)).ok).to.equal(false);
      });
    });
  }

  it('names the webhook whose secret matched, among several with rotated secrets', () => {
    const vector = vectors.cases[0]!;
    const secrets = parseWebhookSecrets(`a=one,b=two,b=${vector.secret}`);
    expect(verifySignature(Buffer.from(vector.body), vector.signature, secrets)).to.deep.equal({
      ok: true,
      webhook: 'b',
    });
  });

  it('refuses a valid digest with anything in front of it as malformed, not as a match', () => {
    const vector = vectors.cases[0]!;
    for (const prefix of ['!', ' ', 'A', '==']) {
      expect(
        verifySignature(Buffer.from(vector.body), `${prefix}${vector.signature}`, secretsFor(vector.secret)),
        JSON.stringify(prefix),
      ).to.deep.equal({ ok: false, reason: 'malformed' });
    }
  });

  for (const [header, reason] of [
    [undefined, 'missing'],
    ['', 'missing'],
    ['not base64!', 'malformed'],
    ['ZgWZ7fwbtRv1QyOorb3k5wbmJZVWiC6hzMaHWoIXUpE', 'malformed'],
    ['ZgWZ7fwbtRv1QyOorb3k5wbmJZVWiC6hzMaHWoIXUpF=', 'malformed'],
    ['ZgWZ7fwbtRv1QyOorb3k5wbmJZVWiC6hzMaHWoIXUpE=ZgWZ', 'malformed'],
    [['a', 'b'], 'malformed'],
  ] as const) {
    it(`reports ${reason} for the header ${JSON.stringify(header)}`, () => {
      expect(verifySignature(Buffer.from('{}'), header, secretsFor('k'))).to.deep.equal({
        ok: false,
        reason,
      });
    });
  }
});
