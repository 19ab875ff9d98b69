import type { Request } from 'express';
import { errors } from 'jose';
import type { AppError } from '../../../shared/errors/app-error.ts';
import { bearerToken } from '../../../shared/http/bearer-token.ts';
import { SignedTokenRefused } from './create-token-verifier.ts';
import { TicketRefused } from './ticket-refused.ts';

/**
 * Whether a refused tray call guessed at a credential, and so counts against its address
 * (AUTH_FAILURE_LIMIT): a bearer token sent that did not verify (a forged one, or a wrong
 * METRICS_TOKEN). Not a call without one, which another site's page can make from a visitor's
 * browser (an image, an EventSource) to lock the visitor's address out; not a stream ticket, whose
 * 256 random bits no count would protect, for the same reason (also when a bearer token was sent
 * beside it: the ticket decided, and the token was never read); and not a token whose signature
 * verified but which is refused all the same (jose checks the claims after the signature): expired,
 * not yet valid (an issuer whose clock runs ahead), of another issuer or audience, naming no user.
 * Such a token was issued with the real key, and an app back end relays its users' tokens from one
 * address.
 *
 * `tokenOf` reads the bearer token as the refusing check read it: the admin API takes any run of
 * non-space characters (ADMIN_TOKEN may hold them), so its guesses are read that way too.
 */
export function isTokenGuess(
  req: Request,
  error: AppError,
  tokenOf: (req: Request) => string | undefined = (one) => bearerToken(one.get('authorization')),
): boolean {
  return tokenOf(req) !== undefined && !verifiedButRefused(error) && !(error.cause instanceof TicketRefused);
}

/** A refusal of a token whose signature verified (expired, not yet valid, another audience...). */
export function verifiedButRefused(error: AppError): boolean {
  return (
    error.cause instanceof errors.JWTExpired ||
    error.cause instanceof errors.JWTClaimValidationFailed ||
    error.cause instanceof SignedTokenRefused
  );
}
