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

  it('keeps a bare Base64 secret with padding whole when its text is no name (it holds + or /)', () => {
    expect(names('c2VjcmV0/LXZhbHVl+MTI=')).to.deep.equal(['default:c2VjcmV0/LXZhbHVl+MTI=']);
  });

  // `communityevents=` is a name and "=" as much as 16 characters of padded Base64: no rule on the
  // text tells them apart, so the padded secret is written with its name.
  it('takes a padded bare secret whose text reads as a name when written default=<secret>', () => {
    expect(() => parseWebhookSecrets('c2VjcmV0LXZhbHVlMTI=')).to.throw(
      'entry 1 is a name and "=" with no secret after it (a variable left unset?); a bare secret ending in "=" is written default=<secret>',
    );
    expect(names('default=c2VjcmV0LXZhbHVlMTI=')).to.deep.equal(['default:c2VjcmV0LXZhbHVlMTI=']);
  });

  // `eu=${EU_SECRET}` with the variable unset: read as a bare secret, webhook `default` was keyed
  // with the text "eu=", which anyone could guess, and webhook `eu` was silently missing.
  for (const [text, entry] of [
    ['eu=,us=s3cret', 1],
    ['us=s3cret, eu= ', 2],
    ['eu==', 1],
    ['frankfurt-1=', 1],
    ['c2VjcmV0=', 1],
    ['communityevents=', 1],
    ['partnerwebhook1=', 1],
  ] as const) {
    it(`refuses ${JSON.stringify(text)}: a name and "=" with no secret after it`, () => {
      expect(() => parseWebhookSecrets(text))
        .to.throw(`entry ${entry} is a name and "=" with no secret after it (a variable left unset?)`)
        .with.property('message')
        .that.does.not.include('s3cret');
    });
  }

  it('reads spaces around the "=" of a named entry as part of neither', () => {
    expect(names('eu = s3cret')).to.deep.equal(['eu:s3cret']);
  });

  // A Base64 secret pasted as it is: its padding is never a `name=secret` split (the name would be
  // the secret's text, shown in the start-up log, and the key a lone "="); one whose text is no
  // name is read whole, one whose text could be a name is refused (above).
  it('keeps a bare Base64 secret ending in "==" whole when its text is no name', () => {
    expect(names('c2VjcmV0LXZhbHVl/TEyMzQ1Ng==')).to.deep.equal(['default:c2VjcmV0LXZhbHVl/TEyMzQ1Ng==']);
  });

  it('keeps a named Base64 secret ending in "==" whole', () => {
    expect(names('eu=c2VjcmV0LXZhbHVlLTEyMzQ1Ng==')).to.deep.equal(['eu:c2VjcmV0LXZhbHVlLTEyMzQ1Ng==']);
  });

  it('reads "default=" in front of a bare secret that itself holds "=" as the escape it documents', () => {
    expect(names('default=my=secret')).to.deep.equal(['default:my=secret']);
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

  // The name is logged at start-up: random text before an `=` is a bare secret holding one, read
  // as webhook `<first part>` keyed with the rest.
  for (const text of ['Ab3dE9fG2hJ7kL1mN0pQ=rS5t', '0123456789abcdef0123=tail', 'whsec_abc=def']) {
    it(`refuses ${text.slice(0, 12)}…: the text before "=" looks like a secret, not a name, and is not repeated`, () => {
      const [before] = text.split('=');
      expect(() => parseWebhookSecrets(`eu=s3cret,${text}`))
        .to.throw(/^entry 2 .*looks like a secret.*default=<secret>/)
        .with.property('message')
        .that.does.not.include(before);
    });
  }

  it('still takes a name that is a word with digits, such as PlatformEventsEU2026', () => {
    expect(names('PlatformEventsEU2026=s3cret')).to.deep.equal(['PlatformEventsEU2026:s3cret']);
  });

  it('trims spaces between the name and its secret', () => {
    expect(names('eu=  s3cret')).to.deep.equal(['eu:s3cret']);
  });

  it('reads an entry whose text before "=" is not a name as one bare secret', () => {
    expect(names('my+key=s3cret')).to.deep.equal(['default:my+key=s3cret']);
  });

  // The starter kit's `main=<the webhook's secret from the platform's admin panel>`, pasted as it
  // is, keyed the webhook with that text (52 bytes: not even warned about as short).
  for (const [text, entry] of [
    ["main=<the webhook's secret from the platform's admin panel>", 1],
    ['eu=s3cret-of-eu,us=<secret>', 2],
    ['<secret>', 1],
  ] as const) {
    it(`refuses ${JSON.stringify(text)}: a placeholder left in, naming the entry's position only`, () => {
      const secret = text.split(',')[entry - 1]!.replace(/^\s*[A-Za-z]+=/, '');
      expect(() => parseWebhookSecrets(text))
        .to.throw(new RegExp(`^entry ${entry} looks like a placeholder`))
        .with.property('message')
        .that.does.not.include(secret);
    });
  }

  // The platform's secret format is not published: one with a space that verified deliveries
  // before must not stop a receiver at its upgrade.
  it('takes a secret with a space in it', () => {
    expect(names('eu=the new secret')).to.deep.equal(['eu:the new secret']);
  });

  it('takes a secret that only starts with "<" or only ends with ">"', () => {
    expect(names('eu=<s3cret,us=s3cret>')).to.deep.equal(['eu:<s3cret', 'us:s3cret>']);
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

  it('keys a bare whsec_ secret ending in "==" with its decoded bytes, under the name "default"', () => {
    const key25 = Buffer.alloc(25, 1).toString('base64');
    expect(key25.endsWith('==')).to.equal(true);
    const [webhook, ...others] = parseWebhookSecrets(`whsec_${key25}`, {
      schemeOf: () => 'standard-webhooks',
    });
    expect(others).to.deep.equal([]);
    expect(webhook?.name).to.equal('default');
    expect(webhook?.keys[0]?.export().toString('hex')).to.equal(Buffer.alloc(25, 1).toString('hex'));
  });

  // Which part of an entry is a name is a guess until the entry parses: an error shows its position.
  for (const [text, secret] of [
    [`whsec_${Buffer.alloc(22, 1).toString('base64')}`, `whsec_${Buffer.alloc(22, 1).toString('base64')}`],
    ['topsecretpart=moresecret', 'topsecretpart'],
    [`eu=${key24},topsecretpart=moresecret`, 'topsecretpart'],
  ] as const) {
    it(`refuses ${text.slice(0, 20)}… naming the entry's position, never any of its text`, () => {
      expect(() => parseWebhookSecrets(text, { schemeOf: () => 'standard-webhooks' }))
        .to.throw(/^entry \d+ (is not|decodes to)/)
        .with.property('message')
        .that.does.not.include(secret);
    });
  }

  for (const [secret, message] of [
    ['whsec_not base64!', 'entry 1 is not a Standard Webhooks secret'],
    ['whsec_c2VjcmV0=', 'entry 1 is not a Standard Webhooks secret'],
    [`whsec_${Buffer.alloc(23).toString('base64')}`, 'entry 1 decodes to 23 bytes'],
    [`whsec_${Buffer.alloc(65).toString('base64')}`, 'entry 1 decodes to 65 bytes'],
  ] as const) {
    it(`refuses ${secret.slice(0, 20)}… without echoing it`, () => {
      expect(() => parse(`sw=${secret}`))
        .to.throw(message)
        .with.property('message')
        .that.does.not.include(secret);
    });
  }
});
