/** One dispatched server-sent event. */
export interface SseMessage {
  event: string;
  data: string;
  /** The stream's last event id when this event was dispatched ('' before any). */
  id: string;
}

export interface SseParser {
  /** Feeds decoded text (any chunking) and returns the events it completed, in order. */
  push(text: string): SseMessage[];
  /** The last `retry:` the server sent, in ms (undefined before one). */
  readonly retryMs: number | undefined;
  /** The last `id:` the server sent, even on a block without data. */
  readonly lastEventId: string;
}

/**
 * The event-stream interpretation of the HTML standard
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation),
 * written out because EventSource cannot send a header or take a new URL per reconnect, and a
 * library would be a runtime dependency.
 */
export function createSseParser(): SseParser {
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let lastEventId = '';
  let retryMs: number | undefined;

  const field = (line: string, out: SseMessage[]) => {
    if (line === '') {
      // A blank line ends the block; a block without data dispatches nothing.
      if (data.length > 0) out.push({ event: event || 'message', data: data.join('\n'), id: lastEventId });
      event = '';
      data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'event') event = value;
    else if (name === 'data') data.push(value);
    else if (name === 'id' && !value.includes('\0')) lastEventId = value;
    else if (name === 'retry' && /^\d+$/.test(value)) retryMs = Number(value);
  };

  return {
    push(text) {
      buffer += text;
      const out: SseMessage[] = [];
      let start = 0;
      for (;;) {
        const cr = buffer.indexOf('\r', start);
        const lf = buffer.indexOf('\n', start);
        const end = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
        if (end < 0) break;
        // A CR at the end of the text may be the first half of a CRLF: wait for the next chunk.
        if (end === cr && cr === buffer.length - 1) break;
        field(buffer.slice(start, end), out);
        start = end + (end === cr && buffer[cr + 1] === '\n' ? 2 : 1);
      }
      buffer = buffer.slice(start);
      return out;
    },
    get retryMs() {
      return retryMs;
    },
    get lastEventId() {
      return lastEventId;
    },
  };
}
