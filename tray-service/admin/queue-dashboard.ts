import { createBullBoard } from '@bull-board/api';
import { BullAdapter } from '@bull-board/api/bullAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type Bull from 'bull';
import express, { Router, type Request, type RequestHandler, type Response } from 'express';
import { AppError } from '../../shared/errors/app-error.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { signInPage, signOutPage } from './dashboard-pages.ts';
import { createDashboardSessions, readCookie, type DashboardSessions } from './dashboard-session.ts';
import { authenticateAdmin, bearerToken, type AdminAuthOptions } from './require-admin.ts';

export const DASHBOARD_COOKIE = 'admin_queues_session';

export interface QueueDashboardDeps {
  queues: readonly Bull.Queue[];
  auth: AdminAuthOptions;
  /** Full path the dashboard is served at (its pages link to it), e.g. /admin/queues. */
  basePath: string;
  /** Sessions live in Redis so every instance honours them and signing out ends them everywhere. */
  redis: RedisClient;
  sessionPrefix?: string;
  /** QUEUE_DASHBOARD_WRITE: false (the default) leaves the dashboard read-only. */
  write?: boolean;
  sessionTtlMs?: number;
  clock?: () => number;
}

/**
 * Routes that put data into the queue. A job added or edited here would reach the worker without
 * the receiver's signature check, so they are refused even when the dashboard may write.
 */
const INJECTS_JOBS = /\/api\/queues\/[^/]+\/(?:add|[^/]+\/update-data)\/?$/;
const READS = new Set(['GET', 'HEAD']);

function cookieOptions(req: Request, deps: QueueDashboardDeps) {
  // req.secure follows the app's `trust proxy` (ADMIN_TRUST_PROXY): https at the proxy counts.
  return { httpOnly: true, sameSite: 'strict' as const, secure: req.secure, path: deps.basePath };
}

/** Sign-in, sign-out, and the check in front of every other dashboard request. */
function sessionRoutes(deps: QueueDashboardDeps, sessions: DashboardSessions): Router {
  const clock = deps.clock ?? Date.now;
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '16kb' });
  const html = (res: Response, status: number, body: string) => {
    res.status(status).type('html').set('Cache-Control', 'no-store').send(body);
  };
  router.get('/login', (_req, res) => html(res, 200, signInPage(deps.basePath)));
  router.post('/login', form, async (req, res, next) => {
    const body = req.body as Record<string, unknown> | undefined;
    const token = typeof body?.token === 'string' ? body.token.trim() : '';
    try {
      const admin = await authenticateAdmin(token, deps.auth);
      const { id, maxAgeMs } = await sessions.open(admin, clock());
      res.cookie(DASHBOARD_COOKIE, id, { ...cookieOptions(req, deps), maxAge: maxAgeMs });
      res.redirect(303, deps.basePath);
    } catch (error) {
      if (error instanceof AppError && error.kind === 'UNAUTHORIZED') {
        html(res, 401, signInPage(deps.basePath, 'That is not a valid admin credential.'));
        return;
      }
      next(error);
    }
  });
  router.get('/logout', (_req, res) => html(res, 200, signOutPage(deps.basePath)));
  router.post('/logout', async (req, res, next) => {
    try {
      const id = readCookie(req.get('cookie'), DASHBOARD_COOKIE);
      if (id !== undefined) await sessions.close(id);
      res.clearCookie(DASHBOARD_COOKIE, cookieOptions(req, deps));
      res.redirect(303, `${deps.basePath}/login`);
    } catch (error) {
      next(error);
    }
  });
  router.use(async (req, res, next) => {
    try {
      const header = bearerToken(req);
      const id = readCookie(req.get('cookie'), DASHBOARD_COOKIE);
      const admin =
        header !== undefined
          ? await authenticateAdmin(header, deps.auth)
          : id !== undefined
            ? await sessions.find(id, clock())
            : undefined;
      if (admin === undefined) {
        // A person opening the page is sent to the form; bull-board's own calls get a 401.
        if (req.method === 'GET' && !req.path.startsWith('/api/') && req.accepts('html')) {
          res.redirect(303, `${deps.basePath}/login`);
          return;
        }
        throw new AppError('UNAUTHORIZED', `sign in at ${deps.basePath}/login, or send a bearer token`, {
          headers: { 'WWW-Authenticate': 'Bearer' },
        });
      }
      res.locals.admin = admin;
      next();
    } catch (error) {
      next(error);
    }
  });
  return router;
}

/** Refuses bull-board's changing calls unless QUEUE_DASHBOARD_WRITE=on, and job injection always. */
function writeGate(write: boolean): RequestHandler {
  return (req, _res, next) => {
    if (READS.has(req.method)) return next();
    if (INJECTS_JOBS.test(req.path)) {
      return next(new AppError('FORBIDDEN', 'jobs enter the queue through the receiver only'));
    }
    if (!write) {
      return next(new AppError('FORBIDDEN', 'the queue dashboard is read-only (QUEUE_DASHBOARD_WRITE=off)'));
    }
    next();
  };
}

/** @bull-board at `basePath`, behind admin auth; read-only unless `write`. */
export function createQueueDashboard(deps: QueueDashboardDeps): Router {
  const write = deps.write ?? false;
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(deps.basePath);
  createBullBoard({
    // bull-board hides and refuses its own changing actions in read-only mode; writeGate refuses
    // them again here, whatever a bull-board version does.
    queues: deps.queues.map((queue) => new BullAdapter(queue, { readOnlyMode: !write })),
    serverAdapter,
    options: { uiConfig: { miscLinks: [{ text: 'Sign out', url: `${deps.basePath}/logout` }] } },
  });
  const sessions = createDashboardSessions({
    redis: deps.redis,
    prefix: deps.sessionPrefix ?? 'tray-admin',
    ttlMs: deps.sessionTtlMs ?? 8 * 3600 * 1000,
    adminToken: deps.auth.adminToken,
    adminJwts: deps.auth.verifyAdminJwt !== undefined,
  });
  const router = Router();
  router.use(sessionRoutes(deps, sessions));
  router.use(writeGate(write));
  router.use(serverAdapter.getRouter() as Router);
  return router;
}
