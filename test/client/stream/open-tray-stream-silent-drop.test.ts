import { expect } from 'chai';
import { openTrayStream } from '../../../client/src/stream/index.ts';
import { tokenFor } from '../../tray-service/api/support/api-harness.ts';
import { useLiveTray } from '../../tray-service/live/support/live-harness.ts';
import { commentEvent, minute } from '../../tray-service/worker/event-builder.ts';
import { collectStream } from './support/collect-stream.ts';

/**
 * `body` up to the end of its first counts (`opened`, then `unread`), then silent: what a client
 * reads of a connection that died without a close (a phone switching networks), while the server
 * keeps the socket and writes its heartbeats into it. `rest` reads what the server wrote after.
 */
function silentAfterCounts(body: ReadableStream<Uint8Array>): {
  body: ReadableStream<Uint8Array>;
  rest: (until: string) => Promise<string>;
} {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let seen = '';
  const read = async (until: string) => {
    while (!seen.includes(until)) {
      const chunk = await reader.read();
      if (chunk.done) throw new Error(`the stream ended before "${until}"`);
      seen += decoder.decode(chunk.value, { stream: true });
    }
  };
  return {
    body: new ReadableStream<Uint8Array>({
      start(controller) {
        // Not awaited: the client reads what is enqueued while this goes on.
        void read('event: unread').then(
          () => controller.enqueue(new TextEncoder().encode(seen)),
          (error: unknown) => controller.error(error),
        );
      },
    }),
    rest: async (until) => {
      await read(until);
      return seen;
    },
  };
}

// Two tabs of one user at STREAMS_PER_USER 2, on two tray processes behind a load balancer.
describe('openTrayStream reconnecting after a silent drop, at STREAMS_PER_USER', function () {
  this.timeout(30_000);
  const tray = useLiveTray({ instances: 2, streamsPerUser: 2 });
  const aborts: AbortController[] = [];
  afterEach(() => {
    for (const controller of aborts.splice(0)) controller.abort();
  });
  const signal = () => {
    const controller = new AbortController();
    aborts.push(controller);
    return controller.signal;
  };

  it('takes the place of its own dead stream on the other process, not that of another tab', async () => {
    const user = 'u-two-tabs';
    const [zero, one] = [tray.instance(0).base, tray.instance(1).base];
    // Tab A: the user's oldest stream, healthy, on process 0.
    const tabA = collectStream(
      openTrayStream({ baseUrl: zero, getToken: () => tokenFor(user), signal: signal() }),
    );
    await tabA.next('unread');
    // Tab B: its first stream, on process 1, goes silent on the client's side only; it reconnects
    // after idleTimeoutMs, and the load balancer sends it to process 0.
    let dead: ReturnType<typeof silentAfterCounts> | undefined;
    const silentOnce: typeof fetch = async (input, init) => {
      const url = String(input).replace(one, dead ? zero : one);
      const response = await fetch(url, init);
      if (dead || !url.includes('/notifications/v3/stream?') || !response.body) return response;
      dead = silentAfterCounts(response.body);
      return new Response(dead.body, { status: response.status, headers: response.headers });
    };
    const tabB = collectStream(
      openTrayStream({
        baseUrl: one,
        getToken: () => tokenFor(user),
        signal: signal(),
        fetch: silentOnce,
        idleTimeoutMs: 1_000,
        reconnect: { initialMs: 100, maxMs: 200 },
      }),
    );
    await tabB.next('unread');
    await tabB.next('unread', { from: 1, timeoutMs: 10_000 });
    // Both tabs stay live: tab A, replaced, would have ended before this record.
    await tray.worker.deliver(commentEvent({ postId: 'p-tabs', postOwner: user, createdAt: minute(1) }));
    for (const tab of [tabA, tabB]) {
      await tab.next('record');
      expect(tab.events.map((event) => event.event)).to.not.include('replaced');
    }
    // Tab B's dead stream was told it was replaced: its place went to tab B's new stream.
    expect(await dead?.rest('event: replaced')).to.include('event: replaced');
  });
});
