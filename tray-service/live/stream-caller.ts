import type { RequestHandler } from 'express';
import { AppError } from '../../shared/errors/app-error.ts';
import { requireUser } from '../api/auth/require-user.ts';
import type { TokenVerifier } from '../api/auth/create-token-verifier.ts';
import type { StreamTickets } from './stream-tickets.ts';

/**
 * The stream's caller: from `?ticket=` (redeemed, so it works once) when given, else from the
 * bearer token like every other tray call. Sets `res.locals.userId` as requireUser does.
 */
export function streamCaller(verify: TokenVerifier, tickets: StreamTickets): RequestHandler {
  const bearer = requireUser(verify);
  return async (req, res, next) => {
    const ticket = req.query.ticket;
    if (ticket === undefined) return bearer(req, res, next);
    const userId = typeof ticket === 'string' ? await tickets.redeem(ticket) : undefined;
    if (userId === undefined) {
      throw new AppError(
        'UNAUTHORIZED',
        'ticket is unknown, expired or already used (POST /notifications/v3/stream-ticket issues one)',
      );
    }
    res.locals.userId = userId;
    next();
  };
}
