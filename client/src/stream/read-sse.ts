import type { SseMessage, SseParser } from './sse-parser.ts';

/**
 * The events of one open stream's body, until it ends, drops, or stays silent for `idleTimeoutMs`
 * (the service writes a comment every 15 s, so silence means a connection that died without a
 * close, which TCP alone may not notice for minutes). Never throws: however the body ends, the
 * caller reconnects or stops.
 */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  parser: SseParser,
  idleTimeoutMs: number,
  /** Called once the events of each chunk are all taken: the parser's state is then the caller's. */
  afterChunk: () => void = () => undefined,
  /** Called when the body is given up as silent (idleTimeoutMs): a failure the caller tells. */
  onIdle: () => void = () => undefined,
): AsyncGenerator<SseMessage, void, undefined> {
  const reader = body.getReader();
  // One decoder for the whole body: a character may be split across two chunks.
  const decoder = new TextDecoder();
  try {
    for (;;) {
      // Cancelling the reader ends the pending read with `done` and closes the connection.
      const idle = setTimeout(() => {
        onIdle();
        void reader.cancel().catch(() => undefined);
      }, idleTimeoutMs);
      // A read fails when the connection drops or the caller aborts: either way this stream is over.
      const chunk = await reader.read().catch(() => undefined);
      clearTimeout(idle);
      if (chunk === undefined || chunk.done) return;
      yield* parser.push(decoder.decode(chunk.value, { stream: true }));
      afterChunk();
      // A damaged body (an event that never ends): this stream is over, as after a drop.
      if (parser.overflowed) return;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
