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
