import { expect } from 'chai';
import { readSse } from '../../../client/src/stream/read-sse.ts';
import { createSseParser } from '../../../client/src/stream/sse-parser.ts';

/** A body whose chunks the test enqueues, and which records being cancelled. */
function body() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const state = { cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    start: (c) => void (controller = c),
    cancel: () => void (state.cancelled = true),
  });
  return { stream, controller, state };
}

const collect = async (iterable: AsyncIterable<{ event: string; data: string }>) => {
  const out: string[] = [];
  for await (const message of iterable) out.push(`${message.event}:${message.data}`);
  return out;
};

describe('readSse', () => {
  it('decodes UTF-8 split across chunks', async () => {
    const { stream, controller } = body();
    const bytes = new TextEncoder().encode('event: record\ndata: {"d":"Zoë"}\n\n');
    const cut = bytes.indexOf(0xc3) + 1; // inside the two bytes of "ë"
    controller.enqueue(bytes.slice(0, cut));
    controller.enqueue(bytes.slice(cut));
    controller.close();
    expect(await collect(readSse(stream, createSseParser(), 1_000))).to.deep.equal(['record:{"d":"Zoë"}']);
  });

  it('ends, and cancels the body, when nothing arrives for idleTimeoutMs', async () => {
    const { stream, controller, state } = body();
    controller.enqueue(new TextEncoder().encode('event: unread\ndata: {}\n\n'));
    const started = Date.now();
    let idle = 0;
    const read = readSse(stream, createSseParser(), 200, undefined, () => (idle += 1));
    expect(await collect(read)).to.deep.equal(['unread:{}']);
    expect(Date.now() - started).to.be.within(150, 2_000);
    expect(state.cancelled).to.equal(true);
    // The caller tells the app why the stream ended (onError's `idle-timeout`).
    expect(idle).to.equal(1);
  });

  it('ends without throwing when the body fails (a dropped connection)', async () => {
    const { stream, controller } = body();
    controller.enqueue(new TextEncoder().encode('event: unread\ndata: {}\n\n'));
    setTimeout(() => controller.error(new TypeError('terminated')), 50);
    let idle = 0;
    const read = readSse(stream, createSseParser(), 5_000, undefined, () => (idle += 1));
    expect(await collect(read)).to.deep.equal(['unread:{}']);
    expect(idle, 'not silent: dropped').to.equal(0);
  });
});
