import { expect } from 'chai';
import { openTrayStream, type TrayStreamOptions } from '../../../client/src/stream/index.ts';
import { useScriptedServers } from '../support/scripted-servers.ts';
import { collectStream } from './support/collect-stream.ts';
import { eventStreamHead, scriptedStream, sseEvent } from './support/scripted-stream.ts';

/** openTrayStream's options, checked and completed when it is called. */
describe('openTrayStream’s options', function () {
  this.timeout(20_000);
  const aborts: AbortController[] = [];
  afterEach(() => {
    for (const controller of aborts.splice(0)) controller.abort();
  });
  const servers = useScriptedServers();
  const call = (options: Partial<TrayStreamOptions>) => () => {
    const controller = new AbortController();
    aborts.push(controller);
    return openTrayStream({
      baseUrl: 'http://127.0.0.1:9',
      getToken: () => 'a-token',
      signal: controller.signal,
      ...options,
    });
  };

  describe('baseUrl', () => {
    it('refuses one that is not an http(s) URL, at the call, naming it (no page to resolve it against in Node)', () => {
      for (const baseUrl of [
        'tray.example.org',
        '',
        '/tray',
        'tray.example.org:8080',
        'ws://tray.example.org',
        'https://gw.example.org/tray?key=abc',
        'https://gw.example.org/tray#x',
      ])
        expect(call({ baseUrl }), baseUrl).to.throw(
          TypeError,
          `openTrayStream: baseUrl must be an http(s) URL without a query or fragment (in a browser, it may be relative to the page), got ${JSON.stringify(baseUrl)}`,
        );
    });

    it('resolves one relative to the page where there is one (a browser’s location): "" is its origin', async () => {
      const script = scriptedStream((res) => {
        res.writeHead(200, eventStreamHead);
        res.write(sseEvent('unread', '1', { totalUnreadCount: 1, totalUnseenCount: 0 }));
      });
      const origin = await servers.serve(script.handler);
      // What a page at `origin` has; Node has no location of its own.
      Object.defineProperty(globalThis, 'location', {
        value: { href: `${origin}/app/page?tab=tray` },
        configurable: true,
      });
      let stream: ReturnType<typeof collectStream>;
      try {
        stream = collectStream(call({ baseUrl: '' })());
      } finally {
        Reflect.deleteProperty(globalThis, 'location');
      }
      expect((await stream.next('unread')).id).to.equal('1');
      expect(script.tickets).to.have.lengthOf(1);
    });
  });

  describe('reconnect and idleTimeoutMs', () => {
    it('refuses a wait that is not a finite number above 0, at the call, naming it', () => {
      for (const [options, named] of [
        [{ reconnect: { initialMs: 0 } }, 'reconnect.initialMs must be a finite number above 0, got 0'],
        [{ reconnect: { maxMs: -1 } }, 'reconnect.maxMs must be a finite number above 0, got -1'],
        [{ reconnect: { maxMs: Number.NaN } }, 'reconnect.maxMs must be a finite number above 0, got NaN'],
        [{ reconnect: { initialMs: Infinity } }, 'reconnect.initialMs must be a finite number above 0'],
        [{ idleTimeoutMs: 0 }, 'idleTimeoutMs must be a finite number above 0, got 0'],
        // A timer cannot count that long: it would fire at once, and every read would time out.
        [{ idleTimeoutMs: 2 ** 31 }, 'idleTimeoutMs must be at most 2147483647 (a timer’s longest)'],
      ] as const)
        expect(call(options), JSON.stringify(options)).to.throw(TypeError, `openTrayStream: ${named}`);
    });

    it('takes the default for a wait given as undefined: no tight loop of reconnects', async () => {
      const script = scriptedStream((res) => {
        res.writeHead(200, eventStreamHead);
        res.end(': nothing\n\n');
      });
      const baseUrl = await servers.serve(script.handler);
      for (const reconnect of [
        { initialMs: 200, maxMs: undefined },
        { initialMs: undefined, maxMs: 5_000 },
      ]) {
        const stream = collectStream(call({ baseUrl, reconnect })());
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        aborts.splice(0).forEach((controller) => controller.abort());
        expect(await stream.ended).to.equal(undefined);
        // The default backoff waits 0.5 s at the least before the second attempt.
        expect(script.requests.splice(0).length, JSON.stringify(reconnect)).to.be.below(20);
      }
    });
  });
});
