import { createBullBoard } from '@bull-board/api';
import { BullAdapter } from '@bull-board/api/bullAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type Bull from 'bull';
import { Router, type RequestHandler } from 'express';
import { AppError } from '../../shared/errors/app-error.ts';
import { createDashboardSessions, readCookie } from './dashboard-session.ts';
import { authenticateAdmin, bearerToken, type AdminAuthOptions } from './require-admin.ts';

export const DASHBOARD_COOKIE = 'admin_queues_session';

export interface QueueDashboardDeps {
  queues: readonly Bull.Queue[];
  auth: AdminAuthOptions;
  /** Full path the dashboard is served at (its pages link to it), e.g. /admin/queues. */
  basePath: string;
  sessionTtlMs?: number;
  clock?: () => number;
}

/**
 * Admin auth for a browser page: a bearer header, or `?token=` once (then a session cookie and a
 * redirect that drops the token from the address bar and history), or that cookie.
 */
function dashboardAuth(deps: QueueDashboardDeps): RequestHandler {
  const clock = deps.clock ?? Date.now;
  const sessions = createDashboardSessions({
    adminToken: deps.auth.adminToken,
    ttlMs: deps.sessionTtlMs ?? 8 * 3600 * 1000,
  });
  return async (req, res, next) => {
    try {
      const header = bearerToken(req);
      if (header !== undefined) {
        await authenticateAdmin(header, deps.auth);
        next();
        return;
      }
      const queryToken = typeof req.query.token === 'string' ? req.query.token : undefined;
      if (queryToken !== undefined) {
        await authenticateAdmin(queryToken, deps.auth);
        res.cookie(DASHBOARD_COOKIE, sessions.issue(clock()), {
          httpOnly: true,
          sameSite: 'strict',
          secure: req.secure,
          path: deps.basePath,
          maxAge: sessions.ttlMs,
        });
        const url = new URL(req.originalUrl, 'http://localhost');
        url.searchParams.delete('token');
        res.redirect(303, `${url.pathname}${url.search}`);
        return;
      }
      const session = readCookie(req.get('cookie'), DASHBOARD_COOKIE);
      if (session !== undefined && sessions.isValid(session, clock())) {
        next();
        return;
      }
      throw new AppError(
        'UNAUTHORIZED',
        'open the dashboard with ?token=<admin token> once, or send a bearer token',
        {
          headers: { 'WWW-Authenticate': 'Bearer' },
        },
      );
    } catch (error) {
      next(error);
    }
  };
}

/** @bull-board at `basePath`, behind admin auth. */
export function createQueueDashboard(deps: QueueDashboardDeps): Router {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(deps.basePath);
  createBullBoard({ queues: deps.queues.map((queue) => new BullAdapter(queue)), serverAdapter });
  const router = Router();
  router.use(dashboardAuth(deps));
  router.use(serverAdapter.getRouter() as Router);
  return router;
}
