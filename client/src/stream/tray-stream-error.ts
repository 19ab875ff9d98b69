/**
 * Why a stream that opened came to nothing, as `onError` is told of it before the wait to reconnect
 * (docs/client.md, "Live"). Never thrown: the iterator waits each of these out.
 * - `ended-early`: it ended at once, or right after the `unread` every stream opens with (a service
 *   that cannot read what the stream missed ends it there), without staying open `maxMs`.
 * - `damaged-event`: an event's data was not JSON (damaged on the way); asked for again.
 * - `oversized-event`: an event, or a line, grew past MAX_EVENT_CHARS without its end.
 * - `idle-timeout`: nothing came for `idleTimeoutMs`; the connection was taken for dead.
 */
export type TrayStreamErrorCode = 'ended-early' | 'damaged-event' | 'oversized-event' | 'idle-timeout';

/**
 * A failure of an open stream, which the stream waits out: its `code` is stable, for an app to
 * branch on; its message, which says what happened, may be reworded.
 */
export class TrayStreamError extends Error {
  readonly code: TrayStreamErrorCode;

  constructor(code: TrayStreamErrorCode, message: string) {
    super(message);
    this.name = 'TrayStreamError';
    this.code = code;
  }
}
