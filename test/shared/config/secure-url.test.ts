import { expect } from 'chai';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';
import { isSecureUrl } from '../../../shared/config/secure-url.ts';

const secret = { MODERATION_WEBHOOK_SECRET: 'm'.repeat(32) };

describe('URLs the tray service trusts or sends to (JWT_JWKS_URL, MODERATION_WEBHOOK_URL)', () => {
  const accepted = [
    'https://idp.example.com/.well-known/jwks.json',
    'http://localhost:8080/jwks',
    'http://127.0.0.1:9000/hook',
    'http://127.8.9.10/hook',
    'http://[::1]:9000/hook',
  ];
  const refused = [
    'http://idp.example.com/jwks',
    'http://10.0.0.5/hook',
    'http://127.0.0.1.example.com/hook',
    'http://localhost.example.com/hook',
    // A name under .localhost is only by convention this machine: a resolver may send it elsewhere.
    'http://anything.localhost/jwks',
    'http://idp.localhost:8080/jwks',
    'ftp://idp.example.com/jwks',
    'not a url',
  ];
  for (const url of accepted) {
    it(`accepts ${url}`, () => {
      expect(isSecureUrl(url)).to.equal(true);
      expect(loadTrayConfig({ JWT_JWKS_URL: url, MODERATION_WEBHOOK_URL: url, ...secret })).to.include({
        JWT_JWKS_URL: url,
        MODERATION_WEBHOOK_URL: url,
      });
    });
  }
  for (const url of refused) {
    it(`refuses ${url}, naming the variable`, () => {
      expect(isSecureUrl(url)).to.equal(false);
      expect(() => loadTrayConfig({ JWT_JWKS_URL: url })).to.throw(
        /^Invalid configuration: JWT_JWKS_URL: expected an https:\/\/ URL/,
      );
      expect(() => loadTrayConfig({ MODERATION_WEBHOOK_URL: url, ...secret })).to.throw(
        /^Invalid configuration: MODERATION_WEBHOOK_URL: expected an https:\/\/ URL/,
      );
    });
  }

  // Node's fetch (and jose's JWKS fetch on it) refuses a URL with credentials on every request, and
  // its error quotes the whole URL, password included: such a URL can only fail, and leak.
  for (const url of [
    'https://hook:S3cretPass@mod.example.com/hook',
    'https://hook@mod.example.com/hook',
    'http://:S3cretPass@127.0.0.1:9000/hook',
  ]) {
    it(`refuses ${url.replace('S3cretPass', '…')} (credentials in the URL), naming the variable, not the password`, () => {
      expect(isSecureUrl(url)).to.equal(false);
      for (const variable of ['JWT_JWKS_URL', 'ADMIN_JWT_JWKS_URL', 'MODERATION_WEBHOOK_URL']) {
        let message = '';
        try {
          loadTrayConfig({ [variable]: url, ...secret });
        } catch (error) {
          message = (error as Error).message;
        }
        expect(message).to.match(
          new RegExp(`^Invalid configuration: ${variable}: expected a URL without a user name or password`),
        );
        expect(message).to.not.include('S3cretPass');
      }
    });
  }

  it('refuses MODERATION_WEBHOOK_URL without MODERATION_WEBHOOK_SECRET, naming the secret', () => {
    expect(() => loadTrayConfig({ MODERATION_WEBHOOK_URL: 'https://mod.example.com/hook' })).to.throw(
      /^Invalid configuration: MODERATION_WEBHOOK_SECRET: required when MODERATION_WEBHOOK_URL is set/,
    );
  });
});
