import type { RequestHandler } from 'express';

/**
 * Marks an answer as the caller's own and not to be kept: a tray or block answer holds one user's
 * records, counts or block list, and a shared cache (a proxy, a CDN) that kept it could hand it to
 * another user, or a browser's cache show it after the user signed out. Set before the routes run,
 * so errors carry it too. The live stream sets its own (no-cache, no-transform), as SSE needs.
 */
export const privateNoStore: RequestHandler = (_req, res, next) => {
  res.set('Cache-Control', 'private, no-store');
  next();
};
