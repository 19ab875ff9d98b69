import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { AppError } from '../../../shared/errors/app-error.ts';
import { callerId } from '../auth/require-user.ts';
import type { AdmissionLedger } from './admission-ledger.ts';

/**
 * Counts one call of `userId`: within the limit, the X-RateLimit headers; over it, 429 with the
 * platform's 400311 (docs/contract.md#errors); 503 when it cannot count. The ledger hears either.
 */
async function countCall(
  limiter: RateLimiterAbstract,
  ledger: AdmissionLedger | undefined,
  res: Response,
  userId: string,
): Promise<void> {
  let state: RateLimiterRes;
  try {
    state = await limiter.consume(userId);
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes) {
      ledger?.learned(userId, 0, rejection.msBeforeNext);
      throw new AppError('RATE_LIMITED', 'RateLimit Exceed', {
        headers: {
          'Retry-After': String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))),
          'X-RateLimit-Limit': String(limiter.points),
          'X-RateLimit-Remaining': '0',
        },
      });
    }
    throw new AppError('UNAVAILABLE', 'rate limiter is unavailable, try again later', {
      cause: rejection,
      headers: { 'Retry-After': '5' },
    });
  }
  ledger?.learned(userId, state.remainingPoints, state.msBeforeNext);
  // A read that went ahead may have failed and answered already.
  if (!res.headersSent) {
    res.set({
      'X-RateLimit-Limit': String(limiter.points),
      'X-RateLimit-Remaining': String(state.remainingPoints),
    });
  }
}

/** Counts one call for the authenticated caller before the route runs; over the limit: 429. */
export function limitPerUser(limiter: RateLimiterAbstract, ledger?: AdmissionLedger): RequestHandler {
  return async (_req, res, next) => {
    await countCall(limiter, ledger, res, callerId(res));
    next();
  };
}

/**
 * For routes that only read. Like limitPerUser, except that when the ledger finds the caller well
 * within the limit (admission-ledger.ts) the route starts at once, so its storage read overlaps
 * the Redis round trip that counts the call instead of following it, and goes out first. Such a
 * route must `await admitted(res)` before it answers: the call is counted all the same, and an over-limit
 * call is refused with the same 429, its read discarded. Routes that change anything keep
 * limitPerUser: nothing may change before the call is counted.
 */
export function limitPerUserAhead(limiter: RateLimiterAbstract, ledger: AdmissionLedger): RequestHandler {
  return async (_req, res, next) => {
    const userId = callerId(res);
    if (!ledger.mayGoAhead(userId)) {
      await countCall(limiter, ledger, res, userId);
      next();
      return;
    }
    const counted = ledger.wentAhead(userId);
    // The count is sent once this turn of the event loop is over, after the route's storage
    // statement (which node-postgres sends on the next tick): the read is the longer wait, so it
    // starts first and the count's round trip runs under it instead of delaying its start. Side by
    // side in one process this was faster on 13-15 of bench:api's 18 calls (BENCHMARKS.md).
    const admission = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => countCall(limiter, ledger, res, userId))
      .finally(counted);
    // The route awaits it; should the route fail first, its rejection must not go unhandled.
    admission.catch(() => undefined);
    res.locals.admission = admission;
    next();
  };
}

/** Once the caller's call is counted (at once if it was before the route); rejects with its 429. */
export async function admitted(res: Response): Promise<void> {
  const admission: unknown = res.locals.admission;
  if (admission instanceof Promise) await admission;
}

/**
 * For a router of reads that go ahead, after its routes: a route that fails (a refused input, a
 * storage error) before its call is counted answers once it is, with the X-RateLimit headers, or
 * with the 429 instead when the call was over the limit.
 */
export const admittedBeforeError: ErrorRequestHandler = async (error: unknown, _req, res, next) => {
  try {
    await admitted(res);
  } catch (refusal) {
    next(refusal);
    return;
  }
  next(error);
};
