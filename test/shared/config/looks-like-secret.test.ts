import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { looksLikeSecret } from '../../../shared/config/looks-like-secret.ts';

describe('looksLikeSecret: a secret pasted where a name belongs', () => {
  it('knows secrets as the usual tools make them', () => {
    for (const secret of [
      randomBytes(32).toString('hex'),
      randomBytes(32).toString('hex').toUpperCase(),
      randomBytes(10).toString('hex'),
      'Kq7vN2pX9wLm4RtY8sZb3cFh6jDg1aE5',
      'pZ3k9QwErT5yUi8oPa2sDf7g/H+j4KlZ=',
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      // Prefixed and Base64url ones: the random part decides, not the separators.
      'sk_Live_4eC39HqLyjWDarjtT1zdp7dc',
      'Qm9vT3hY7pLk2ZrW8vNc4aTs',
      'xK2_pQ9-vT4wR7-mN3sL8_yB6cJ1hG5d',
    ])
      expect(looksLikeSecret(secret), secret).to.equal(true);
  });

  it('knows random Base64 whatever it happens to hold, in nearly every case', () => {
    let known = 0;
    for (let n = 0; n < 1_000; n += 1) if (looksLikeSecret(randomBytes(18).toString('base64'))) known += 1;
    // Each of these 24 characters holds digits and both cases in about 95% of draws; of those,
    // about 1% change kind too rarely.
    expect(known).to.be.above(900);
  });

  it('takes header and webhook names as names', () => {
    for (const name of [
      'x-service-signature',
      'X-Hub-Signature-256',
      'x-shopify-hmac-sha256',
      'stripe-signature',
      'communityevents',
      'eu-west-1',
      'ap-south_1.b',
      'default',
      'deadbeef',
      'PlatformEventsEU2026',
      // As their senders spell them: a separator is where a word ends, not a change of kind.
      'X-Shopify-Hmac-SHA256',
      'X-Shopify-Hmac-Sha256',
      'X-GitHub-Hook-Installation-Target-ID',
      'X-Twilio-Email-Event-Webhook-Signature',
    ])
      expect(looksLikeSecret(name), name).to.equal(false);
  });
});
