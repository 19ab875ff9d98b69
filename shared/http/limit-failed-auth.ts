import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { AppError } from '../errors/app-error.ts';
import type { Logger } from '../logging/create-logger.ts';
import type { FailedAuthLimit } from './failed-auth-limit.ts';

/** Whose failures a request counts as: an address, keyed by addressKey. */
export type AddressOf = (req: Request) => string;

/**
 * The caller's address as Express sees it: the socket's, or what a trusted proxy reported (the
 * tray's TRUST_PROXY, as `trust proxy`). The receiver reads its own TRUST_PROXY instead.
 */
const expressAddress: AddressOf = (req) => req.ip ?? req.socket.remoteAddress ?? 'unknown';

const tooMany = (ms: number) =>
  new AppError('RATE_LIMITED', 'too many failed authentication attempts from this address; try again later', {
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(ms / 1000))) },
  });

/** Refuses an address over its failed-authentication limit, before any token is looked at. */
export function refuseBlockedAddress(
  limit: FailedAuthLimit,
  addressOf: AddressOf = expressAddress,
): RequestHandler {
  return (req, _res, next) => {
    const ms = limit.blockedFor(addressOf(req));
    if (ms > 0) throw tooMany(ms);
    next();
  };
}

/**
 * Counts one failed authentication against the caller's address. A limiter that cannot count
 * (Redis and its fallback both failing) is logged; the failure is still answered as it was.
 */
export async function recordFailedAuth(
  limit: FailedAuthLimit,
  req: Request,
  logger: Logger,
  addressOf: AddressOf = expressAddress,
): Promise<void> {
  try {
    await limit.failed(addressOf(req));
  } catch (countError) {
    logger.warn({ err: (countError as Error).message }, 'failed authentication not counted');
  }
}

/**
 * Counts every failed authentication the app answers (UNAUTHORIZED: a missing, forged or expired
 * bearer token, stream ticket or admin token) against the caller's address, then lets the error
 * through unchanged, never turned into a 500. A ban (BANNED, also 401) is not counted: its token
 * verified, so it is no guess, and an app back end calling for all its users from one address
 * would otherwise be refused for everyone by one banned user's calls.
 */
export function countFailedAuth(
  limit: FailedAuthLimit,
  logger: Logger,
  options: {
    addressOf?: AddressOf;
    /**
     * Whether the refused request made a guess at all (a bearer credential sent, that did not
     * verify); every refusal when not given.
     */
    guessed?: (req: Request, error: AppError) => boolean;
  } = {},
): ErrorRequestHandler {
  const { addressOf = expressAddress, guessed = () => true } = options;
  return (error: unknown, req, _res, next) => {
    if (!(error instanceof AppError) || error.kind !== 'UNAUTHORIZED' || !guessed(req, error)) {
      next(error);
      return;
    }
    void recordFailedAuth(limit, req, logger, addressOf).then(() => next(error));
  };
}
