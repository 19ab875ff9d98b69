import { errors } from 'jose';
import { AppError } from '../../../shared/errors/app-error.ts';
import { verifiedButRefused } from './is-token-guess.ts';

/**
 * Whether a refused bearer token would be refused again whenever it is sent, with this
 * configuration: its signature verified and it is expired (or past the maximum token age), of
 * another issuer or audience, or names no user. Not a token that is not valid yet (`nbf`, or `iat`
 * ahead: an issuer whose clock runs ahead), which a later call may find valid; not a forged one
 * (counted against its address instead: is-token-guess.ts); not one whose keys could not be had.
 */
export function refusedForGood(error: unknown): error is AppError {
  if (!(error instanceof AppError) || !verifiedButRefused(error)) return false;
  const { cause } = error;
  return !(
    cause instanceof errors.JWTClaimValidationFailed &&
    (cause.claim === 'nbf' || cause.claim === 'iat')
  );
}
