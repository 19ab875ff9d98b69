import { expect } from 'chai';
import { parseWebhookSecrets } from '../../../receiver/signature/parse-webhook-secrets.ts';

const names = (text: string) =>
  parseWebhookSecrets(text).map(
    (secret) => `${secret.name}:${secret.keys.map((key) => key.export().toString('utf8')).join('|')}`,
  );

describe('parseWebhookSecrets', () => {
  it('names a bare secret "default"', () => {
    expect(names('s3cr3t')).to.deep.equal(['default:s3cr3t']);
  });

  it('groups repeated names as rotated secrets of one webhook', () => {
    expect(names('eu=old, eu=new ,us=x')).to.deep.equal(['eu:old|new', 'us:x']);
  });

  it('keeps a bare Base64 secret with padding whole', () => {
    expect(names('c2VjcmV0=')).to.deep.equal(['default:c2VjcmV0=']);
  });

  it('refuses more than 10 webhook names', () => {
    const text = Array.from({ length: 11 }, (_, i) => `w${i}=s`).join(',');
    expect(() => parseWebhookSecrets(text)).to.throw('11 webhook names given; at most 10');
  });

  it('refuses an empty entry without echoing any secret', () => {
    expect(() => parseWebhookSecrets('a=topsecret,,b=x'))
      .to.throw('entry 2 is empty')
      .with.property('message')
      .that.does.not.include('topsecret');
  });

  it('trims spaces between the name and its secret', () => {
    expect(names('eu=  s3cret')).to.deep.equal(['eu:s3cret']);
  });

  it('reads an entry whose text before "=" is not a name as one bare secret', () => {
    expect(names('my key=s3cret')).to.deep.equal(['default:my key=s3cret']);
  });

  it('accepts exactly 10 webhook names', () => {
    const text = Array.from({ length: 10 }, (_, i) => `w${i}=s`).join(',');
    expect(parseWebhookSecrets(text)).to.have.lengthOf(10);
  });
});

describe('parseWebhookSecrets with Standard Webhooks webhooks', () => {
  const key24 = Buffer.alloc(24, 9).toString('base64');
  const parse = (text: string) =>
    parseWebhookSecrets(text, { schemeOf: (name) => (name === 'sw' ? 'standard-webhooks' : 'platform') });

  it('keys a standard-webhooks webhook with the decoded Base64 secret, with or without whsec_', () => {
    const [webhook] = parse(`sw=whsec_${key24},sw=${key24}`);
    expect(webhook?.scheme).to.equal('standard-webhooks');
    expect(webhook?.keys.map((key) => key.export().toString('hex'))).to.deep.equal([
      Buffer.alloc(24, 9).toString('hex'),
      Buffer.alloc(24, 9).toString('hex'),
    ]);
  });

  it('keys a platform webhook beside it with its secret’s UTF-8 bytes, under x-service-signature', () => {
    const [, platform] = parse(`sw=whsec_${key24},eu=s3cret`);
    expect(platform).to.deep.include({ name: 'eu', scheme: 'platform', header: 'x-service-signature' });
    expect(platform?.keys[0]?.export().toString('utf8')).to.equal('s3cret');
  });

  it('gives each platform webhook the header headerOf names', () => {
    const webhooks = parseWebhookSecrets('eu=a,us=b', { headerOf: (name) => `x-${name}-signature` });
    expect(webhooks.map((webhook) => webhook.scheme === 'platform' && webhook.header)).to.deep.equal([
      'x-eu-signature',
      'x-us-signature',
    ]);
  });

  for (const [secret, message] of [
    ['whsec_not base64!', 'entry 1 (sw) is not a Standard Webhooks secret'],
    ['whsec_c2VjcmV0=', 'entry 1 (sw) is not a Standard Webhooks secret'],
    [`whsec_${Buffer.alloc(23).toString('base64')}`, 'entry 1 (sw) decodes to 23 bytes'],
    [`whsec_${Buffer.alloc(65).toString('base64')}`, 'entry 1 (sw) decodes to 65 bytes'],
  ] as const) {
    it(`refuses ${secret.slice(0, 20)}… without echoing it`, () => {
      expect(() => parse(`sw=${secret}`))
        .to.throw(message)
        .with.property('message')
        .that.does.not.include(secret);
    });
  }
});
