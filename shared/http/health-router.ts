import { Router } from 'express';
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../logging/create-logger.ts';
import { methodNotAllowed, UNAVAILABLE_LOG_EVERY_MS } from './error-middleware.ts';
import { createLogThrottle } from '../logging/log-throttle.ts';
import { REQUEST_ID_HEADER, requestIdOf } from './request-id.ts';

/**
 * What a check reports. `error` is for the log only (it may hold hosts, paths or driver text);
 * `detail` holds values the check chose to publish (the spool's depth, say).
 */
export type CheckResult =
  | { ok: true; detail?: Record<string, unknown> }
  | { ok: false; error: string; detail?: Record<string, unknown> };
export type ReadinessChecks = Record<string, () => Promise<CheckResult>>;

/** What `/readyz` publishes per check: which one failed and how, never the error's text. */
type PublicResult =
  | { ok: true; detail?: Record<string, unknown> }
  | { ok: false; reason: 'failed' | 'timed out'; detail?: Record<string, unknown> };

interface Readiness {
  status: 'ready' | 'degraded' | 'unavailable';
  checks: Record<string, PublicResult>;
}

export interface HealthRouterOptions {
  /** Where a failing check's error goes (when it changes), since the response leaves it out. */
  logger: Logger;
  /** Deadline of each check, so a hung dependency makes /readyz answer 503 instead of hanging. */
  timeoutMs?: number;
  /** How long one readiness result is served before the checks run again. */
  cacheMs?: number;
  /**
   * Checks of a dependency every instance shares that the service can serve without for a while
   * (the tray's reads without Redis, the receiver's spool without Redis): one failing leaves the
   * service ready, `degraded`, with 200. Failing readiness on it would take every instance out
   * of the load balancer at once, turning a partial outage into a whole one.
   */
  degradeOnly?: readonly string[];
  /** Where `readiness_check_ok{check}` is registered (1 or 0, the checks run when scraped). */
  registry?: Registry;
}

const TIMED_OUT = Symbol('timed out');

async function runCheck(
  check: () => Promise<CheckResult>,
  timeoutMs: number,
): Promise<CheckResult | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), timeoutMs);
  });
  try {
    return await Promise.race([
      check().catch((error: unknown) => ({
        ok: false as const,
        error: String((error as Error).message ?? error),
      })),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Where createHealthRouter serves the liveness and the readiness probe. */
export const PROBE_PATHS = ['/healthz', '/readyz'] as const;

/**
 * `/healthz`: the process is alive (no dependency checks, so an orchestrator does not restart a
 * healthy process because Redis blinked). `/readyz`: every dependency answers (`ready`), or all
 * but some the service serves without (`degraded`); 503 otherwise.
 * Both answer anyone (probes come from the orchestrator, not from allowlisted senders), so
 * `/readyz` must cost nothing extra under a flood: its result is computed at most once per
 * `cacheMs` (concurrent requests share the run in flight) and says only which check failed.
 */
export function createHealthRouter(checks: ReadinessChecks, options: HealthRouterOptions): Router {
  const timeoutMs = options.timeoutMs ?? 1_000;
  const cacheMs = options.cacheMs ?? 1_000;
  const degradeOnly = new Set(options.degradeOnly ?? []);
  const lastErrors = new Map<string, string>();
  let cached: { at: number; result: Promise<Readiness> } | undefined;

  const evaluate = async (): Promise<Readiness> => {
    const entries = await Promise.all(
      Object.entries(checks).map(async ([name, check]): Promise<[string, PublicResult]> => {
        const result = await runCheck(check, timeoutMs);
        if (result !== TIMED_OUT && result.ok) {
          lastErrors.delete(name);
          return [name, result];
        }
        const error = result === TIMED_OUT ? `timed out after ${timeoutMs} ms` : result.error;
        if (lastErrors.get(name) !== error)
          options.logger.warn({ check: name, err: error }, 'readiness check failed');
        lastErrors.set(name, error);
        const detail = result !== TIMED_OUT && result.detail ? { detail: result.detail } : {};
        return [name, { ok: false, reason: result === TIMED_OUT ? 'timed out' : 'failed', ...detail }];
      }),
    );
    const failed = entries.filter(([, result]) => !result.ok).map(([name]) => name);
    const status =
      failed.length === 0
        ? 'ready'
        : failed.every((name) => degradeOnly.has(name))
          ? 'degraded'
          : 'unavailable';
    return { status, checks: Object.fromEntries(entries) };
  };

  const readiness = (): Promise<Readiness> => {
    const now = performance.now();
    // The age counts from the start of a run: a run in flight is shared, never started twice.
    if (!cached || now - cached.at >= cacheMs) cached = { at: now, result: evaluate() };
    return cached.result;
  };

  if (options.registry)
    new Gauge({
      name: 'readiness_check_ok',
      help: 'Whether each readiness check passes (1) or not (0), as /readyz reports it',
      labelNames: ['check'],
      registers: [options.registry],
      async collect() {
        for (const [name, result] of Object.entries((await readiness()).checks))
          this.set({ check: name }, result.ok ? 1 : 0);
      },
    });

  const unavailable = createLogThrottle(UNAVAILABLE_LOG_EVERY_MS);
  const router = Router();
  router
    .route(PROBE_PATHS[0])
    .get((_req, res) => {
      res.json({ status: 'ok' });
    })
    .all(methodNotAllowed(['GET', 'HEAD']));
  router
    .route(PROBE_PATHS[1])
    .get(async (req, res) => {
      const { status, checks: report } = await readiness();
      res.set('Cache-Control', 'no-store');
      if (status === 'unavailable') {
        // A 503 as any other (docs/operations.md): its id answered, and logged at most once per
        // 10 s while a dependency stays down (a probe every few seconds would fill the log).
        const requestId = requestIdOf(req.headers);
        res.set(REQUEST_ID_HEADER, requestId);
        const unsaidBefore = unavailable('unavailable');
        if (unsaidBefore !== undefined) {
          const failed = Object.keys(report).filter((name) => !report[name]?.ok);
          options.logger.warn({ requestId, failed, unsaidBefore }, 'readiness answered 503');
        }
      }
      res.status(status === 'unavailable' ? 503 : 200).json({ status, checks: report });
    })
    .all(methodNotAllowed(['GET', 'HEAD']));
  return router;
}
