import type { ErrorRequestHandler } from 'express';
import { AppError } from '../../shared/errors/app-error.ts';
import { InvalidCursorError } from '../domain/invalid-cursor-error.ts';

/**
 * The one place the domain's typed errors become HTTP answers: the domain knows no status codes.
 * Anything else goes on to the next error handler.
 */
export const mapDomainErrors: ErrorRequestHandler = (error: unknown, _req, _res, next) => {
  next(
    error instanceof InvalidCursorError ? new AppError('VALIDATION', error.message, { cause: error }) : error,
  );
};
