import type Bull from 'bull';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createWebhookQueue, type WebhookJobData } from '../../../shared/queue/webhook-queue.ts';
import { MAX_JOBS_PER_PAGE } from '../../../tray-service/admin/queue-dashboard.ts';
import { ADMIN_SESSION_COOKIE } from '../../../tray-service/admin/session-cookie.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { testStack } from '../../support/test-stack.ts';
import { freePort } from '../../../scripts/lib/local-servers.ts';
import { ADMIN_TOKEN, adminApp, adminJwt, userToken } from './admin-fixtures.ts';

const job = (key: string): WebhookJobData => ({
  dedupeKey: key,
  webhook: 'main',
  receivedAt: new Date().toISOString(),
  event: 'x',
  data: {},
});

describe('/admin/queues (queue dashboard)', function () {
  this.timeout(30_000);
  const suite = useTrayStorage();
  const prefix = useQueuePrefix();
  let queue: Bull.Queue<WebhookJobData>;
  let app: Express;
  let close: (() => void) | undefined;
  const closers: (() => void)[] = [];
  const another = (options: Parameters<typeof adminApp>[1]) => {
    const built = adminApp(suite.storage, { queues: [queue], ...options });
    closers.push(built.close);
    return built.app;
  };

  before(async () => {
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    // One failed job (a worker that throws takes it, then stops), then two waiting ones.
    const worker = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    const failed = new Promise((resolve) => worker.once('failed', resolve));
    void worker.process(() => Promise.reject(new Error('boom')));
    await queue.add(job('k3'), { jobId: 'k3', attempts: 1 });
    await failed;
    await worker.close();
    await queue.add(job('k1'), { jobId: 'k1' });
    await queue.add(job('k2'), { jobId: 'k2' });
    ({ app, close } = adminApp(suite.storage, { queues: [queue] }));
  });
  after(async () => {
    close?.();
    for (const closeOne of closers) closeOne();
    await queue.close();
  });

  const signIn = async (token: string, on: Express = app): Promise<string> => {
    const res = await request(on)
      .post('/admin/login')
      .type('form')
      .send({ token, next: '/admin/queues' })
      .expect(303);
    expect(res.headers.location).to.equal('/admin/queues');
    return String(res.headers['set-cookie']).split(';')[0]!;
  };

  describe('without credentials', () => {
    it('sends a browser to the sign-in form and answers its API with 401', async () => {
      const page = await request(app).get('/admin/queues').set('Accept', 'text/html').expect(303);
      expect(page.headers.location).to.equal('/admin/login?next=%2Fadmin%2Fqueues');
      const form = await request(app).get(page.headers.location!).expect(200);
      expect(form.text).to.include('<form method="post" action="/admin/login">');
      expect(form.text).to.include('<input type="hidden" name="next" value="/admin/queues">');
      const api = await request(app).get('/admin/queues/api/queues').expect(401);
      expect(api.body.code).to.equal(401000);
    });
  });

  describe("signing in (the admin listener's one sign-in, /admin/login)", () => {
    it('takes the credential from a form POST and sets an HttpOnly, SameSite=Strict cookie scoped to /admin', async () => {
      const res = await request(app)
        .post('/admin/login')
        .type('form')
        .send({ token: ADMIN_TOKEN, next: '/admin/queues' })
        .expect(303);
      const cookie = String(res.headers['set-cookie']);
      expect(cookie).to.match(new RegExp(`^${ADMIN_SESSION_COOKIE}=[\\w-]{43};`));
      expect(cookie).to.include('Path=/admin;').and.include('HttpOnly').and.include('SameSite=Strict');
      expect(cookie).not.to.include(ADMIN_TOKEN);
      // Plain http, no trusted proxy: not Secure (a browser would drop it on http).
      expect(cookie).not.to.include('Secure');
    });
    it('never takes a credential from the URL', async () => {
      const res = await request(app).get(`/admin/queues?token=${ADMIN_TOKEN}`).set('Accept', 'text/html');
      expect(res.status).to.equal(303);
      expect(res.headers.location).to.match(/^\/admin\/login\?next=/);
      expect(res.headers['set-cookie']).to.equal(undefined);
      await request(app).get(`/admin/queues/api/queues?token=${ADMIN_TOKEN}`).expect(401);
    });
    it('keeps its API answers (job data) out of caches', async () => {
      const res = await request(app)
        .get('/admin/queues/api/queues')
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .expect(200);
      expect(res.headers['cache-control']).to.equal('no-store');
    });
    // bull-board reads as many jobs as a page asks for, each whole, into the process that also
    // serves the tray API: a failed set or a backlog is largest when operators look at it.
    it(`reads at most ${MAX_JOBS_PER_PAGE} jobs for a page, however many it asks for`, async () => {
      const big = createWebhookQueue({ redis: testStack().redisUrl, prefix: `${prefix}-big` });
      try {
        const count = MAX_JOBS_PER_PAGE + 5;
        await big.addBulk(
          Array.from({ length: count }, (_, i) => ({ data: job(`b${i}`), opts: { jobId: `b${i}` } })),
        );
        const page = (jobsPerPage: string) =>
          request(another({ queues: [big] }))
            .get(
              `/admin/queues/api/queues?activeQueue=${big.name}&status=waiting&page=1&jobsPerPage=${jobsPerPage}`,
            )
            .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
            .expect(200);
        const jobsOf = (body: { queues: { jobs: unknown[] }[] }) => body.queues[0]?.jobs.length;
        expect(jobsOf((await page('100000000')).body)).to.equal(MAX_JOBS_PER_PAGE);
        expect(jobsOf((await page('7')).body)).to.equal(7);
      } finally {
        await big.obliterate({ force: true });
        await big.close();
      }
    });
    it('then serves the page and its API with the cookie alone', async () => {
      const cookie = await signIn(ADMIN_TOKEN);
      const page = await request(app).get('/admin/queues').set('Cookie', cookie).expect(200);
      expect(page.text).to.include('<div id="root">');
      const api = await request(app).get('/admin/queues/api/queues').set('Cookie', cookie).expect(200);
      expect(JSON.stringify(api.body)).to.include('webhook-events');
    });
    // Express routes paths case-insensitively: /API/queues reached the dashboard's API as well, and
    // passed for a page load, which a page of another site may make with the cookie (an image).
    it("refuses its API, however the path is cased, to another site's page with the cookie", async () => {
      const cookie = await signIn(ADMIN_TOKEN);
      for (const path of [
        '/admin/queues/api/queues',
        '/admin/queues/API/queues',
        '/admin/queues/Api/queues',
      ]) {
        const res = await request(app)
          .get(`${path}?activeQueue=webhook-events&status=failed&jobsPerPage=100`)
          .set('Cookie', cookie)
          .set('Accept', '*/*')
          .set('Sec-Fetch-Site', 'same-site')
          .expect(403);
        expect(res.body.message, path).to.match(/another site/);
      }
    });
    it('answers a wrong credential, or a user token with an admin role claim, with 401 and no cookie', async () => {
      for (const token of ['wrong', await userToken('u-root', { role: 'admin' })]) {
        const res = await request(app).post('/admin/login').type('form').send({ token }).expect(401);
        expect(res.headers['set-cookie']).to.equal(undefined);
        expect(res.text).to.include('not a valid admin credential');
      }
    });
    it('refuses a made-up session cookie', async () => {
      await request(app)
        .get('/admin/queues/api/queues')
        .set('Cookie', `${ADMIN_SESSION_COOKIE}=${'a'.repeat(43)}`)
        .expect(401);
    });
  });

  describe("the dashboard's old sign-in addresses", () => {
    it('lead to the admin sign-in: GET with 303, a POST with 307 so its form body is sent again', async () => {
      const page = await request(app).get('/admin/queues/login').expect(303);
      expect(page.headers.location).to.equal('/admin/login?next=%2Fadmin%2Fqueues');
      const post = await request(app)
        .post('/admin/queues/login')
        .type('form')
        .send({ token: 'x' })
        .expect(307);
      expect(post.headers.location).to.equal('/admin/login?next=%2Fadmin%2Fqueues');
      const signedIn = await request(app)
        .post(post.headers.location!)
        .type('form')
        .send({ token: ADMIN_TOKEN })
        .expect(303);
      expect(signedIn.headers.location).to.equal('/admin/queues');
      expect((await request(app).post('/admin/queues/logout').expect(307)).headers.location).to.equal(
        '/admin/logout',
      );
    });
  });

  describe('Secure cookie behind a TLS proxy', () => {
    it('is Secure when a trusted proxy says the browser came over https', async () => {
      const behindProxy = another({ trustProxy: ['loopback'] });
      const res = await request(behindProxy)
        .post('/admin/login')
        .set('X-Forwarded-Proto', 'https')
        .type('form')
        .send({ token: ADMIN_TOKEN })
        .expect(303);
      expect(String(res.headers['set-cookie'])).to.include('Secure');
    });
    it('is Secure with ADMIN_BEHIND_TLS=on, whatever the proxy says or does not say', async () => {
      const behindTls = another({ deps: { behindTls: true } });
      const res = await request(behindTls)
        .post('/admin/login')
        .type('form')
        .send({ token: ADMIN_TOKEN })
        .expect(303);
      expect(String(res.headers['set-cookie'])).to.include('Secure');
      const out = await request(behindTls).post('/admin/logout').expect(303);
      expect(String(out.headers['set-cookie'])).to.include('Secure');
    });
    it('ignores X-Forwarded-Proto when no proxy is trusted', async () => {
      const res = await request(app)
        .post('/admin/login')
        .set('X-Forwarded-Proto', 'https')
        .type('form')
        .send({ token: ADMIN_TOKEN })
        .expect(303);
      expect(String(res.headers['set-cookie'])).not.to.include('Secure');
    });
  });

  describe('a session is bound to the credential that opened it', () => {
    it('ends when ADMIN_TOKEN changes', async () => {
      const cookie = await signIn(ADMIN_TOKEN);
      const rotated = another({ adminToken: `${ADMIN_TOKEN}-rotated` });
      await request(rotated).get('/admin/queues/api/queues').set('Cookie', cookie).expect(401);
    });
    it('ends when the admin JWT that opened it expires', async () => {
      // Three seconds at least for the sign-in and a first call, on a loaded machine too.
      const exp = Math.floor(Date.now() / 1000) + 4;
      const jwt = await adminJwt('ops-ana', exp);
      const cookie = await signIn(jwt);
      await request(app).get('/admin/queues/api/queues').set('Cookie', cookie).expect(200);
      await new Promise((resolve) => setTimeout(resolve, exp * 1000 - Date.now() + 500));
      await request(app).get('/admin/queues/api/queues').set('Cookie', cookie).expect(401);
    });
    it('gets a cookie no longer-lived than the admin JWT', async () => {
      const res = await request(app)
        .post('/admin/login')
        .type('form')
        .send({ token: await adminJwt('ops-ana', '2m') })
        .expect(303);
      const maxAge = Number(/Max-Age=(\d+)/.exec(String(res.headers['set-cookie']))?.[1]);
      expect(maxAge).to.be.within(100, 120);
    });
  });

  describe('signing out', () => {
    it('ends the session on every instance and clears the cookie', async () => {
      const cookie = await signIn(ADMIN_TOKEN);
      const sameConfig = another({});
      await request(sameConfig).get('/admin/queues/api/queues').set('Cookie', cookie).expect(200);
      const res = await request(app).post('/admin/logout').set('Cookie', cookie).expect(303);
      expect(res.headers.location).to.equal('/admin/login');
      expect(String(res.headers['set-cookie'])).to.match(new RegExp(`^${ADMIN_SESSION_COOKIE}=;`));
      await request(app).get('/admin/queues/api/queues').set('Cookie', cookie).expect(401);
      await request(sameConfig).get('/admin/queues/api/queues').set('Cookie', cookie).expect(401);
    });
  });

  describe('read-only by default (QUEUE_DASHBOARD_WRITE=off)', () => {
    it('refuses to add, retry or clean jobs', async () => {
      const cookie = await signIn(ADMIN_TOKEN);
      const before = await queue.getJobCounts();
      const calls = [
        request(app)
          .post('/admin/queues/api/queues/webhook-events/add')
          .send({ name: 'x', data: job('forged'), options: {} }),
        request(app).put('/admin/queues/api/queues/webhook-events/retry/failed'),
        request(app).put('/admin/queues/api/queues/webhook-events/clean/waiting'),
      ];
      for (const call of calls) {
        const res = await call.set('Cookie', cookie).expect(403);
        expect(res.body.code).to.equal(403000);
      }
      expect(await queue.getJobCounts()).to.deep.equal(before);
    });
  });

  describe('with QUEUE_DASHBOARD_WRITE=on', () => {
    it('refuses adding or editing a job whatever the case of its path (Express matches paths case-insensitively)', async () => {
      const writable = another({ dashboardWrite: true });
      const bearer = { Authorization: `Bearer ${ADMIN_TOKEN}` };
      const before = await queue.getJobCounts();
      const calls = [
        request(writable).post('/admin/queues/api/queues/webhook-events/ADD'),
        request(writable).post('/admin/queues/api/queues/webhook-events/Add/'),
        request(writable).post('/admin/queues/api/queues/webhook-events/add'),
        request(writable).patch('/admin/queues/api/queues/webhook-events/k1/Update-Data'),
        request(writable).patch('/admin/queues/api/queues/webhook-events/k1/UPDATE-DATA'),
        request(writable).patch('/admin/queues/api/queues/webhook-events/k1/priority'),
        request(writable).put('/admin/queues/api/queues/webhook-events/EMPTY'),
        request(writable).put('/admin/queues/api/queues/webhook-events/obliterate'),
      ];
      for (const call of calls) {
        const res = await call.set(bearer).send({ name: 'x', data: job('forged'), options: {} });
        expect(res.status, call.url).to.equal(403);
        expect(res.body.code).to.equal(403000);
      }
      expect(await queue.getJobCounts()).to.deep.equal(before);
      expect((await queue.getJob('k1'))?.data.dedupeKey).to.equal('k1');
    });
    it('lets the named actions through in any case (PUT .../PAUSE, .../Resume)', async () => {
      const writable = another({ dashboardWrite: true });
      const bearer = { Authorization: `Bearer ${ADMIN_TOKEN}` };
      await request(writable).put('/admin/queues/api/queues/webhook-events/PAUSE').set(bearer).expect(200);
      expect(await queue.isPaused()).to.equal(true);
      await request(writable).put('/admin/queues/api/queues/webhook-events/Resume').set(bearer).expect(200);
      expect(await queue.isPaused()).to.equal(false);
    });
    it('refuses a changing call from a page of another origin, even with the session cookie', async () => {
      const writable = another({ dashboardWrite: true });
      const cookie = await signIn(ADMIN_TOKEN, writable);
      const failed = await queue.getFailedCount();
      await request(writable)
        .put('/admin/queues/api/queues/webhook-events/retry/failed')
        .set('Cookie', cookie)
        .set('Origin', 'https://evil.example')
        .expect(403);
      expect(await queue.getFailedCount()).to.equal(failed);
    });
    it("behind a trusted proxy that sends its own Host, judges the origin by the proxy's X-Forwarded-Host", async () => {
      const viaProxy = (app: Express, origin: string, path: string) =>
        request(app)
          .put(`/admin/queues/api/queues/webhook-events/${path}`)
          .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
          .set('Host', '127.0.0.1:8082')
          .set('X-Forwarded-Host', 'admin.example.com')
          .set('X-Forwarded-Proto', 'https')
          .set('Origin', origin);
      const proxied = another({ dashboardWrite: true, trustProxy: ['loopback'] });
      await viaProxy(proxied, 'https://admin.example.com', 'pause').expect(200);
      expect(await queue.isPaused()).to.equal(true);
      await viaProxy(proxied, 'https://admin.example.com', 'resume').expect(200);
      expect(await queue.isPaused()).to.equal(false);
      await viaProxy(proxied, 'https://evil.example', 'pause').expect(403);
      // Without ADMIN_TRUST_PROXY anyone could send the header: it is not believed.
      const direct = another({ dashboardWrite: true });
      await viaProxy(direct, 'https://admin.example.com', 'pause').expect(403);
      expect(await queue.isPaused()).to.equal(false);
    });
    it('retries failed jobs, but still never adds or edits one', async () => {
      const writable = another({ dashboardWrite: true });
      const bearer = { Authorization: `Bearer ${ADMIN_TOKEN}` };
      await request(writable)
        .post('/admin/queues/api/queues/webhook-events/add')
        .set(bearer)
        .send({ name: 'x', data: job('forged'), options: {} })
        .expect(403);
      await request(writable)
        .patch('/admin/queues/api/queues/webhook-events/k1/update-data')
        .set(bearer)
        .send({ data: job('forged') })
        .expect(403);
      expect(await queue.getFailedCount()).to.equal(1);
      expect((await queue.getJob('k3'))?.attemptsMade, 'its one attempt spent').to.equal(1);
      await request(writable)
        .put('/admin/queues/api/queues/webhook-events/retry/failed')
        .set(bearer)
        .expect(200);
      expect(await queue.getFailedCount()).to.equal(0);
      expect(await queue.getWaitingCount()).to.equal(3);
      // As the replay tool's: bull's own retry left the last attempt spent, so any failure sent the
      // job straight back to the failed set, with no backoff.
      expect((await queue.getJob('k3'))?.attemptsMade, 'its attempts counted afresh').to.equal(0);
    });
  });
});

/**
 * Every changing route bull-board has, against a real bull queue holding jobs in each state. The
 * gate lets through only what cannot lose a webhook the receiver acknowledged and the worker has
 * not processed yet (waiting, paused, delayed or active).
 */
// bull's getWorkers waits for its connection to be ready, adding listeners to it on every call:
// a dashboard left open while Redis was down piled them up (one pair a queue a poll), until Redis
// came back or the process warned of a leak.
describe('/admin/queues while the queues’ Redis is down', function () {
  this.timeout(30_000);
  const suite = useTrayStorage();
  let queue: Bull.Queue<WebhookJobData>;
  let close: (() => void) | undefined;
  before(async () => {
    queue = createWebhookQueue({ redis: `redis://127.0.0.1:${await freePort()}`, prefix: 'down' });
  });
  after(async () => {
    close?.();
    await queue.close().catch(() => undefined);
  });

  it('answers each poll without adding listeners to the connection', async () => {
    const built = adminApp(suite.storage, { queues: [queue] });
    close = built.close;
    const before = queue.client.listenerCount('ready');
    for (let poll = 0; poll < 5; poll += 1)
      await request(built.app)
        .get('/admin/queues/api/queues?activeQueue=&status=latest')
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .timeout(5_000);
    expect(queue.client.listenerCount('ready')).to.be.at.most(before);
  });
});

describe('/admin/queues with QUEUE_DASHBOARD_WRITE=on: no route loses an unprocessed job', function () {
  this.timeout(30_000);
  const suite = useTrayStorage();
  const bearer = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  const api = '/admin/queues/api/queues';
  const QUEUE = '/admin/queues/api/queues/webhook-events';
  const closers: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const closeOne of closers.splice(0)) await closeOne();
  });

  /**
   * A queue of its own holding c1 (completed), f1 (failed), d1 (delayed), w1 and w2 (waiting), all
   * received and finished a minute ago (older than the 5 s grace bull-board's clean keeps), and a
   * writable dashboard in front of it.
   */
  const seeded = async (): Promise<{ queue: Bull.Queue<WebhookJobData>; writable: Express }> => {
    const prefix = useQueuePrefix();
    const queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    closers.push(() => queue.close());
    const worker = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    const finished = new Promise<void>((resolve) => {
      let count = 0;
      const one = () => (++count === 2 ? resolve() : undefined);
      worker.on('completed', one).on('failed', one);
    });
    void worker.process((taken) =>
      taken.id === 'f1' ? Promise.reject(new Error('boom')) : Promise.resolve(),
    );
    const minuteAgo = Date.now() - 60_000;
    await queue.add(job('c1'), { jobId: 'c1', attempts: 1 });
    await queue.add(job('f1'), { jobId: 'f1', attempts: 1 });
    await finished;
    await worker.close();
    await queue.add(job('d1'), { jobId: 'd1', delay: 3_600_000 });
    await queue.add(job('w1'), { jobId: 'w1' });
    await queue.add(job('w2'), { jobId: 'w2' });
    // Back-dated as bull's clean reads a job's age (finishedOn, else processedOn, else timestamp).
    for (const id of ['c1', 'f1', 'd1', 'w1', 'w2']) {
      const times = id.startsWith('c') || id.startsWith('f') ? ['finishedOn', 'processedOn'] : ['timestamp'];
      for (const field of times) await queue.client.hset(queue.toKey(id), field, minuteAgo);
    }
    const built = adminApp(suite.storage, { queues: [queue], dashboardWrite: true });
    closers.push(built.close);
    return { queue, writable: built.app };
  };
  /** The ids of the jobs the worker has still to process. */
  const unprocessed = async (queue: Bull.Queue<WebhookJobData>) =>
    (await queue.getJobs(['waiting', 'paused', 'delayed', 'active'])).map((one) => String(one.id)).sort();

  it('refuses every call that could remove or change a job not processed yet, and changes nothing', async () => {
    const { queue, writable } = await seeded();
    const calls: [method: 'put' | 'patch' | 'post', path: string][] = [
      ['put', `${QUEUE}/clean/wait`],
      ['put', `${QUEUE}/clean/waiting`],
      ['put', `${QUEUE}/CLEAN/Wait/`],
      ['put', `${QUEUE}/clean/paused`],
      ['put', `${QUEUE}/clean/active`],
      ['put', `${QUEUE}/clean/delayed`],
      ['put', `${QUEUE}/clean/%77ait`],
      // bull-board routes these to clean/<status>, not to a job named "clean".
      ['put', `${QUEUE}/clean/retry`],
      ['put', `${QUEUE}/clean/promote`],
      ['put', `${QUEUE}/retry/wait`],
      // bull cannot retry a completed job (bull-board would answer 500).
      ['put', `${QUEUE}/retry/completed`],
      ['put', `${QUEUE}/clean/FAILED`],
      // The dead letter: a job may have failed before its event was stored.
      ['put', `${QUEUE}/clean/failed`],
      ['put', `${QUEUE}/Clean/failed/`],
      ['put', `${QUEUE}/retry/delayed`],
      ['put', `${QUEUE}/retry/promote`],
      // Removing one job: bull removes it whatever its state.
      ['put', `${QUEUE}/w1/clean`],
      ['put', `${QUEUE}/d1/clean`],
      ['put', `${QUEUE}/f1/clean`],
      ['put', `${QUEUE}/empty`],
      ['put', `${QUEUE}/obliterate`],
      ['put', `${QUEUE}/concurrency`],
      ['put', `${QUEUE}/rate-limit`],
      ['put', `${QUEUE}/rate-limit/release`],
      ['put', `${QUEUE}/job-schedulers/s1/remove`],
      ['put', `${QUEUE}/job-schedulers/s1/run`],
      ['put', `${QUEUE}/w1/remove-unprocessed-children`],
      ['patch', `${QUEUE}/job-schedulers/s1`],
      ['patch', `${QUEUE}/w1/update-data`],
      ['patch', `${QUEUE}/d1/delay`],
      ['patch', `${QUEUE}/w1/priority`],
      ['post', `${QUEUE}/add`],
      ['post', '/admin/queues/api/metrics/history/purge'],
    ];
    const before = await queue.getJobCounts();
    for (const [method, path] of calls) {
      const res = await request(writable)[method](path).set(bearer).send({ delay: 0, priority: 1 });
      expect(res.status, `${method.toUpperCase()} ${path}`).to.equal(403);
      expect(res.body.code).to.equal(403000);
    }
    expect(await queue.getJobCounts()).to.deep.equal(before);
    expect(await unprocessed(queue)).to.deep.equal(['d1', 'w1', 'w2']);
    expect((await queue.getJob('w1'))?.data.dedupeKey).to.equal('w1');
  });
  it('refuses clean/paused while a paused queue holds the backlog', async () => {
    const { queue, writable } = await seeded();
    await queue.pause();
    await request(writable).put(`${QUEUE}/clean/paused`).set(bearer).expect(403);
    expect(await queue.getPausedCount()).to.equal(2);
  });
  it('cleans completed jobs, and failed ones of the decisions queue only, never the webhook dead letter', async () => {
    const { queue, writable } = await seeded();
    await request(writable).put(`${QUEUE}/clean/completed`).set(bearer).expect(200);
    expect(await queue.getCompletedCount()).to.equal(0);
    expect(await queue.getFailedCount()).to.equal(1);
    expect(await unprocessed(queue)).to.deep.equal(['d1', 'w1', 'w2']);
    // Past the gate (this dashboard holds no decisions queue: bull-board answers it is unknown).
    const decisions = await request(writable).put(`${api}/moderation-decisions/clean/failed`).set(bearer);
    expect(decisions.status).to.not.equal(403);
  });
  it('retries failed jobs, of the whole queue or one at a time', async () => {
    const one = await seeded();
    await request(one.writable).put(`${QUEUE}/f1/retry`).set(bearer).expect(204);
    expect(await unprocessed(one.queue)).to.deep.equal(['d1', 'f1', 'w1', 'w2']);
    const all = await seeded();
    await request(all.writable).put(`${QUEUE}/RETRY/failed`).set(bearer).expect(200);
    expect(await unprocessed(all.queue)).to.deep.equal(['d1', 'f1', 'w1', 'w2']);
  });
  it('promotes delayed jobs, of the whole queue or one at a time', async () => {
    const one = await seeded();
    await request(one.writable).put(`${QUEUE}/d1/promote`).set(bearer).expect(204);
    expect(await one.queue.getDelayedCount()).to.equal(0);
    expect(await unprocessed(one.queue)).to.deep.equal(['d1', 'w1', 'w2']);
    const all = await seeded();
    await request(all.writable).put(`${QUEUE}/promote`).set(bearer).expect(200);
    expect(await all.queue.getDelayedCount()).to.equal(0);
    expect(await unprocessed(all.queue)).to.deep.equal(['d1', 'w1', 'w2']);
  });
  it('pauses and resumes one queue or all of them, keeping their jobs', async () => {
    const { queue, writable } = await seeded();
    await request(writable).put(`${QUEUE}/pause`).set(bearer).expect(200);
    expect(await queue.isPaused()).to.equal(true);
    await request(writable).put(`${QUEUE}/resume`).set(bearer).expect(200);
    expect(await queue.isPaused()).to.equal(false);
    await request(writable).put(`${api}/pause`).set(bearer).expect(200);
    expect(await queue.isPaused()).to.equal(true);
    await request(writable).put(`${api}/resume`).set(bearer).expect(200);
    expect(await queue.isPaused()).to.equal(false);
    expect(await unprocessed(queue)).to.deep.equal(['d1', 'w1', 'w2']);
  });
});
