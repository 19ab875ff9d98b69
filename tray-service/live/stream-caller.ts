import type { RequestHandler } from 'express';
import { AppError } from '../../shared/errors/app-error.ts';
import { requireUser } from '../http/auth/require-user.ts';
import type { TokenVerifier } from '../http/auth/create-token-verifier.ts';
import type { StreamTickets } from './stream-tickets.ts';
import { TicketRefused } from '../http/auth/ticket-refused.ts';

/**
 * The stream's caller: from `?ticket=` (redeemed, so it works once) when given, else from the
 * bearer token like every other tray call. Sets `res.locals.userId` as requireUser does, and the
 * expiry of the token that asked for the ticket, so the stream ends with that token.
 */
export function streamCaller(verify: TokenVerifier, tickets: StreamTickets): RequestHandler {
  const bearer = requireUser(verify);
  return async (req, res, next) => {
    const ticket = req.query.ticket;
    if (ticket === undefined) return bearer(req, res, next);
    const holder = typeof ticket === 'string' ? await tickets.redeem(ticket) : undefined;
    if (holder === undefined || (holder.expiresAt !== undefined && holder.expiresAt <= Date.now())) {
      throw new AppError(
        'UNAUTHORIZED',
        'ticket is unknown, expired or already used (POST /notifications/v3/stream-ticket issues one)',
        { cause: new TicketRefused(), headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } },
      );
    }
    res.locals.userId = holder.userId;
    if (holder.expiresAt !== undefined) res.locals.tokenExpiresAt = holder.expiresAt;
    next();
  };
}
