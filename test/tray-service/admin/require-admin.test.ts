import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { ADMIN_TOKEN, adminApp, userToken } from './admin-fixtures.ts';

/** The admin guard: a bearer credential or the session cookie, and the CSRF token for changing cookie requests. */
describe('requireAdmin (every /admin data path)', function () {
  this.timeout(30_000);
  const suite = useTrayStorage();
  let app: Express;
  let close: () => void;
  let cookie: string;
  let csrfToken: string;
  before(async () => {
    ({ app, close } = adminApp(suite.storage));
    const res = await request(app).post('/admin/login').type('form').send({ token: ADMIN_TOKEN }).expect(303);
    cookie = String(res.headers['set-cookie']).split(';')[0]!;
    csrfToken = (await request(app).get('/admin/session').set('Cookie', cookie).expect(200)).body.csrfToken;
  });
  after(() => close());

  it('admits a GET with the session cookie alone', async () => {
    const res = await request(app).get('/admin/events').set('Cookie', cookie).expect(200);
    expect(res.body).to.have.property('items');
  });

  it('takes a wrong bearer credential as a 401 even beside a valid cookie (no fall back)', async () => {
    await request(app)
      .get('/admin/events')
      .set('Cookie', cookie)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}x`)
      .expect(401);
  });

  it('answers 401 to a user token and to a made-up cookie', async () => {
    await request(app)
      .get('/admin/events')
      .set('Authorization', `Bearer ${await userToken('u-ana', { role: 'admin' })}`)
      .expect(401);
    await request(app)
      .get('/admin/events')
      .set('Cookie', `admin_session=${'x'.repeat(43)}`)
      .expect(401);
  });

  describe('a changing request made with the cookie', () => {
    it('answers 403 without x-csrf-token, or with another one', async () => {
      for (const header of [{}, { 'x-csrf-token': 'wrong' }, { 'x-csrf-token': `${csrfToken}x` }]) {
        const res = await request(app)
          .post('/admin/nothing-here')
          .set('Cookie', cookie)
          .set(header)
          .expect(403);
        expect(res.body.code).to.equal(403000);
        expect(res.body.message).to.match(/^x-csrf-token:/);
      }
    });
    it('passes the guard with the session’s token (then meets the router: 404 here)', async () => {
      await request(app)
        .post('/admin/nothing-here')
        .set('Cookie', cookie)
        .set('x-csrf-token', csrfToken)
        .expect(404);
    });
    it('needs no CSRF token with a bearer credential', async () => {
      await request(app)
        .post('/admin/nothing-here')
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .expect(404);
    });
  });
});
