import { Router, type RequestHandler } from 'express';
import { AppError } from '../../../shared/errors/app-error.ts';
import { loadConsoleAssets } from './console-assets.ts';
import { CONSOLE_CSP, consolePage } from './console-page.ts';

export interface ConsoleRouterDeps {
  /** Where the admin router is mounted (/admin): the page's links and API calls start with it. */
  mountPath: string;
  /** ADMIN_LIST_MAX_LIMIT: the scripts' pages are no larger. */
  listMaxLimit: number;
  /**
   * Lets a signed-in admin through to the page and sends anyone else to the sign-in form (the
   * /admin session); the assets need none of it, as they carry no data.
   */
  requirePageSession: RequestHandler;
}

/**
 * The events console (docs/operations.md#events-console): GET /console, the HTML shell, and
 * GET /console/assets/:name, its scripts and style sheets. Everything it shows it reads from the
 * admin JSON API in the browser, with the session's cookie.
 */
export function createConsoleRouter(deps: ConsoleRouterDeps): Router {
  const router = Router();
  const html = consolePage(deps.mountPath, deps.listMaxLimit);
  const assets = loadConsoleAssets();

  router.get('/console/assets/:name', (req, res, next) => {
    const asset = assets.get(req.params.name);
    if (asset === undefined) return next();
    // Revalidated on each load (the ETag makes that a 304): a new release is never mixed with
    // modules of the old one still in the browser's cache.
    res.type(asset.type).set('Cache-Control', 'no-cache').send(asset.body);
  });
  // Anything else under assets/ is answered here, signed in or not: asset names are no secret.
  router.use('/console/assets', (_req, _res, next) =>
    next(new AppError('NOT_FOUND', 'no such console asset')),
  );
  router.get('/console', deps.requirePageSession, (_req, res) => {
    res
      .status(200)
      .type('html')
      .set('Content-Security-Policy', CONSOLE_CSP)
      .set('Cache-Control', 'no-store')
      .send(html);
  });
  return router;
}
