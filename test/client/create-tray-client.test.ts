import { expect } from 'chai';
import { createTrayClient } from '../../client/src/index.ts';
import { commentEvent, minute } from '../tray-service/worker/event-builder.ts';
import { collectStream } from './stream/support/collect-stream.ts';
import { useClientTarget } from './support/client-target.ts';
import { useScriptedServers } from './support/scripted-servers.ts';

describe('createTrayClient', function () {
  this.timeout(30_000);

  it('refuses a baseUrl that is not an http(s) URL, naming it (no page to resolve it against in Node)', () => {
    // 'localhost:8081' parses as a URL whose scheme is `localhost:`.
    // A query or a fragment: every path would be joined after it (`/tray?key=a/notifications/v3`).
    for (const baseUrl of [
      'tray.example.org',
      'localhost:8081',
      'ftp://tray.example.org',
      'https://gw.example.org/tray?key=abc',
      'https://gw.example.org/tray#x',
      'https://gw.example.org/tray?',
      '',
      '/tray',
    ])
      expect(() => createTrayClient({ baseUrl, getToken: () => 't' }), baseUrl).to.throw(
        TypeError,
        `createTrayClient: baseUrl must be an http(s) URL without a query or fragment (in a browser, it may be relative to the page), got ${JSON.stringify(baseUrl)}`,
      );
    expect(() =>
      createTrayClient({ baseUrl: 'HTTPS://tray.example.org/api', getToken: () => 't' }),
    ).not.to.throw();
  });

  // fetch throws on every call for such a URL, with a message quoting it, password and all.
  it('refuses a baseUrl with a user name or password, without quoting it', () => {
    for (const baseUrl of ['https://app:s3cret-pw@tray.example.org', 'https://app@tray.example.org/api']) {
      const make = () => createTrayClient({ baseUrl, getToken: () => 't' });
      expect(make, baseUrl).to.throw(
        TypeError,
        'createTrayClient: baseUrl must not carry a user name or password',
      );
      expect(make, baseUrl).not.to.throw(/s3cret|app@/);
    }
  });

  it('refuses retry settings that are no count or no wait (NaN would retry at once), naming them', () => {
    const make = (more: { retries?: number; maxRetryWaitMs?: number }) => () =>
      createTrayClient({ baseUrl: 'http://127.0.0.1:1', getToken: () => 't', ...more });
    expect(make({ maxRetryWaitMs: Number.NaN })).to.throw(
      TypeError,
      'maxRetryWaitMs must be a number from 0 to 86400000, got NaN',
    );
    expect(make({ maxRetryWaitMs: -1 })).to.throw(TypeError, 'maxRetryWaitMs must be a number from 0');
    // Infinity would wait out any Retry-After, a day's or a 400-digit one's, for ever.
    expect(make({ maxRetryWaitMs: Number.POSITIVE_INFINITY })).to.throw(
      TypeError,
      'maxRetryWaitMs must be a number from 0 to 86400000, got Infinity',
    );
    expect(make({ retries: Number.NaN })).to.throw(
      TypeError,
      'retries must be a whole number from 0, got NaN',
    );
    expect(make({ retries: 1.5 })).to.throw(TypeError, 'retries must be a whole number from 0');
    expect(make({ retries: 0, maxRetryWaitMs: 0 })).not.to.throw();
  });

  it('refuses a call timeout that is no wait, or never ends, naming it', () => {
    const make = (timeoutMs: number) => () =>
      createTrayClient({ baseUrl: 'http://127.0.0.1:1', getToken: () => 't', timeoutMs });
    for (const bad of [Number.NaN, 0, -5, Number.POSITIVE_INFINITY, 86_400_001])
      expect(make(bad)).to.throw(
        TypeError,
        `timeoutMs must be a number above 0 and at most 86400000, got ${bad}`,
      );
    expect(make(1)).not.to.throw();
  });

  it('refuses at once a runtime without AbortSignal.any (Safari before 17.4), which the stream needs', () => {
    const any = Object.getOwnPropertyDescriptor(AbortSignal, 'any');
    Reflect.deleteProperty(AbortSignal, 'any');
    try {
      expect(() => createTrayClient({ baseUrl: 'http://127.0.0.1:1', getToken: () => 't' })).to.throw(
        TypeError,
        'AbortSignal.any',
      );
    } finally {
      Object.defineProperty(AbortSignal, 'any', any!);
    }
  });

  describe('with a fetch that refuses to be called as another object’s method (a browser’s window.fetch)', () => {
    const servers = useScriptedServers();
    /** Node's fetch, refusing a `this` other than none or the global object as a browser's does. */
    function browserFetch(this: unknown, input: string | URL | Request, init?: RequestInit) {
      if (this !== undefined && this !== globalThis) throw new TypeError('Illegal invocation');
      return fetch(input, init);
    }

    it('calls it unbound, so every method works with it', async () => {
      const baseUrl = await servers.serve((_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ data: { totalUnreadCount: 3, totalUnseenCount: 1 } }));
      });
      const client = createTrayClient({ baseUrl, getToken: () => 'a-token', fetch: browserFetch });
      expect(await client.counts()).to.deep.equal({ totalUnreadCount: 3, totalUnseenCount: 1 });
    });
  });

  // The stream took a page-relative baseUrl and the calls refused it: a page that used one for
  // both (docs/client.md) could not make the client at all.
  describe('in a browser (a page’s location)', () => {
    const servers = useScriptedServers();

    it('resolves a baseUrl relative to the page: "" is its origin, for calls as for the stream', async () => {
      const paths: string[] = [];
      const origin = await servers.serve((req, res) => {
        paths.push(req.url ?? '');
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ data: { totalUnreadCount: 2, totalUnseenCount: 0 } }));
      });
      Object.defineProperty(globalThis, 'location', {
        value: { href: `${origin}/app/page?tab=tray` },
        configurable: true,
      });
      let client: ReturnType<typeof createTrayClient>;
      try {
        client = createTrayClient({ baseUrl: '', getToken: () => 'a-token' });
      } finally {
        Reflect.deleteProperty(globalThis, 'location');
      }
      expect(await client.counts()).to.deep.equal({ totalUnreadCount: 2, totalUnseenCount: 0 });
      expect(paths).to.deep.equal(['/notifications/v3']);
    });
  });

  describe('stream()', () => {
    const target = useClientTarget();

    for (const [how, localeOption] of [
      ['', {}],
      [' (a stream locale given as undefined)', { locale: undefined }],
    ] as const)
      it(`opens the live stream with the client’s connection and locale: the same user’s records, typed${how}`, async () => {
        const user = target.user(`u-client-stream${how === '' ? '' : '-undefined'}`);
        const controller = new AbortController();
        const client = createTrayClient({
          baseUrl: target.baseUrl,
          getToken: () => target.token(user),
          locale: 'de',
        });
        const stream = collectStream(client.stream({ signal: controller.signal, ...localeOption }));
        try {
          expect((await stream.next('unread')).data.totalUnreadCount).to.equal(0);
          await target.deliver(commentEvent({ postId: 'p-cs', postOwner: user, createdAt: minute(1) }));
          const record = await stream.next('record');
          expect(record.data.v_tarid_uid).to.equal(`comment_p-cs_${user}`);
          const [listed] = (await client.historyPage()).data;
          expect(record.data.description).to.equal(listed?.description).and.include('Cid');
          expect(record.data.description).to.not.equal('Cid commented on your post in Hiking Club');
        } finally {
          controller.abort();
        }
        expect(await stream.ended).to.equal(undefined);
      });
  });
});
