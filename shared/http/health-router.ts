import { Router } from 'express';

export type CheckResult = { ok: true; detail?: Record<string, unknown> } | { ok: false; error: string };
export type ReadinessChecks = Record<string, () => Promise<CheckResult>>;

/** Runs a check with a deadline, so a hung dependency makes /readyz answer 503 instead of hanging. */
async function runCheck(check: () => Promise<CheckResult>, timeoutMs: number): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, error: `timed out after ${timeoutMs} ms` }), timeoutMs);
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

/**
 * `/healthz`: the process is alive (no dependency checks, so an orchestrator does not restart a
 * healthy process because Redis blinked). `/readyz`: every dependency answers; 503 otherwise.
 */
export function createHealthRouter(checks: ReadinessChecks, timeoutMs = 1000): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const results = await Promise.all(
      Object.entries(checks).map(async ([name, check]) => [name, await runCheck(check, timeoutMs)] as const),
    );
    const report = Object.fromEntries(results);
    const ready = results.every(([, result]) => result.ok);
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'unavailable', checks: report });
  });
  return router;
}
