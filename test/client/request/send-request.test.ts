import { expect } from 'chai';
import {
  createTrayClient,
  TrayApiError,
  type TokenRequest,
  type TrayClient,
} from '../../../client/src/index.ts';
import { SEND_MARGIN_MS } from '../../../client/src/request/send-request.ts';
import { createRateLimiter } from '../../../tray-service/http/rate-limit/create-rate-limiter.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { waitFor } from '../../support/wait-for.ts';
import { useStoppablePostgres } from '../../support/use-stoppable-postgres.ts';
import { tokenFor } from '../../tray-service/api/support/api-harness.ts';
import { useRecordedWaits } from '../support/record-waits.ts';
import { useScriptedServers } from '../support/scripted-servers.ts';
import { unhandledRejectionsOf } from '../../support/unhandled-rejections.ts';
import { tokensOf, useServedTrayApi } from '../support/serve-tray-api.ts';

/** One call the client sent, as seen through its fetch: when it left, and the answer. */
interface Sent {
  sentAt: number;
  answeredAt: number;
  status: number;
  retryAfter: string | null;
}

/**
 * Node's timers run on a loop clock read in whole milliseconds at the start of each turn, so
 * a wait of N ms can end up to 1 ms short of N as another clock sees it.
 */
const TIMER_GRAIN_MS = 1;
/** "At once": well before any wait these tests' servers ask for (a second or more). */
const AT_ONCE_MS = 500;

/** How long a promise took to settle, in ms; its rejection is kept for the caller to assert. */
async function timed(call: () => Promise<unknown>): Promise<{ ms: number; settled: Promise<unknown> }> {
  const started = performance.now();
  const settled = call();
  await settled.catch(() => undefined);
  return { ms: performance.now() - started, settled };
}

/** The real fetch, noting each call and its answer (on the monotonic clock). */
function recordingFetch(): { fetch: typeof fetch; sent: Sent[] } {
  const sent: Sent[] = [];
  return {
    sent,
    fetch: async (input, init) => {
      const sentAt = performance.now();
      const response = await fetch(input, init);
      sent.push({
        sentAt,
        answeredAt: performance.now(),
        status: response.status,
        retryAfter: response.headers.get('Retry-After'),
      });
      return response;
    },
  };
}

describe('sendRequest (through the client) against the tray API', () => {
  const api = useServedTrayApi();

  describe('when the service refuses the token', () => {
    it('asks getToken once more and sends the call again with the new token', async () => {
      const tokens = [
        tokenFor('t-user', {}, 'a-secret-the-service-does-not-know-32-chars'),
        tokenFor('t-user'),
      ];
      let asked = 0;
      const asks: TokenRequest[] = [];
      const client = createTrayClient({
        baseUrl: api.baseUrl,
        getToken: (request) => {
          asks.push(request);
          return tokens[asked++]!;
        },
      });
      expect((await client.counts()).totalUnreadCount).to.equal(0);
      expect(asked).to.equal(2);
      // The second ask names the token refused, so a cache knows to give another.
      expect(asks).to.deep.equal([{}, { refused: await tokens[0] }]);
    });

    // An interactive sign-in of 20 s, then the call sent again: it marked read what arrived in
    // those 20 s, records the user never saw, where a 429 or 503 is never waited out past 2 s.
    it('sends a call on every record again only while getToken answers within 2 s of the call', async function () {
      this.timeout(10_000);
      const expired = tokenFor('t-slow', {}, 'a-secret-the-service-does-not-know-32-chars');
      const { fetch, sent } = recordingFetch();
      let slow = true;
      const client = createTrayClient({
        baseUrl: api.baseUrl,
        fetch,
        getToken: async (request) => {
          if (request.refused === undefined) return expired;
          if (slow) await new Promise((resolve) => setTimeout(resolve, 2_100));
          return tokenFor('t-slow');
        },
      });
      await expect(client.markAllAsRead()).to.be.rejectedWith(TrayApiError).and.eventually.include({
        status: 401,
      });
      expect(sent.map((one) => one.status)).to.deep.equal([401]);
      slow = false;
      sent.length = 0;
      await client.markAllAsRead();
      expect(sent.map((one) => one.status)).to.deep.equal([401, 200]);
    });

    // The 2 s count from the call, the first getToken included: sent after a slow first sign-in,
    // the call took what arrived meanwhile too.
    it('does not send a call on every record whose first getToken answers after 2 s', async function () {
      this.timeout(10_000);
      const { fetch, sent } = recordingFetch();
      const client = createTrayClient({
        baseUrl: api.baseUrl,
        fetch,
        getToken: async () => {
          await new Promise((resolve) => setTimeout(resolve, 2_100));
          return tokenFor('t-slow-first');
        },
      });
      await expect(client.deleteAll()).to.be.rejected.and.eventually.include({ name: 'TimeoutError' });
      expect(sent).to.deep.equal([]);
      // A call without such a window waits for its token as long as it takes.
      expect((await client.counts()).totalUnreadCount).to.equal(0);
      expect(sent.map((one) => one.status)).to.deep.equal([200]);
    });

    // Its window was over before it was sent: the service's 400 names the `until`, where a 401
    // would tell the app its user is signed out.
    it('sends a snooze whose until has passed again with the new token, for the service’s 400', async () => {
      const tokens = [
        tokenFor('t-past', {}, 'a-secret-the-service-does-not-know-32-chars'),
        tokenFor('t-past'),
      ];
      let asked = 0;
      const { fetch, sent } = recordingFetch();
      const client = createTrayClient({ baseUrl: api.baseUrl, fetch, getToken: () => tokens[asked++]! });
      await expect(client.snooze(['k'], Date.now() - 60_000))
        .to.be.rejectedWith(TrayApiError, /until/)
        .and.eventually.include({ status: 400 });
      expect(sent.map((call) => call.status)).to.deep.equal([401, 400]);
    });

    it('throws a TrayApiError 401 when the new token is refused too, after asking only once more', async () => {
      let asked = 0;
      const { fetch, sent } = recordingFetch();
      const client = createTrayClient({
        baseUrl: api.baseUrl,
        fetch,
        getToken: () => (asked++, 'not-a-jwt'),
      });
      await expect(client.counts()).to.be.rejectedWith(TrayApiError).and.eventually.include({
        status: 401,
        code: 401000,
        retryAfterMs: undefined,
      });
      expect(asked).to.equal(2);
      expect(sent.map((call) => call.status)).to.deep.equal([401, 401]);
    });
  });

  describe('over the per-user rate limit (2 calls per 2 s here)', () => {
    let limitedUrl: string;
    before(async () => {
      limitedUrl = await api.serve(
        api.harness.app({
          rateLimiter: createRateLimiter({
            redis: api.harness.redis,
            points: 2,
            windowMs: 2_000,
            keyPrefix: uniqueName('rl'),
          }),
        }),
      );
    });

    it('waits the Retry-After the 429 names, then sends the call again, which succeeds', async () => {
      const { fetch, sent } = recordingFetch();
      const client = createTrayClient({ baseUrl: limitedUrl, getToken: tokensOf('limited-1'), fetch });
      for (let call = 0; call < 3; call += 1) await client.counts();

      expect(sent.map((call) => call.status)).to.deep.equal([200, 200, 429, 200]);
      const [, , refused, retried] = sent;
      expect(Number(refused?.retryAfter)).to.be.within(1, 2);
      expect(retried!.sentAt - refused!.answeredAt).to.be.at.least(
        Number(refused?.retryAfter) * 1000 - TIMER_GRAIN_MS,
      );
    });

    it('throws the 429 as a TrayApiError (the platform’s code 400311) when no retry is left', async () => {
      const { fetch, sent } = recordingFetch();
      const client = createTrayClient({
        baseUrl: limitedUrl,
        getToken: tokensOf('limited-2'),
        fetch,
        retries: 0,
      });
      await client.counts();
      await client.counts();
      await expect(client.counts()).to.be.rejectedWith(TrayApiError).and.eventually.include({
        status: 429,
        code: 400311,
      });
      expect(sent.map((call) => call.status)).to.deep.equal([200, 200, 429]);
    });

    it('throws at once when the wait asked for is longer than maxRetryWaitMs', async () => {
      const { fetch, sent } = recordingFetch();
      const client = createTrayClient({
        baseUrl: limitedUrl,
        getToken: tokensOf('limited-3'),
        fetch,
        maxRetryWaitMs: 100,
      });
      await client.counts();
      await client.counts();
      const { ms, settled } = await timed(() => client.counts());
      await expect(settled).to.be.rejectedWith(TrayApiError, 'RateLimit Exceed');
      expect(ms, 'from the call to the rejection').to.be.below(AT_ONCE_MS);
      expect(sent).to.have.lengthOf(3);
    });

    it('stops waiting when the call’s signal aborts', async () => {
      const { fetch, sent } = recordingFetch();
      const client = createTrayClient({ baseUrl: limitedUrl, getToken: tokensOf('limited-4'), fetch });
      await client.counts();
      await client.counts();
      const controller = new AbortController();
      const call = client.counts({ signal: controller.signal });
      const reason = new Error('the user left the page');
      // Aborted once the 429 is in, while the client waits out its Retry-After: a fixed 100 ms
      // came before the refusal itself on a loaded machine, and then aborted the fetch instead.
      await waitFor(() => sent.length === 3, 10_000, 'the third call refused');
      const abortedAt = performance.now();
      controller.abort(reason);
      await expect(call).to.be.rejectedWith(reason);
      // At the abort, not once the Retry-After (a second or more) is waited out.
      expect(performance.now() - abortedAt, 'from the abort to the rejection').to.be.below(600);
      expect(sent.map((one) => one.status)).to.deep.equal([200, 200, 429]);
    });
  });

  // The app's getToken was called and its promise dropped: a token source failing later (one down,
  // or one on the same signal) was an unhandled rejection, which ends a Node process.
  describe('given a signal aborted before the call', () => {
    it('rejects with its reason at once, asking no token and sending nothing', async () => {
      let tokens = 0;
      let fetches = 0;
      const unhandled = await unhandledRejectionsOf(async () => {
        const client = createTrayClient({
          baseUrl: 'http://127.0.0.1:9',
          getToken: () => {
            tokens += 1;
            return new Promise<string>((_resolve, reject) =>
              setTimeout(() => reject(new Error('token service down')), 20),
            );
          },
          fetch: async () => {
            fetches += 1;
            return new Response('{}');
          },
        });
        const reason = new Error('the user left the page');
        await expect(client.counts({ signal: AbortSignal.abort(reason) })).to.be.rejectedWith(reason);
      }, 100);
      expect({ tokens, fetches, unhandled }).to.deep.equal({ tokens: 0, fetches: 0, unhandled: [] });
    });
  });

  // The service never redirects; an address that does (http:// moved to https://) had its POSTs
  // arrive as GETs (405) and, moved to another origin, its calls sent without the token (401).
  describe('sent to an address that answers a redirect, from scripted servers', () => {
    const servers = useScriptedServers();
    it('throws a TrayApiError naming where it was sent, following nothing and sending nothing again', async () => {
      const arrived: string[] = [];
      const target = await servers.serve((req, res) => {
        arrived.push(`${req.method ?? ''} ${req.url ?? ''}`);
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{}');
      });
      const sent: string[] = [];
      const moved = await servers.serve((req, res) => {
        sent.push(`${req.method ?? ''} ${req.url ?? ''}`);
        res.writeHead(301, { Location: `${target}${req.url ?? ''}` });
        res.end();
      });
      const client = createTrayClient({ baseUrl: moved, getToken: () => 'a-token' });
      for (const call of [() => client.counts(), () => client.read('comment', 'p-1')]) {
        const error = await call().then(
          () => undefined,
          (refused: unknown) => refused,
        );
        expect(error).to.be.instanceOf(TrayApiError).and.include({ status: 301, code: 0 });
        expect((error as TrayApiError).message).to.include(`redirect to ${target}/notifications/`);
      }
      expect(sent).to.have.lengthOf(2);
      expect(arrived).to.deep.equal([]);
    });
  });

  describe('refused with a Retry-After as long as maxRetryWaitMs, from a scripted server', () => {
    const servers = useScriptedServers();
    const waits = useRecordedWaits();
    /** A server refusing every other call with 429 and `Retry-After: 1`, answering the rest. */
    const refusingEveryOther = () => {
      let calls = 0;
      return servers.serve((_req, res) => {
        calls += 1;
        if (calls % 2 === 1) {
          res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '1' });
          res.end(JSON.stringify({ status: 'error', code: 400311, message: 'RateLimit Exceed' }));
          return;
        }
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ data: { totalUnreadCount: 2, totalUnseenCount: 2 } }));
      });
    };

    it('waits it out: only a longer wait is thrown (tried three times, the random part differing)', async function () {
      this.timeout(15_000);
      const { fetch, sent } = recordingFetch();
      const client = createTrayClient({
        baseUrl: await refusingEveryOther(),
        getToken: () => 'a-token',
        fetch,
        maxRetryWaitMs: 1_000,
      });
      for (let call = 0; call < 3; call += 1) expect((await client.counts()).totalUnreadCount).to.equal(2);
      expect(sent.map((call) => call.status)).to.deep.equal([429, 200, 429, 200, 429, 200]);
      // Never longer than maxRetryWaitMs, as asked of the timer (a loaded machine's fire late).
      expect(waits.delays).to.deep.equal([1_000, 1_000, 1_000]);
      for (const at of [1, 3, 5])
        expect(sent[at]!.sentAt - sent[at - 1]!.answeredAt).to.be.at.least(1_000 - TIMER_GRAIN_MS);
    });

    it('throws it at once when maxRetryWaitMs is a millisecond shorter', async () => {
      const { fetch, sent } = recordingFetch();
      const client = createTrayClient({
        baseUrl: await refusingEveryOther(),
        getToken: () => 'a-token',
        fetch,
        maxRetryWaitMs: 999,
      });
      const { ms, settled } = await timed(() => client.counts());
      await expect(settled).to.be.rejectedWith(TrayApiError).and.eventually.include({ status: 429 });
      expect(ms, 'from the call to the rejection').to.be.below(AT_ONCE_MS);
      expect(sent).to.have.lengthOf(1);
    });
  });

  describe('a failure the service logged', () => {
    const servers = useScriptedServers();

    it("carries the X-Request-Id the service's log line names, and none where the answer had none", async () => {
      const baseUrl = await servers.serve((req, res) => {
        const logged = req.method === 'GET';
        res.writeHead(logged ? 500 : 404, {
          'Content-Type': 'application/json',
          ...(logged ? { 'X-Request-Id': 'f3b0c7e2-4a6d-4c1e-9a57-2d1f0e6b8c31' } : {}),
        });
        res.end(JSON.stringify({ status: 'error', code: logged ? 500000 : 404000, message: 'no' }));
      });
      const client = createTrayClient({ baseUrl, getToken: () => 'a-token' });
      await expect(client.counts()).to.be.rejectedWith(TrayApiError).and.eventually.include({
        status: 500,
        code: 500000,
        requestId: 'f3b0c7e2-4a6d-4c1e-9a57-2d1f0e6b8c31',
      });
      await expect(client.read('post', 'p-1'))
        .to.be.rejectedWith(TrayApiError)
        .and.eventually.include({ status: 404, requestId: undefined });
    });
  });

  describe("refused with a Retry-After date by a server whose clock is not the client's", () => {
    const servers = useScriptedServers();
    const waits = useRecordedWaits();
    /** Refuses the first call with 503 and a Retry-After date 2 s after its own Date, then answers. */
    const offBy = (offsetMs: number) => {
      let calls = 0;
      return servers.serve((_req, res) => {
        calls += 1;
        if (calls === 1) {
          const serverNow = Math.floor((Date.now() + offsetMs) / 1_000) * 1_000;
          res.writeHead(503, {
            'Content-Type': 'application/json',
            Date: new Date(serverNow).toUTCString(),
            'Retry-After': new Date(serverNow + 2_000).toUTCString(),
          });
          res.end(JSON.stringify({ status: 'error', code: 503000, message: 'storage unavailable' }));
          return;
        }
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ data: { totalUnreadCount: 3 } }));
      });
    };

    for (const [name, offsetMs] of [
      ['an hour ahead', 3_600_000],
      ['an hour behind', -3_600_000],
    ] as const) {
      it(`${name}: waits the 2 s the date names by the server's Date, then sends the call again`, async () => {
        const { fetch, sent } = recordingFetch();
        const client = createTrayClient({ baseUrl: await offBy(offsetMs), getToken: () => 'a-token', fetch });
        expect(await client.counts()).to.deep.equal({ totalUnreadCount: 3 });
        expect(sent.map((one) => one.status)).to.deep.equal([503, 200]);
        const [refused, answered] = sent;
        // Not the 250 ms backoff (the date taken as past), nor a refusal at once (an hour's wait):
        // 2 s and up to a fifth more.
        expect(waits.delays).to.have.lengthOf(1);
        expect(waits.delays[0]).to.be.within(2_000, 2_400);
        expect(answered!.sentAt - refused!.answeredAt).to.be.at.least(2_000 - TIMER_GRAIN_MS);
      });
    }
  });

  describe('a call on every record of the user, refused with 503, from a scripted server', () => {
    const servers = useScriptedServers();
    const waits = useRecordedWaits();
    /** Refuses the first `refusals` calls with 503 and `retryAfter`, then answers each as the service does. */
    const refusingFirst = (refusals: number, retryAfter: string) => {
      let calls = 0;
      return servers.serve((req, res) => {
        calls += 1;
        if (calls <= refusals) {
          res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': retryAfter });
          res.end(JSON.stringify({ status: 'error', code: 503000, message: 'storage unavailable' }));
          return;
        }
        res.writeHead(200, { 'Content-Type': 'application/json' });
        const path = new URL(req.url ?? '/', 'http://scripted').pathname;
        res.end(
          JSON.stringify(
            path.includes('/records/')
              ? { data: { updated: 1 } }
              : path.endsWith('mark-all-as-read')
                ? { data: { message: 'All notifications marked as read' } }
                : { data: 'success' },
          ),
        );
      });
    };
    const allRecordCalls = {
      markAllAsRead: (client: TrayClient) => client.markAllAsRead(),
      setLastRead: (client: TrayClient) => client.setLastRead(),
      deleteAll: (client: TrayClient) => client.deleteAll(),
      'markSeen("all")': (client: TrayClient) => client.markSeen('all'),
      'archive("all")': (client: TrayClient) => client.archive('all'),
      'archive("all-read")': (client: TrayClient) => client.archive('all-read'),
    };

    for (const [name, call] of Object.entries(allRecordCalls)) {
      it(`${name}: throws a Retry-After of 3 s at once, which would take records that arrived after the call`, async () => {
        const { fetch, sent } = recordingFetch();
        const client = createTrayClient({
          baseUrl: await refusingFirst(1, '3'),
          getToken: () => 'a-token',
          fetch,
        });
        const { ms, settled } = await timed(() => call(client));
        // With the wait it asked for, to tell the user when to try again.
        await expect(settled)
          .to.be.rejectedWith(TrayApiError)
          .and.eventually.include({ status: 503, retryAfterMs: 3_000 });
        expect(ms, 'from the call to the rejection').to.be.below(AT_ONCE_MS);
        expect(sent.map((one) => one.status)).to.deep.equal([503]);
      });
    }

    it('markAllAsRead: sends it again within 2 s of the call (two backoffs of 250 and 500 ms)', async () => {
      const { fetch, sent } = recordingFetch();
      const client = createTrayClient({
        baseUrl: await refusingFirst(2, '0'),
        getToken: () => 'a-token',
        fetch,
      });
      const started = performance.now();
      await client.markAllAsRead();
      expect(performance.now() - started, 'from the call to its answer').to.be.below(2_000);
      expect(sent.map((one) => one.status)).to.deep.equal([503, 503, 200]);
      // Backoffs of 250 and 500 ms, each up to a fifth longer (jitter), as asked of the timer (a
      // loaded machine's fire late).
      expect(waits.delays).to.have.lengthOf(2);
      expect(waits.delays[0], 'the first backoff').to.be.within(250, 300);
      expect(waits.delays[1], 'the second backoff').to.be.within(500, 600);
      expect(sent[1]!.sentAt - sent[0]!.answeredAt, 'the first wait').to.be.at.least(250 - TIMER_GRAIN_MS);
      expect(sent[2]!.sentAt - sent[1]!.answeredAt, 'the second wait').to.be.at.least(500 - TIMER_GRAIN_MS);
    });

    // The random part of a wait is cut where it would go past the 2 s; a wait that then ends at the
    // 2 s mark leaves no time to send, and the call waited only to throw. The random part is held
    // at its largest here (the client draws it from Math.random), so the cut comes every time.
    for (const answerAfterMs of [700, 900]) {
      it(`markAllAsRead refused after ${answerAfterMs} ms with Retry-After: 1: sent again within the 2 s, or thrown at once, never a wait that leaves no time to send`, async function () {
        this.timeout(10_000);
        let calls = 0;
        const baseUrl = await servers.serve((_req, res) => {
          calls += 1;
          if (calls > 1) {
            res.writeHead(200, { 'Content-Type': 'application/json' });
            res.end(JSON.stringify({ data: { message: 'All notifications marked as read' } }));
            return;
          }
          setTimeout(() => {
            res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' });
            res.end(JSON.stringify({ status: 'error', code: 503000, message: 'storage unavailable' }));
          }, answerAfterMs);
        });
        const { fetch, sent } = recordingFetch();
        const client = createTrayClient({ baseUrl, getToken: () => 'a-token', fetch });
        const random = Math.random;
        Math.random = () => 0.999;
        try {
          const started = performance.now();
          const { ms, settled } = await timed(() => client.markAllAsRead());
          const refused = sent[0]!;
          const [delay] = waits.delays;
          if (delay === undefined) {
            // No wait would end in time to send: thrown at once.
            await expect(settled).to.be.rejectedWith(TrayApiError).and.eventually.include({ status: 503 });
            expect(started + ms - refused.answeredAt, 'from the 503 to the rejection').to.be.below(
              AT_ONCE_MS,
            );
          } else {
            // A wait planned to end SEND_MARGIN_MS before the 2 s are over (the client started its
            // clock within a few ms of this test's), leaving time to send.
            expect(refused.answeredAt - started + delay, 'the wait planned').to.be.at.most(
              2_000 - SEND_MARGIN_MS + 5,
            );
            const again = sent[1];
            if (again) {
              await settled;
              expect(again.sentAt - started, 'the call sent again').to.be.below(2_000);
            } else {
              // Only a loaded machine's timer, late past the margin, leaves the call to throw after it.
              await expect(settled).to.be.rejectedWith(TrayApiError);
              expect(started + ms - refused.answeredAt, 'thrown after a wait').to.be.at.least(delay);
              expect(started + ms, 'past the 2 s').to.be.at.least(2_000);
            }
          }
        } finally {
          Math.random = random;
        }
      });
    }

    it('archive() of named records and counts(): wait the 3 s out, as any call does', async function () {
      this.timeout(15_000);
      for (const call of [
        (client: TrayClient) => client.archive(['comment_p_u']),
        (client: TrayClient) => client.counts(),
      ]) {
        const { fetch, sent } = recordingFetch();
        const client = createTrayClient({
          baseUrl: await refusingFirst(1, '3'),
          getToken: () => 'a-token',
          fetch,
        });
        await call(client);
        expect(sent.map((one) => one.status)).to.deep.equal([503, 200]);
        expect(sent[1]!.sentAt - sent[0]!.answeredAt, 'the wait').to.be.at.least(3_000 - TIMER_GRAIN_MS);
      }
    });
  });

  describe('when a token is refused after a 429 was waited out (it expired during the wait), from a scripted server', () => {
    const servers = useScriptedServers();

    it('asks getToken again after the wait: a 401 is final only for a token given right after a 401', async () => {
      // token-1 is stale (the app kept it across a sleep); token-2 meets the rate limit, and by the
      // end of the wait it has expired too.
      const presented: string[] = [];
      const baseUrl = await servers.serve((req, res) => {
        const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
        const index = presented.push(token) - 1;
        const [status, body] =
          index === 1
            ? [429, { status: 'error', code: 400311, message: 'RateLimit Exceed' }]
            : token === 'token-1' || token === 'token-2'
              ? [401, { status: 'error', code: 401000, message: 'invalid token' }]
              : [200, { data: { totalUnreadCount: 3, totalUnseenCount: 3 } }];
        res.writeHead(status, { 'Content-Type': 'application/json', 'Retry-After': '0' });
        res.end(JSON.stringify(body));
      });
      let asked = 0;
      const client = createTrayClient({ baseUrl, getToken: () => `token-${++asked}` });
      expect((await client.counts()).totalUnreadCount).to.equal(3);
      expect(presented).to.deep.equal(['token-1', 'token-2', 'token-3']);
    });

    it('still throws a 401 for the token asked for right after a 401 that followed the wait', async () => {
      const presented: string[] = [];
      const baseUrl = await servers.serve((req, res) => {
        const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
        const index = presented.push(token) - 1;
        const [status, body] =
          index === 0
            ? [429, { status: 'error', code: 400311, message: 'RateLimit Exceed' }]
            : [401, { status: 'error', code: 401000, message: 'invalid token' }];
        res.writeHead(status, { 'Content-Type': 'application/json', 'Retry-After': '0' });
        res.end(JSON.stringify(body));
      });
      let asked = 0;
      const client = createTrayClient({ baseUrl, getToken: () => `token-${++asked}` });
      await expect(client.counts()).to.be.rejectedWith(TrayApiError).and.eventually.include({
        status: 401,
        code: 401000,
      });
      // The first token (429), one after the wait (401), one after that 401 (401: thrown).
      expect(presented).to.deep.equal(['token-1', 'token-2', 'token-3']);
    });
  });

  describe('when the call’s signal aborts while getToken is still pending', () => {
    const servers = useScriptedServers();
    const never = () => new Promise<string>(() => undefined);
    /** Settles as `call` does, or with 'still pending' 1 s after the abort. */
    const settledAfterAbort = async (call: Promise<unknown>, controller: AbortController, reason: Error) => {
      controller.abort(reason);
      const pending = new Promise((resolve) => setTimeout(() => resolve('still pending'), 1_000));
      return Promise.race([
        call.then(
          () => 'resolved',
          (error: unknown) => error,
        ),
        pending,
      ]);
    };

    it('rejects with the abort’s reason at once, before the first token', async () => {
      const client = createTrayClient({ baseUrl: 'http://127.0.0.1:9', getToken: never });
      const controller = new AbortController();
      const reason = new Error('the user left the page');
      const call = client.counts({ signal: controller.signal });
      expect(await settledAfterAbort(call, controller, reason)).to.equal(reason);
    });

    it('rejects with the abort’s reason at once, while asking again after a 401', async () => {
      const baseUrl = await servers.serve((_req, res) => {
        res.writeHead(401, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ status: 'error', code: 401000, message: 'jwt expired' }));
      });
      let asked = 0;
      const client = createTrayClient({
        baseUrl,
        getToken: () => (asked++ === 0 ? 'an-expired-token' : never()),
      });
      const controller = new AbortController();
      const reason = new Error('the user left the page');
      const call = client.counts({ signal: controller.signal });
      while (asked < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await settledAfterAbort(call, controller, reason)).to.equal(reason);
    });
  });

  describe('a call naming an `until`, refused with 503, from a scripted server', () => {
    const servers = useScriptedServers();
    /** Refuses the first call with 503 and `retryAfter`, then answers as the service does. */
    const refusingFirst = (retryAfter: string) => {
      let calls = 0;
      return servers.serve((req, res) => {
        calls += 1;
        if (calls === 1) {
          res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': retryAfter });
          res.end(JSON.stringify({ status: 'error', code: 503000, message: 'storage unavailable' }));
          return;
        }
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify(
            req.url?.includes('/records/')
              ? { data: { updated: 1 } }
              : { data: { targetType: 'post', targetId: 'p', createdAt: 1, until: 2 } },
          ),
        );
      });
    };
    const untilCalls = {
      snooze: (client: TrayClient, until: number | string) => client.snooze(['comment_p_u'], until),
      mute: (client: TrayClient, until: number | string) =>
        client.mute({ targetType: 'post', targetId: 'p', until }),
    };

    for (const [name, call] of Object.entries(untilCalls)) {
      // The service refuses an `until` that is past (400): sent again after it, the call could only
      // fail, with a message about the time the app gave.
      it(`${name}: throws a Retry-After of 3 s at once when its until comes sooner`, async () => {
        for (const until of [Date.now() + 1_500, new Date(Date.now() + 1_500).toISOString()]) {
          const { fetch, sent } = recordingFetch();
          const client = createTrayClient({
            baseUrl: await refusingFirst('3'),
            getToken: () => 'a-token',
            fetch,
          });
          const { ms, settled } = await timed(() => call(client, until));
          await expect(settled).to.be.rejectedWith(TrayApiError).and.eventually.include({ status: 503 });
          expect(ms, 'from the call to the rejection').to.be.below(AT_ONCE_MS);
          expect(sent.map((one) => one.status)).to.deep.equal([503]);
        }
      });

      it(`${name}: waits the Retry-After out when its until is later`, async () => {
        const { fetch, sent } = recordingFetch();
        const client = createTrayClient({
          baseUrl: await refusingFirst('1'),
          getToken: () => 'a-token',
          fetch,
        });
        await call(client, Date.now() + 60_000);
        expect(sent.map((one) => one.status)).to.deep.equal([503, 200]);
        expect(sent[1]!.sentAt - sent[0]!.answeredAt, 'the wait').to.be.at.least(1_000 - TIMER_GRAIN_MS);
      });
    }
  });

  describe('when the call’s signal aborts while the body of a refusal is read, from a scripted server', () => {
    const servers = useScriptedServers();

    it('rejects with the abort’s reason, not a TrayApiError for a body it could not read', async () => {
      const baseUrl = await servers.serve((_req, res) => {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        // The body's start, then nothing until the client goes.
        res.write('{"status": "error", ');
      });
      const controller = new AbortController();
      const client = createTrayClient({ baseUrl, getToken: () => 'a-token' });
      const reason = new Error('the user left the page');
      setTimeout(() => controller.abort(reason), 200);
      await expect(client.counts({ signal: controller.signal })).to.be.rejectedWith(reason);
    });
  });

  describe('a service that does not answer within timeoutMs, from a scripted server', () => {
    const servers = useScriptedServers();
    const isTimeout = (error: unknown) => error instanceof DOMException && error.name === 'TimeoutError';

    it('rejects with a TimeoutError when no answer comes, and sends the call once', async () => {
      let calls = 0;
      const baseUrl = await servers.serve(() => {
        calls += 1; // holds the connection, never answers
      });
      const client = createTrayClient({ baseUrl, getToken: () => 'a-token', timeoutMs: 300 });
      const began = performance.now();
      const error: unknown = await client.counts().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(isTimeout(error), String(error)).to.equal(true);
      expect(performance.now() - began).to.be.within(300 - TIMER_GRAIN_MS, 2_000);
      expect(calls).to.equal(1);
    });

    it('rejects with a TimeoutError when the answer stops halfway through its body', async () => {
      const baseUrl = await servers.serve((_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.write('{"data": {"totalUnreadCount": 2,');
      });
      const client = createTrayClient({ baseUrl, getToken: () => 'a-token', timeoutMs: 300 });
      const error: unknown = await client.counts().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(isTimeout(error), String(error)).to.equal(true);
    });

    it('gives each sending its own time: a Retry-After wait longer than timeoutMs is waited out', async () => {
      let calls = 0;
      const baseUrl = await servers.serve((_req, res) => {
        calls += 1;
        if (calls === 1) {
          res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' });
          res.end(JSON.stringify({ status: 'error', code: 503000, message: 'storage unavailable' }));
          return;
        }
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ data: { totalUnreadCount: 4, totalUnseenCount: 4 } }));
      });
      const client = createTrayClient({ baseUrl, getToken: () => 'a-token', timeoutMs: 300 });
      expect((await client.counts()).totalUnreadCount).to.equal(4);
      expect(calls).to.equal(2);
    });

    it('rejects with the caller’s own reason when its signal aborts first', async () => {
      const baseUrl = await servers.serve(() => undefined);
      const client = createTrayClient({ baseUrl, getToken: () => 'a-token', timeoutMs: 5_000 });
      const reason = new Error('the user left the page');
      const controller = new AbortController();
      setTimeout(() => controller.abort(reason), 100);
      await expect(client.counts({ signal: controller.signal })).to.be.rejectedWith(reason);
    });
  });

  describe('answered 200 with a JSON body that does not parse, from a scripted server', () => {
    const servers = useScriptedServers();

    it('throws a TrayApiError (status 200, code 0), not the parser’s SyntaxError', async () => {
      const baseUrl = await servers.serve((_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{"data": {"totalUnreadCount": 2,');
      });
      const client = createTrayClient({ baseUrl, getToken: () => 'a-token' });
      await expect(client.counts())
        .to.be.rejectedWith(TrayApiError, 'not valid JSON')
        .and.eventually.include({ status: 200, code: 0 });
    });
  });

  // A gateway's own JSON error ({code, message}, grpc-gateway or Kubernetes style) is not the
  // service's: its code means nothing here.
  describe("answered 502 with a gateway's JSON error, from a scripted server", () => {
    const servers = useScriptedServers();

    it("throws a TrayApiError with code 0 and the status, not the gateway's code", async () => {
      const baseUrl = await servers.serve((_req, res) => {
        res.writeHead(502, { 'Content-Type': 'application/json' });
        res.end('{"code":14,"message":"upstream connect error"}');
      });
      const client = createTrayClient({ baseUrl, getToken: () => 'a-token', retries: 0 });
      await expect(client.counts())
        .to.be.rejectedWith(TrayApiError)
        .and.eventually.include({ status: 502, code: 0 });
    });
  });

  describe('while the storage is down (503 with Retry-After: 5)', () => {
    const postgres = useStoppablePostgres();
    let downUrl: string;
    before(async () => {
      downUrl = await api.serve(api.harness.app({ storage: await postgres.openStorage() }));
      await postgres.stop();
    });

    it('sends the call again after the wait, at most `retries` times, then throws the 503', async function () {
      this.timeout(30_000);
      const { fetch, sent } = recordingFetch();
      const client = createTrayClient({
        baseUrl: downUrl,
        getToken: tokensOf('down-user'),
        fetch,
        retries: 1,
      });
      await expect(client.counts()).to.be.rejectedWith(TrayApiError).and.eventually.include({
        status: 503,
        code: 503000,
      });
      expect(sent.map((call) => [call.status, call.retryAfter])).to.deep.equal([
        [503, '5'],
        [503, '5'],
      ]);
      expect(sent[1]!.sentAt - sent[0]!.answeredAt).to.be.at.least(5_000);
    });
  });
});
