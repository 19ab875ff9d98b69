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
  /**
   * The id of the last block dispatched (its blank line read), even of one without data; never an
   * id of a block still open, which a dropped connection may never finish.
   */
  readonly lastEventId: string;
  /**
   * An event, or a line, grew past MAX_EVENT_CHARS without its end: the parser has dropped it and
   * takes nothing more. The body is damaged (a proxy or a server that never ends a line), and
   * buffering it would grow memory for as long as bytes keep coming.
   */
  readonly overflowed: boolean;
}

/**
 * The longest event (its data lines and the line being read) a parser keeps, in UTF-16 code
 * units: far above any event of the tray service, whose stream is cut off once 1 MiB waits for a
 * client.
 */
export const MAX_EVENT_CHARS = 8 * 1024 * 1024;

/**
 * The event-stream interpretation of the HTML standard
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation),
 * written out because EventSource cannot send a header or take a new URL per reconnect, and a
 * library would be a runtime dependency. One parser per body: whatever a body that ends leaves
 * unfinished (a block without its blank line, a line without its end) is dropped with it, as the
 * spec drops it.
 */
export function createSseParser(): SseParser {
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let lastEventId = '';
  // The spec's "last event ID buffer": an `id:` line sets it, and only dispatch makes it the
  // stream's last event id. Resuming from an id whose event was never yielded would skip that event.
  let pendingId = '';
  let retryMs: number | undefined;
  /** Characters of the open block's data lines. */
  let dataChars = 0;
  let overflowed = false;

  const field = (line: string, out: SseMessage[]) => {
    if (line === '') {
      // A blank line ends the block: its id (or an earlier block's) becomes the last event id, also
      // for a block without data, which dispatches nothing else.
      lastEventId = pendingId;
      if (data.length > 0) out.push({ event: event || 'message', data: data.join('\n'), id: lastEventId });
      event = '';
      data = [];
      dataChars = 0;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'event') event = value;
    else if (name === 'data') {
      data.push(value);
      dataChars += value.length + 1;
    } else if (name === 'id' && !value.includes('\0')) pendingId = value;
    else if (name === 'retry' && /^\d+$/.test(value)) retryMs = Number(value);
  };

  // A CR ended the text pushed last: an LF first in the next is the second half of that CRLF.
  let skipLf = false;

  return {
    push(text) {
      const out: SseMessage[] = [];
      if (overflowed) return out;
      let start = 0;
      if (skipLf && text !== '') {
        skipLf = false;
        if (text.startsWith('\n')) start = 1;
      }
      // One pass over the text: each line end is found once, however many lines a chunk holds.
      const lineEnd = /\r\n|\r|\n/g;
      lineEnd.lastIndex = start;
      for (let found = lineEnd.exec(text); found !== null; found = lineEnd.exec(text)) {
        // Only the first line of a text can have begun in an earlier one.
        field(buffer + text.slice(start, found.index), out);
        buffer = '';
        start = lineEnd.lastIndex;
      }
      buffer += text.slice(start);
      if (buffer.length + dataChars > MAX_EVENT_CHARS) {
        overflowed = true;
        buffer = '';
        data = [];
        dataChars = 0;
        return out;
      }
      // A CR ends its line at once (an event ended by CRs is dispatched now, not with the next text).
      if (text.endsWith('\r')) skipLf = true;
      return out;
    },
    get retryMs() {
      return retryMs;
    },
    get lastEventId() {
      return lastEventId;
    },
    get overflowed() {
      return overflowed;
    },
  };
}
