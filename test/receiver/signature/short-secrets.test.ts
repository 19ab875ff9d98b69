import { expect } from 'chai';
import { parseWebhookSecrets } from '../../../receiver/signature/parse-webhook-secrets.ts';
import { MIN_SECRET_BYTES, shortSecretWebhooks } from '../../../receiver/signature/short-secrets.ts';

describe('shortSecretWebhooks', () => {
  it('names each platform webhook with a secret under 16 bytes, a rotation’s old or new one too', () => {
    const long = 'x'.repeat(MIN_SECRET_BYTES);
    const webhooks = parseWebhookSecrets(`eu=secret,us=${long},ap=${long},ap=s1,sa=${long}`);
    expect(shortSecretWebhooks(webhooks)).to.deep.equal(['eu', 'ap']);
  });

  it('counts bytes, not characters, and leaves Standard Webhooks secrets to their own check', () => {
    const webhooks = parseWebhookSecrets(
      `eu=${'é'.repeat(8)},acme=whsec_${Buffer.alloc(24, 7).toString('base64')}`,
      {
        schemeOf: (name) => (name === 'acme' ? 'standard-webhooks' : 'platform'),
      },
    );
    expect(shortSecretWebhooks(webhooks)).to.deep.equal([]);
    expect(shortSecretWebhooks(parseWebhookSecrets(`eu=${'é'.repeat(7)}`))).to.deep.equal(['eu']);
  });
});
