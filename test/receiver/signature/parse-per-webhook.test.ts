import { expect } from 'chai';
import { parsePerWebhook } from '../../../receiver/signature/parse-per-webhook.ts';
import {
  parseSignatureHeader,
  parseSignatureScheme,
} from '../../../receiver/signature/parse-signature-options.ts';

const entries = <T>(parsed: { fallback: T | undefined; byName: ReadonlyMap<string, T> }) => ({
  fallback: parsed.fallback,
  byName: Object.fromEntries(parsed.byName),
});

describe('parsePerWebhook', () => {
  it('reads a bare value as the one for every webhook not named', () => {
    expect(entries(parsePerWebhook('X-Sig', parseSignatureHeader))).to.deep.equal({
      fallback: 'x-sig',
      byName: {},
    });
  });

  it('reads name=value entries, and one bare value beside them', () => {
    expect(
      entries(parsePerWebhook(' acme = standard-webhooks , platform', parseSignatureScheme)),
    ).to.deep.equal({
      fallback: 'platform',
      byName: { acme: 'standard-webhooks' },
    });
  });

  for (const [text, message] of [
    ['a=platform,,b=platform', 'entry 2 is empty'],
    ['platform,standard-webhooks', 'entry 2: only one entry may leave out the webhook name'],
    ['a=platform,a=platform', 'entry 2 (a): webhook "a" is named twice'],
    [
      'a=standard',
      'entry 1 (a): not a scheme; expected platform or standard-webhooks (did you mean "standard-webhooks"?)',
    ],
    ['a=svix', 'entry 1 (a): not a scheme; expected platform or standard-webhooks'],
  ] as const) {
    it(`refuses ${JSON.stringify(text)}`, () => {
      expect(() => parsePerWebhook(text, parseSignatureScheme)).to.throw(message);
    });
  }

  // WEBHOOK_SECRETS pasted into the wrong variable: the error goes to the log.
  it('does not repeat a value it refuses, which may be a secret', () => {
    const secret = 'Zm9vYmFyLXNlY3JldC12YWx1ZS0xMjM0NTY3ODkw';
    for (const parse of [parseSignatureScheme, parseSignatureHeader]) {
      expect(() => parsePerWebhook(`eu=${secret}x/+`, parse))
        .to.throw('entry 1 (eu)')
        .with.property('message')
        .that.does.not.include(secret);
    }
  });

  // A Base64 secret's padding reads as "name=" with nothing after it: the name is the secret.
  it('does not repeat a name with nothing or only "=" after it, which may be a padded secret', () => {
    const secret = 'q1w2e3r4t5y6u7i8o9p0AsDfGhJkLzXcVbNm';
    for (const parse of [parseSignatureScheme, parseSignatureHeader]) {
      for (const text of [`${secret}=`, `${secret}==`, `eu=platform,${secret}=`]) {
        expect(() => parsePerWebhook(text, parse), text)
          .to.throw(/^entry \d+: /)
          .with.property('message')
          .that.does.not.include(secret.slice(0, 8));
      }
    }
  });
});

describe('parseSignatureHeader', () => {
  it('keeps a header name in lowercase, as Node gives header names', () => {
    expect(parseSignatureHeader('X-Hub-Signature-256')).to.equal('x-hub-signature-256');
  });

  for (const [value, message] of [
    ['x sig', 'not an HTTP header name'],
    ['x:sig', 'not an HTTP header name'],
    ['X-Legacy-Signature', 'it marks the legacy duplicate'],
    ['webhook-signature', 'it is part of the Standard Webhooks scheme'],
  ] as const) {
    it(`refuses ${value}`, () => {
      expect(() => parseSignatureHeader(value)).to.throw(message);
    });
  }
});
