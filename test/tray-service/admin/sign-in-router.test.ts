import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { safeNext } from '../../../tray-service/admin/sign-in-router.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { ADMIN_TOKEN, adminApp, adminJwt } from './admin-fixtures.ts';

describe('admin sign-in (/admin/login, /admin/logout, /admin/session)', function () {
  this.timeout(30_000);
  const suite = useTrayStorage();
  let app: Express;
  let close: () => void;
  before(() => {
    ({ app, close } = adminApp(suite.storage));
  });
  after(() => close());

  const signIn = async (token = ADMIN_TOKEN, next?: string) => {
    const res = await request(app)
      .post('/admin/login')
      .type('form')
      .send({ token, ...(next === undefined ? {} : { next }) })
      .expect(303);
    return { cookie: String(res.headers['set-cookie']).split(';')[0]!, location: res.headers.location };
  };

  describe('GET /admin/login', () => {
    it('serves the form, carrying where to go next in a hidden field', async () => {
      const res = await request(app).get('/admin/login?next=%2Fadmin%2Fconsole%3Fview%3Dtraffic').expect(200);
      expect(res.headers['content-type']).to.match(/^text\/html/);
      expect(res.headers['cache-control']).to.equal('no-store');
      expect(res.text).to.include('<form method="post" action="/admin/login">');
      expect(res.text).to.include('name="next" value="/admin/console?view=traffic"');
      expect(res.text).to.include('type="password"');
    });
    it('sends a browser that has a session on to `next`: signing in again would end it', async () => {
      const { cookie } = await signIn();
      const res = await request(app)
        .get('/admin/login?next=%2Fadmin%2Fqueues')
        .set('Cookie', cookie)
        .expect(303);
      expect(res.headers.location).to.equal('/admin/queues');
      await request(app).get('/admin/session').set('Cookie', cookie).expect(200);
    });
    it('sends a browser that has a session to the console, not to an export `next` names', async () => {
      const { cookie } = await signIn();
      const res = await request(app)
        .get(`/admin/login?next=${encodeURIComponent('/admin/events/export?format=csv')}`)
        .set('Cookie', cookie)
        .expect(303);
      expect(res.headers.location).to.equal('/admin/console');
    });
  });

  // An address typed or bookmarked as the mount path itself (`https://ops.example.com/admin/`), and
  // the landing page safeNext lets through: the console, by way of the sign-in form without a session.
  describe('GET /admin and /admin/', () => {
    for (const path of ['/admin', '/admin/'])
      it(`GET ${path}: on to the console, and from there to the sign-in form without a session`, async () => {
        const { cookie } = await signIn();
        const signedIn = await request(app)
          .get(path)
          .set('Cookie', cookie)
          .set('Accept', 'text/html')
          .expect(303);
        expect(signedIn.headers.location).to.equal('/admin/console');
        const signedOut = await request(app).get(path).set('Accept', 'text/html').expect(303);
        expect(signedOut.headers.location).to.equal('/admin/console');
        const page = await request(app).get('/admin/console').set('Accept', 'text/html').expect(303);
        expect(page.headers.location).to.match(/^\/admin\/login\?next=/);
      });

    it('lands there after signing in with next=/admin', async () => {
      const { cookie, location } = await signIn(ADMIN_TOKEN, '/admin');
      expect(location).to.equal('/admin');
      const res = await request(app)
        .get('/admin')
        .set('Cookie', cookie)
        .set('Accept', 'text/html')
        .expect(303);
      expect(res.headers.location).to.equal('/admin/console');
    });
  });

  // The cookie is SameSite=Strict: a link from another site (a chat message, the wiki) arrives
  // without it. The form was shown as if signed out, and signing in there ended the session the
  // admin's other tabs had (their tails and exports cut). A page that reloads itself instead is
  // same-site, and carries the cookie.
  describe('a page opened from a link on another site', () => {
    const crossSite = { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'navigate', Accept: 'text/html' };
    for (const path of ['/admin/console', '/admin/login', '/admin/queues']) {
      it(`GET ${path}: a page that reloads itself, not the form or a redirect to it`, async () => {
        const res = await request(app).get(path).set(crossSite).expect(200);
        expect(res.headers['content-type']).to.match(/^text\/html/);
        expect(res.headers['cache-control']).to.equal('no-store');
        expect(res.text).to.include('<meta http-equiv="refresh" content="0">');
        expect(res.text).to.not.include('<form');
      });
    }

    it('reloads once: a reload that still comes as cross-site goes on to the form', async () => {
      const first = await request(app).get('/admin/console').set(crossSite).expect(200);
      const marker = String(first.headers['set-cookie']);
      expect(marker).to.match(
        /^admin_reloaded=1; Max-Age=30; Path=\/admin; Expires=[^;]+; HttpOnly; SameSite=Lax$/,
      );
      const again = await request(app)
        .get('/admin/console')
        .set(crossSite)
        .set('Cookie', marker.split(';')[0]!)
        .expect(303);
      expect(again.headers.location).to.equal('/admin/login?next=%2Fadmin%2Fconsole');
      const login = await request(app)
        .get('/admin/login')
        .set(crossSite)
        .set('Cookie', marker.split(';')[0]!);
      expect(login.status).to.equal(200);
      expect(login.text).to.include('<form');
    });

    // The marker outlived the reload by 30 s: a second link from the chat within them went on to
    // the form as if signed out, and signing in there ended the session the other tabs held.
    it('forgets the reload once a page comes from the admin listener itself, so the next link reloads too', async () => {
      const { cookie } = await signIn();
      const first = await request(app).get('/admin/console').set(crossSite).expect(200);
      const marker = String(first.headers['set-cookie']).split(';')[0]!;
      const sameOrigin = { ...crossSite, 'Sec-Fetch-Site': 'same-origin' };
      for (const path of ['/admin/console', '/admin/login']) {
        const reloaded = await request(app).get(path).set(sameOrigin).set('Cookie', `${cookie}; ${marker}`);
        expect(reloaded.status, path).to.be.oneOf([200, 303]);
        expect(String(reloaded.headers['set-cookie']), path).to.match(
          /(^|,)admin_reloaded=; Path=\/admin; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax/,
        );
      }
      const next = await request(app).get('/admin/console').set(crossSite).expect(200);
      expect(next.text).to.include('<meta http-equiv="refresh" content="0">');
    });

    it('is sent to the form as before when it comes from the admin listener itself', async () => {
      const sameOrigin = { ...crossSite, 'Sec-Fetch-Site': 'same-origin' };
      const res = await request(app).get('/admin/console').set(sameOrigin).expect(303);
      expect(res.headers.location).to.equal('/admin/login?next=%2Fadmin%2Fconsole');
      await request(app).get('/admin/login').set(sameOrigin).expect(200, /<form/);
    });

    it('opens at once when the cookie came along after all (a Lax proxy, an old browser)', async () => {
      const { cookie } = await signIn();
      await request(app)
        .get('/admin/console')
        .set(crossSite)
        .set('Cookie', cookie)
        .expect(200, /console/);
    });
  });

  describe('POST /admin/login', () => {
    it('goes to `next` once signed in, or to the console by default', async () => {
      expect((await signIn(ADMIN_TOKEN, '/admin/queues')).location).to.equal('/admin/queues');
      expect((await signIn(ADMIN_TOKEN)).location).to.equal('/admin/console');
    });
    it('never sends the browser off the admin listener (no open redirect)', async () => {
      for (const next of [
        'https://evil.example/',
        '//evil.example/admin',
        '/admin\\..\\x',
        '/other',
        'admin/x',
      ]) {
        expect((await signIn(ADMIN_TOKEN, next)).location, next).to.equal('/admin/console');
      }
    });
    it('ends the session the browser had before: signing in again leaves one session, not two', async () => {
      const before = await signIn();
      const res = await request(app)
        .post('/admin/login')
        .set('Cookie', before.cookie)
        .type('form')
        .send({ token: ADMIN_TOKEN })
        .expect(303);
      const after = String(res.headers['set-cookie']).split(';')[0]!;
      expect(after).to.not.equal(before.cookie);
      await request(app).get('/admin/events').set('Cookie', after).expect(200);
      await request(app).get('/admin/events').set('Cookie', before.cookie).expect(401);
    });
    // The earlier session was closed before the new one opened: a sign-in that then failed (a
    // token at its last second, Redis a moment away) left the browser signed out in every tab.
    it('keeps the session the browser had when the new one cannot open', async () => {
      const before = await signIn();
      const late = adminApp(suite.storage, { clock: () => Date.now() + 120_000 });
      try {
        const token = await adminJwt('ops-late-again', '1m');
        await request(late.app)
          .post('/admin/login')
          .set('Cookie', before.cookie)
          .type('form')
          .send({ token })
          .expect(401);
      } finally {
        late.close();
      }
      await request(app).get('/admin/events').set('Cookie', before.cookie).expect(200);
    });
    it('answers a wrong credential with the form again (401) and no cookie', async () => {
      const res = await request(app).post('/admin/login').type('form').send({ token: 'nope' }).expect(401);
      expect(res.headers['set-cookie']).to.equal(undefined);
      expect(res.text).to.include('not a valid admin credential');
    });
    it('answers an admin JWT that has expired by the time its session would open like a wrong one (401)', async () => {
      // The token's verification and the session take the time apart: at the last second of a
      // token's life (its exp, or its iat plus ADMIN_JWT_MAX_TOKEN_AGE) the first may pass and the
      // second find the session ending before it begins. A clock ahead of the token's life does it.
      const late = adminApp(suite.storage, { clock: () => Date.now() + 120_000 });
      try {
        const token = await adminJwt('ops-late', '1m');
        const res = await request(late.app).post('/admin/login').type('form').send({ token });
        expect([res.status, res.headers['set-cookie']]).to.deep.equal([401, undefined]);
        expect(res.text).to.include('not a valid admin credential');
      } finally {
        late.close();
      }
    });
  });

  describe('GET /admin/session', () => {
    it('hands a signed-in page its CSRF token and the session end', async () => {
      const { cookie } = await signIn();
      const res = await request(app).get('/admin/session').set('Cookie', cookie).expect(200);
      expect(res.headers['cache-control']).to.equal('no-store');
      expect(res.body.csrfToken).to.match(/^[\w-]{43}$/);
      const left = Date.parse(res.body.expiresAt) - Date.now();
      expect(left).to.be.within(7.9 * 3_600_000, 8 * 3_600_000);
    });
    it('gives each session a token of its own', async () => {
      const one = await request(app)
        .get('/admin/session')
        .set('Cookie', (await signIn()).cookie);
      const two = await request(app)
        .get('/admin/session')
        .set('Cookie', (await signIn()).cookie);
      expect(one.body.csrfToken).to.not.equal(two.body.csrfToken);
    });
    it('ends with an admin JWT’s expiry', async () => {
      const { cookie } = await signIn(await adminJwt('ops-ana', '2m'));
      const res = await request(app).get('/admin/session').set('Cookie', cookie).expect(200);
      expect(Date.parse(res.body.expiresAt) - Date.now()).to.be.within(100_000, 120_000);
    });
    it('answers 401 without a session, and 404 to a bearer request (it has no session)', async () => {
      await request(app).get('/admin/session').expect(401);
      await request(app).get('/admin/session').set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(404);
    });
  });

  // Cookies are not kept apart by port: a browser sends one deployment's cookie to another on the
  // same host. With a default session prefix shared on one Redis, the other's sign-in and sign-out
  // deleted the session the cookie named, cutting the first deployment's open tails and exports.
  describe("another deployment's session, named by the cookie (same host, same Redis)", () => {
    const otherToken = `${ADMIN_TOKEN.slice(0, -5)}other`;
    let other: Express;
    let closeOther: () => void;
    before(() => {
      ({ app: other, close: closeOther } = adminApp(suite.storage, { adminToken: otherToken }));
    });
    after(() => closeOther());

    it('is left alone by a sign-in and a sign-out there', async () => {
      const { cookie } = await signIn();
      await request(other)
        .post('/admin/login')
        .type('form')
        .set('Cookie', cookie)
        .send({ token: otherToken })
        .expect(303);
      await request(app).get('/admin/events').set('Cookie', cookie).expect(200);
      await request(other).post('/admin/logout').set('Cookie', cookie).expect(303);
      await request(app).get('/admin/events').set('Cookie', cookie).expect(200);
    });
  });

  describe('POST /admin/logout', () => {
    it('ends the session: its cookie no longer reads any data', async () => {
      const { cookie } = await signIn();
      await request(app).get('/admin/events').set('Cookie', cookie).expect(200);
      const res = await request(app).post('/admin/logout').set('Cookie', cookie).expect(303);
      expect(res.headers.location).to.equal('/admin/login');
      await request(app).get('/admin/events').set('Cookie', cookie).expect(401);
      await request(app).get('/admin/session').set('Cookie', cookie).expect(401);
    });

    // SameSite=Strict keeps the cookie from another site's post, but the answer's clearCookie
    // still reached the browser (a top-level navigation may set cookies): any page could sign an
    // admin out, cutting open tails and exports.
    it('refuses a form sent from another site (403): the session and its cookie stay', async () => {
      const { cookie } = await signIn();
      for (const headers of [{ 'Sec-Fetch-Site': 'cross-site' }, { Origin: 'https://elsewhere.example' }]) {
        const res = await request(app).post('/admin/logout').set(headers).set('Cookie', cookie).expect(403);
        expect(res.headers['set-cookie'], JSON.stringify(headers)).to.equal(undefined);
        expect(res.text).to.include('Sign out from this page');
      }
      await request(app).get('/admin/events').set('Cookie', cookie).expect(200);
    });
  });

  // Any page of the same host (another port: cookies keep no port apart) or a sibling subdomain
  // can set a cookie of the same name on a longer path, which browsers send first. Only the first
  // value was read: the console looked signed out, and signing out closed the planted value while
  // the real session stayed valid until its end.
  describe('a second admin_session cookie planted beside the session’s', () => {
    const shadowed = (cookie: string) => `admin_session=planted-value; ${cookie}`;
    it('the session still reads data', async () => {
      const { cookie } = await signIn();
      await request(app).get('/admin/session').set('Cookie', shadowed(cookie)).expect(200);
      await request(app).get('/admin/events').set('Cookie', shadowed(cookie)).expect(200);
    });
    // One on each longer path of the deepest console call (with and without its trailing slash),
    // from a sibling subdomain and from another port of the host: fourteen sent before the real one.
    it('the session still reads data behind a planted cookie on every longer path', async () => {
      const { cookie } = await signIn();
      const planted = Array.from({ length: 14 }, (_, n) => `admin_session=planted-${n}`).join('; ');
      await request(app).get('/admin/events').set('Cookie', `${planted}; ${cookie}`).expect(200);
    });
    it('signing out ends the session too', async () => {
      const { cookie } = await signIn();
      await request(app).post('/admin/logout').set('Cookie', shadowed(cookie)).expect(303);
      await request(app).get('/admin/session').set('Cookie', cookie).expect(401);
    });
    it('signing in again ends the earlier session too', async () => {
      const { cookie } = await signIn();
      await request(app)
        .post('/admin/login')
        .type('form')
        .set('Cookie', shadowed(cookie))
        .send({ token: ADMIN_TOKEN })
        .expect(303);
      await request(app).get('/admin/session').set('Cookie', cookie).expect(401);
    });
  });

  describe('safeNext', () => {
    it('keeps paths of the admin mount and replaces everything else with the console', () => {
      expect(safeNext('/admin/queues', '/admin')).to.equal('/admin/queues');
      expect(safeNext('/admin', '/admin')).to.equal('/admin');
      expect(safeNext('/admin/console?key=a%20b', '/admin')).to.equal('/admin/console?key=a%20b');
      for (const bad of [
        undefined,
        7,
        '',
        '/adminx',
        '/admin//evil',
        '/admin/\\evil',
        'https://x/admin/',
        '/admin/ x',
      ])
        expect(safeNext(bad, '/admin')).to.equal('/admin/console');
    });
    // The page a signed-in browser is sent to from a link: an API's GET there (an export, a tail)
    // would start from another site's link, the navigation looking same-origin after the reload.
    it('keeps the admin pages only, not the API a browser could be sent to', () => {
      expect(safeNext('/admin/queues/queue/webhook-events?status=failed', '/admin')).to.equal(
        '/admin/queues/queue/webhook-events?status=failed',
      );
      expect(safeNext('/admin/console/', '/admin')).to.equal('/admin/console/');
      // The console's place, in its fragment, comes back with it.
      expect(safeNext('/admin/console#/events?event=post.didCreate', '/admin')).to.equal(
        '/admin/console#/events?event=post.didCreate',
      );
      for (const api of [
        '/admin/events/export?format=csv',
        '/admin/events/tail',
        '/admin/events?limit=500',
        '/admin/queues/api/queues',
        '/admin/Queues/API/queues',
        '/admin/consoles',
        '/admin/console/assets/console.js',
        // Dot segments the browser resolves after the redirect.
        '/admin/queues/../events/export?format=csv',
        '/admin/queues/%2e%2e/events/export',
        '/admin/queues/x/../api/queues',
        '/admin/console/../events/tail',
      ])
        expect(safeNext(api, '/admin'), api).to.equal('/admin/console');
    });
  });
});
