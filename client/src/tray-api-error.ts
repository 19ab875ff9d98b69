/**
 * A refusal from the tray API, carrying the service's stable numeric error code (docs/contract.md#errors
 * lists them: 400001 validation, 401000 authentication, 401001 a globally banned user, 400311 rate
 * limit, ...) so callers branch on the code rather than on message text, which may be reworded.
 * `code` is 0 when the answer was not the service's error shape (a proxy's error page, say), or
 * was a success whose body was not JSON.
 */
export class TrayApiError extends Error {
  readonly code: number;
  readonly status: number;
  /**
   * The service's X-Request-Id of a failure it logged (a 5xx): quote it, and its operator finds
   * the log line. Undefined on any other answer.
   */
  readonly requestId: string | undefined;
  /**
   * The wait the refusal asked for (its `Retry-After`, in ms from when it was answered by the
   * service's clock), when it named one: a 429 or 503 thrown instead of waited out (no retry left,
   * a longer wait than `maxRetryWaitMs`, a call on every record) says when to offer the user a retry.
   */
  readonly retryAfterMs: number | undefined;

  constructor(status: number, code: number, message: string, requestId?: string, retryAfterMs?: number) {
    super(message);
    this.name = 'TrayApiError';
    this.status = status;
    this.code = code;
    this.requestId = requestId;
    this.retryAfterMs = retryAfterMs;
  }
}
