import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { ADMIN_TOKEN, adminApp } from './admin-fixtures.ts';

/** The directives of a Content-Security-Policy header, by name. */
const directives = (csp: unknown) =>
  new Map(
    String(csp)
      .split(';')
      .map((part) => part.trim())
      .filter((part) => part !== '')
      .map((part) => [part.split(' ')[0] ?? '', part] as const),
  );

// `upgrade-insecure-requests` makes a browser fetch every sub-resource and call of the page over
// https. Sent by a listener the browser reached over plain http (an admin listener on a LAN address,
// no TLS proxy), it sends the sign-in form's post, the dashboard's scripts and the console's API
// calls to an https port nobody serves, and the admin pages break. Over https, directly or at a
// proxy the app trusts (ADMIN_TRUST_PROXY), it stays: it is then what keeps a stray http URL secure.
describe('createAdminApp: the pages’ Content-Security-Policy and https', () => {
  const suite = useTrayStorage();
  const opened: { close(): void }[] = [];
  after(() => {
    for (const app of opened.splice(0)) app.close();
  });
  const appTrusting = (trustProxy: false | string[]): Express => {
    const built = adminApp(suite.storage, { trustProxy });
    opened.push(built);
    return built.app;
  };
  /** The CSP of the sign-in page and of an admin JSON answer, as `app` sends them. */
  const policies = async (app: Express, headers: Record<string, string>) => [
    (await request(app).get('/admin/login').set(headers).expect(200)).headers['content-security-policy'],
    (
      await request(app)
        .get('/admin/events')
        .set({ ...headers, Authorization: `Bearer ${ADMIN_TOKEN}` })
        .expect(200)
    ).headers['content-security-policy'],
  ];

  it('leaves upgrade-insecure-requests out over plain http, whatever the Host, and keeps the rest of the policy', async () => {
    for (const csp of await policies(appTrusting(false), { Host: '192.168.1.20:8082' })) {
      const sent = directives(csp);
      expect(sent.has('upgrade-insecure-requests'), String(csp)).to.equal(false);
      expect(sent.get('default-src')).to.equal("default-src 'self'");
      expect(sent.get('script-src')).to.equal("script-src 'self'");
      expect(sent.get('frame-ancestors')).to.equal("frame-ancestors 'self'");
    }
  });

  it('leaves it out when X-Forwarded-Proto: https comes from a proxy the app does not trust', async () => {
    const forwarded = { Host: 'admin.example.org', 'X-Forwarded-Proto': 'https' };
    for (const trustProxy of [false, ['10.1.2.3']] as const)
      for (const csp of await policies(
        appTrusting(trustProxy === false ? false : [...trustProxy]),
        forwarded,
      ))
        expect(directives(csp).has('upgrade-insecure-requests'), String(csp)).to.equal(false);
  });

  it('sends it when a trusted proxy says the browser came over https (ADMIN_TRUST_PROXY)', async () => {
    const app = appTrusting(['loopback']);
    const forwarded = { Host: 'admin.example.org', 'X-Forwarded-Proto': 'https' };
    for (const csp of await policies(app, forwarded))
      expect(directives(csp).get('upgrade-insecure-requests'), String(csp)).to.equal(
        'upgrade-insecure-requests',
      );
    // The same proxy passing on a plain-http request: left out.
    for (const csp of await policies(app, { ...forwarded, 'X-Forwarded-Proto': 'http' }))
      expect(directives(csp).has('upgrade-insecure-requests'), String(csp)).to.equal(false);
  });
});
