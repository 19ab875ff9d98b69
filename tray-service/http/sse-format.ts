/**
 * Server-sent event framing (https://html.spec.whatwg.org/multipage/server-sent-events.html).
 * `data` is one JSON line: JSON.stringify escapes line breaks inside strings.
 */
export function sseEvent(event: string, id: string, data: unknown): string {
  return `event: ${event}\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A comment line: keeps proxies and the client's connection from idling out. */
export function sseComment(text: string): string {
  return `: ${text}\n\n`;
}

/** Tells the client how long to wait before it reconnects. */
export function sseRetry(ms: number): string {
  return `retry: ${Math.round(ms)}\n\n`;
}
