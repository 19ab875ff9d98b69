import type { Request } from 'express';
import { errors } from 'jose';
import type { AppError } from '../../../shared/errors/app-error.ts';
import { bearerToken } from './bearer-token.ts';

/**
 * Whether a refused tray call guessed at a credential, and so counts against its address
 * (AUTH_FAILURE_LIMIT): a bearer token sent that did not verify (a forged one, or a wrong
 * METRICS_TOKEN). Not a call without one, which another site's page can make from a visitor's
 * browser (an image, an EventSource) to lock the visitor's address out; not a stream ticket, whose
 * 256 random bits no count would protect, for the same reason; and not a token whose signature
 * verified but whose time is up (jose checks the claims after the signature), which an app back end
 * relays for its users from one address.
 */
export function isTokenGuess(req: Request, error: AppError): boolean {
  return bearerToken(req.get('authorization')) !== undefined && !(error.cause instanceof errors.JWTExpired);
}
