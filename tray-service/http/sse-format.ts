/**
 * Server-sent event framing (https://html.spec.whatwg.org/multipage/server-sent-events.html).
 * `data` is one JSON line: JSON.stringify escapes line breaks inside strings.
 */
export function sseEvent(event: string, id: string | undefined, data: unknown): string {
  // Without an id line the client keeps the last id it had (EventSource's last event id buffer).
  return `event: ${event}\n${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`;
}

/** A comment line: keeps proxies and the client's connection from idling out. */
export function sseComment(text: string): string {
  return `: ${text}\n\n`;
}

/**
 * An id with no event: a browser's EventSource (and the client package) takes it as the last
 * event id without dispatching anything, so a reconnect sends it.
 */
export function sseId(id: string): string {
  return `id: ${id}\n\n`;
}

/** Tells the client how long to wait before it reconnects. */
export function sseRetry(ms: number): string {
  return `retry: ${Math.round(ms)}\n\n`;
}
