import type { ChildProcess } from 'node:child_process';
import { freePort } from '../../../scripts/lib/local-servers.ts';
import { cleanEnv, startScript } from '../../support/run-script.ts';
import { metricSum } from '../../support/metric-sum.ts';

export const faultSecret = 'reliability-fault-secret';

export interface ReceiverProcess {
  readonly child: ChildProcess;
  readonly port: number;
  readonly url: string;
  output(): string;
  /** SIGKILL (no clean-up at all) and wait for the exit. */
  kill(): Promise<void>;
  /** SIGTERM and wait for the exit (the normal shutdown). */
  stop(): Promise<void>;
}

/** receiver/main.ts as its own process, so a fault test can SIGKILL it. 127.0.0.1 only. */
export async function startReceiverProcess(options: {
  redisUrl: string;
  /** REDIS_CLUSTER_NODES: when set, the process uses the cluster instead of redisUrl. */
  clusterSeeds?: string;
  prefix: string;
  spoolDir: string;
  port?: number;
}): Promise<ReceiverProcess> {
  const port = options.port ?? (await freePort());
  const { child, output } = await startScript(
    'receiver/main.ts',
    cleanEnv({
      REDIS_URL: options.redisUrl,
      ...(options.clusterSeeds ? { REDIS_CLUSTER_NODES: options.clusterSeeds } : {}),
      QUEUE_PREFIX: options.prefix,
      RECEIVER_PORT: String(port),
      WEBHOOK_SECRETS: `fault=${faultSecret}`,
      WEBHOOK_ALLOWLIST: 'off',
      SPOOL_DIR: options.spoolDir,
      LOG_LEVEL: 'warn',
      METRICS_TOKEN: receiverMetricsToken,
    }),
    /receiver listening|WEBHOOK_ALLOWLIST=off/,
  );
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const signal = async (name: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
    await exited;
  };
  // Listening is logged after the warning; wait until the port answers.
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const ok = await fetch(`${url}/healthz`).then(
      (res) => res.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    child,
    port,
    url: `${url}/webhooks`,
    output,
    kill: () => signal('SIGKILL'),
    stop: () => signal('SIGTERM'),
  };
}

/** The METRICS_TOKEN a receiver process is started with (metrics are off without one). */
export const receiverMetricsToken = 'reliability-metrics-token-32-characters';

/** Polls /readyz until Redis is reachable and the spool is empty (bounded). Returns the wait in ms. */
export async function waitUntilDrained(port: number, timeoutMs = 60_000): Promise<number> {
  const started = performance.now();
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const report = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      async (res) =>
        (await res.json()) as { status: string; checks: { spool?: { detail?: { depth?: number } } } },
      () => undefined,
    );
    if (report?.status === 'ready' && report.checks.spool?.detail?.depth === 0) {
      return performance.now() - started;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`receiver on port ${port} did not drain its spool within ${timeoutMs} ms`);
}

/** Sum of a Prometheus counter's samples whose labels include `label`, e.g. stored_in="spool". */
export async function metricValue(port: number, name: string, label: string): Promise<number> {
  const headers = { Authorization: `Bearer ${receiverMetricsToken}` };
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { headers })).text();
  return metricSum(text, name, label);
}
