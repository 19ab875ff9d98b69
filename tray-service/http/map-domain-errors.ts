import type { ErrorRequestHandler } from 'express';
import { AppError } from '../../shared/errors/app-error.ts';
import { BlockListFullError } from '../domain/block-list-full-error.ts';
import { DeletedUserError } from '../domain/deleted-user-error.ts';
import { InvalidCursorError } from '../domain/invalid-cursor-error.ts';
import { InvalidUntilError } from '../domain/invalid-until-error.ts';
import { TooManyMuteSpansError } from '../domain/too-many-mute-spans-error.ts';
import { TooManyMutesError } from '../domain/too-many-mutes-error.ts';
import { InboxUnsupportedError } from '../use-cases/inbox-unsupported-error.ts';

function httpError(error: unknown): unknown {
  if (error instanceof InvalidCursorError) return new AppError('VALIDATION', error.message, { cause: error });
  if (error instanceof InvalidUntilError) return new AppError('VALIDATION', error.message, { cause: error });
  if (error instanceof TooManyMutesError)
    return new AppError('TOO_MANY_MUTES', error.message, { cause: error });
  if (error instanceof TooManyMuteSpansError)
    return new AppError('TOO_MANY_MUTE_SPANS', error.message, { cause: error });
  if (error instanceof BlockListFullError)
    return new AppError('BLOCK_LIST_FULL', error.message, { cause: error });
  if (error instanceof DeletedUserError) return new AppError('USER_DELETED', error.message, { cause: error });
  if (error instanceof InboxUnsupportedError)
    return new AppError('INBOX_UNSUPPORTED', error.message, { cause: error });
  return error;
}

/**
 * The one place the domain's typed errors become HTTP answers: the domain and the use cases know no status codes.
 * Anything else goes on to the next error handler.
 */
export const mapDomainErrors: ErrorRequestHandler = (error: unknown, _req, _res, next) => {
  next(httpError(error));
};
