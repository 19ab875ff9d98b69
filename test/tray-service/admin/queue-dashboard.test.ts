import type Bull from 'bull';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createWebhookQueue, type WebhookJobData } from '../../../shared/queue/webhook-queue.ts';
import { DASHBOARD_COOKIE } from '../../../tray-service/admin/queue-dashboard.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { testStack } from '../../support/test-stack.ts';
import { ADMIN_TOKEN, adminApp, userToken } from './admin-fixtures.ts';

describe('GET /admin/queues (queue dashboard)', () => {
  const suite = useTrayStorage();
  const prefix = useQueuePrefix();
  let queue: Bull.Queue<WebhookJobData>;
  let app: Express;
  let close: () => void;

  before(async () => {
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    await queue.add({
      dedupeKey: 'k1',
      webhook: 'main',
      receivedAt: new Date().toISOString(),
      event: 'x',
      data: {},
    });
    ({ app, close } = adminApp(suite.storage, { queues: [queue] }));
  });
  after(async () => {
    close();
    await queue.close();
  });

  const sessionCookie = async (): Promise<string> => {
    const res = await request(app).get(`/admin/queues?token=${ADMIN_TOKEN}`).expect(303);
    return String(res.headers['set-cookie']).split(';')[0]!;
  };

  describe('without credentials', () => {
    it('responds 401 and shows nothing of the dashboard', async () => {
      const res = await request(app).get('/admin/queues').expect(401);
      expect(res.body.code).to.equal(401000);
      await request(app).get('/admin/queues/api/queues').expect(401);
    });
  });

  describe('with ?token=<ADMIN_TOKEN>', () => {
    it('sets an HttpOnly, SameSite=Strict session cookie scoped to the dashboard and redirects without the token', async () => {
      const res = await request(app).get(`/admin/queues?token=${ADMIN_TOKEN}&x=1`).expect(303);
      expect(res.headers.location).to.equal('/admin/queues?x=1');
      const cookie = String(res.headers['set-cookie']);
      expect(cookie).to.match(new RegExp(`^${DASHBOARD_COOKIE}=\\d+\\.[\\w-]+;`));
      expect(cookie).to.include('Path=/admin/queues').and.include('HttpOnly').and.include('SameSite=Strict');
      expect(cookie).not.to.include(ADMIN_TOKEN);
    });
    it('then serves the page and its API with the cookie alone', async () => {
      const cookie = await sessionCookie();
      const page = await request(app).get('/admin/queues').set('Cookie', cookie).expect(200);
      expect(page.text).to.include('<div id="root">');
      const api = await request(app).get('/admin/queues/api/queues').set('Cookie', cookie).expect(200);
      expect(JSON.stringify(api.body)).to.include('webhook-events');
    });
  });

  describe('with a wrong or forged credential', () => {
    it('responds 401 to a wrong ?token= and sets no cookie', async () => {
      const res = await request(app).get('/admin/queues?token=wrong').expect(401);
      expect(res.headers['set-cookie']).to.equal(undefined);
    });
    it('responds 401 to a tampered session cookie', async () => {
      const cookie = await sessionCookie();
      const [name, value] = cookie.split('=');
      const [expiry, mac] = value!.split('.');
      await request(app)
        .get('/admin/queues')
        .set('Cookie', `${name}=${Number(expiry) + 1000}.${mac}`)
        .expect(401);
    });
    it('responds 403 to an ordinary user token, in the query or as a bearer', async () => {
      const token = await userToken('u-ana', { role: 'member' });
      await request(app).get(`/admin/queues?token=${token}`).expect(403);
      await request(app).get('/admin/queues').set('Authorization', `Bearer ${token}`).expect(403);
    });
  });

  describe('with an admin JWT as bearer', () => {
    it('serves the API', async () => {
      const token = await userToken('u-root', { role: 'admin' });
      await request(app).get('/admin/queues/api/queues').set('Authorization', `Bearer ${token}`).expect(200);
    });
  });
});
