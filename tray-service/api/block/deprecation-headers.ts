import type { RequestHandler } from 'express';

/** 9.3: the block-list beta is removed on 28 February 2024. */
export const BLOCK_SUNSET = new Date(Date.UTC(2024, 1, 28));

/**
 * Deprecation (RFC 9745) and Sunset (RFC 8594) on every block-list response, errors included.
 * The platform gives no deprecation date, only the removal date, so that date is stated for both.
 */
export const deprecationHeaders: RequestHandler = (_req, res, next) => {
  res.set({
    Deprecation: `@${BLOCK_SUNSET.getTime() / 1000}`,
    Sunset: BLOCK_SUNSET.toUTCString(),
  });
  next();
};
