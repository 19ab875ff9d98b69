/**
 * Every failure a client can see. The class fixes the HTTP status and a stable numeric code;
 * `code` numbers are part of the public API (docs/contract.md#errors). 400311 is the platform's own
 * rate-limit code (docs/contract.md#errors), kept so existing clients recognise it; an invalid page
 * cursor carries the platform's own message too (see invalidQueryToken).
 */
export const errorCodes = {
  BAD_REQUEST: { status: 400, code: 400000 },
  VALIDATION: { status: 400, code: 400001 },
  /** A page cursor (`startAfter`, `paginationToken`) that no earlier page handed out. */
  INVALID_QUERY_TOKEN: { status: 400, code: 400002 },
  /** A new mute when MAX_MUTES_IN_FORCE are already in force. */
  TOO_MANY_MUTES: { status: 400, code: 400003 },
  /** A new span of a target muted anew MAX_MUTE_SPANS_PER_TARGET times within the retention. */
  TOO_MANY_MUTE_SPANS: { status: 400, code: 400004 },
  /** A block of a new user when MAX_BLOCKED_USERS are already blocked. */
  BLOCK_LIST_FULL: { status: 400, code: 400005 },
  UNAUTHORIZED: { status: 401, code: 401000 },
  /**
   * A globally banned user's otherwise valid token: 401 as the contract's event catalogue fixes, with a
   * code of its own so a client stops instead of asking for another token, which would be refused too.
   */
  BANNED: { status: 401, code: 401001 },
  FORBIDDEN: { status: 403, code: 403000 },
  NOT_FOUND: { status: 404, code: 404000 },
  METHOD_NOT_ALLOWED: { status: 405, code: 405000 },
  /** A request whose headers or whole body did not arrive in time (answered by the HTTP server). */
  REQUEST_TIMEOUT: { status: 408, code: 408000 },
  GONE: { status: 410, code: 410000 },
  /** A write of a mute, a last-read time or a block for a user whose deletion is stored. */
  USER_DELETED: { status: 410, code: 410001 },
  PAYLOAD_TOO_LARGE: { status: 413, code: 413000 },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, code: 415000 },
  /** An `Expect` header other than 100-continue (answered by the HTTP server). */
  EXPECTATION_FAILED: { status: 417, code: 417000 },
  /** Request headers past the HTTP server's limit (16 KiB). */
  HEADERS_TOO_LARGE: { status: 431, code: 431000 },
  RATE_LIMITED: { status: 429, code: 400311 },
  /** Admin: every live tail the caller may have open is open (a user's streams replace their oldest). */
  TOO_MANY_STREAMS: { status: 429, code: 429001 },
  /** Every one of this instance's ADMIN_EXPORTS_MAX admin exports is running. */
  TOO_MANY_EXPORTS: { status: 429, code: 429002 },
  /** Every one of this instance's REPLAY_MAX_RUNNING replays of a filter is running. */
  TOO_MANY_REPLAYS: { status: 429, code: 429003 },
  INTERNAL: { status: 500, code: 500000 },
  /** The storage adapter in use has no inbox extensions (views, seen, archive, snooze, mutes) yet. */
  INBOX_UNSUPPORTED: { status: 501, code: 501000 },
  UNAVAILABLE: { status: 503, code: 503000 },
} as const;

export type ErrorKind = keyof typeof errorCodes;

export class AppError extends Error {
  readonly kind: ErrorKind;
  readonly status: number;
  readonly code: number;
  /** Extra response headers (Retry-After, Allow, ...). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    kind: ErrorKind,
    message: string,
    options: { headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.kind = kind;
    this.status = errorCodes[kind].status;
    this.code = errorCodes[kind].code;
    this.headers = options.headers ?? {};
  }
}

export interface ErrorBody {
  status: 'error';
  code: number;
  message: string;
}

export function errorBody(error: AppError): ErrorBody {
  return { status: 'error', code: error.code, message: error.message };
}

/**
 * The platform's wording for a page token that is wrong, kept word for word so clients written
 * against the platform recognise it: whatever is wrong with the cursor, the answer is the same.
 */
export const INVALID_QUERY_TOKEN_MESSAGE = 'Query Token is invalid';

export function invalidQueryToken(cause?: unknown): AppError {
  return new AppError(
    'INVALID_QUERY_TOKEN',
    INVALID_QUERY_TOKEN_MESSAGE,
    cause === undefined ? {} : { cause },
  );
}
