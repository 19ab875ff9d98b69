import type { ErrorRequestHandler } from 'express';
import {
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from 'mongodb';
import { AppError } from '../../../shared/errors/app-error.ts';

/** True for driver errors that mean "MongoDB cannot be reached", as opposed to a bad query. */
export function isMongoUnavailable(error: unknown): boolean {
  return (
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNetworkError ||
    error instanceof MongoTopologyClosedError ||
    error instanceof MongoNotConnectedError
  );
}

/** The one place driver errors become 503; everything else goes on to the error middleware. */
export const mapStoreErrors: ErrorRequestHandler = (error: unknown, _req, _res, next) => {
  next(
    isMongoUnavailable(error)
      ? new AppError('UNAVAILABLE', 'the database is unavailable, try again later', {
          cause: error,
          headers: { 'Retry-After': '5' },
        })
      : error,
  );
};
