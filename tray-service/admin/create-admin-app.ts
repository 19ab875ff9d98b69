import express, { type Express } from 'express';
import { errorMiddleware, methodNotAllowed, notFound } from '../../shared/http/error-middleware.ts';
import { pageSecurityHeaders } from '../../shared/http/security-headers.ts';
import { mapDomainErrors } from '../http/map-domain-errors.ts';
import { mapRedisErrors } from '../http/map-redis-errors.ts';
import { mapStoreErrors } from '../http/map-store-errors.ts';
import { countFailedAuth, refuseBlockedAddress } from '../../shared/http/limit-failed-auth.ts';
import { createAdminOpenApiDocument } from './api-schema/admin-api-schema.ts';
import { createAdminRouter, type AdminRouterDeps } from './create-admin-router.ts';
import { adminMethodGate } from './admin-method-gate.ts';
import { loopbackNamesOnly } from './loopback-names-only.ts';
import { AppError } from '../../shared/errors/app-error.ts';
import { isTokenGuess } from '../http/auth/is-token-guess.ts';
import { parseQueryString } from '../http/parse-query-string.ts';
import { bearerToken as adminBearerToken } from './require-admin.ts';

export interface AdminAppDeps extends AdminRouterDeps {
  /**
   * Express's `trust proxy` (ADMIN_TRUST_PROXY): which proxies may say the browser came over
   * https, so the dashboard's cookie is `Secure` there and the pages' Content-Security-Policy
   * upgrades insecure requests. false: none.
   */
  trustProxy?: false | readonly string[];
  /**
   * ADMIN_HOST on loopback with no proxy in front (ADMIN_BEHIND_TLS off, ADMIN_TRUST_PROXY unset):
   * only requests naming a loopback host are answered (loopback-names-only.ts).
   */
  loopbackNamesOnly?: boolean;
}

/**
 * The admin API on a listener of its own (ADMIN_PORT), apart from the public tray API: the admin
 * routes, the queue dashboard, and the OpenAPI document with the admin paths. Nothing of it is
 * reachable through the public port.
 */
export function createAdminApp(deps: AdminAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', parseQueryString); // repeated keys become arrays, never nested objects
  app.set(
    'trust proxy',
    deps.trustProxy === undefined || deps.trustProxy === false ? false : deps.trustProxy,
  );
  // helmet's headers; over plain http without upgrade-insecure-requests, which would send the
  // sign-in form, the dashboard's assets and the console's calls to an https nobody serves.
  app.use(pageSecurityHeaders());
  // Before the failed sign-in count: a request refused here counts nothing.
  if (deps.loopbackNamesOnly) app.use(loopbackNamesOnly());
  // Guessing the admin credential is refused per address like guessing a user token.
  if (deps.failedAuth) app.use(refuseBlockedAddress(deps.failedAuth));
  const openApi = createAdminOpenApiDocument(deps.limits);
  app
    .route('/openapi.json')
    .get((_req, res) => {
      res.json(openApi);
    })
    .all(methodNotAllowed(['GET', 'HEAD']));
  app.use(adminMethodGate(openApi.paths ?? {}));
  app.use('/admin', createAdminRouter({ ...deps, mountPath: '/admin' }));
  app.use(notFound);
  // Only a bearer credential is a guess here (the sign-in form counts its own): a call with none,
  // or with a session cookie signed out or expired (a dashboard tab still polling), guesses nothing,
  // and counting it locked the admin out of signing in again from that address. Nor does an admin
  // JWT whose signature verified but which was refused (expired: a cron job still polling with it),
  // as on the tray API; authenticateAdmin keeps the verifier's refusal as its cause.
  if (deps.failedAuth)
    app.use(
      countFailedAuth(deps.failedAuth, deps.logger, {
        guessed: (req, error) =>
          isTokenGuess(req, error.cause instanceof AppError ? error.cause : error, adminBearerToken),
      }),
    );
  app.use(mapDomainErrors);
  app.use(mapStoreErrors);
  // Sessions, replay progress and the tail's feed live in Redis.
  app.use(mapRedisErrors);
  app.use(errorMiddleware(deps.logger));
  return app;
}
