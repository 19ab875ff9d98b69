import { expect } from 'chai';
import { parseWebhookSecrets } from '../../../receiver/signature/parse-webhook-secrets.ts';
import { standardFormSecretWebhooks } from '../../../receiver/signature/standard-form-secrets.ts';

describe('standardFormSecretWebhooks', () => {
  const whsec = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;

  it('names each platform webhook holding a whsec_ secret, a rotation’s old or new one too', () => {
    const other = 'x'.repeat(32);
    const webhooks = parseWebhookSecrets(`eu=${other},billing=${whsec},us=${other},us=${whsec}`);
    expect(standardFormSecretWebhooks(webhooks)).to.deep.equal(['billing', 'us']);
  });

  it('leaves the Standard Webhooks webhooks, whose secrets are in that form by rule, alone', () => {
    const webhooks = parseWebhookSecrets(`billing=${whsec}`, { schemeOf: () => 'standard-webhooks' });
    expect(standardFormSecretWebhooks(webhooks)).to.deep.equal([]);
  });
});
