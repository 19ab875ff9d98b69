import { z } from 'zod';
import { wholeNumber } from './env-types.ts';
import { ConfigError } from '../errors/config-error.ts';
import { SHUTDOWN_DEADLINE_MS } from '../process/on-shutdown.ts';

const portMessage = 'expected a TCP port number (1-65535)';

/**
 * A bearer token's variable (METRICS_TOKEN, ADMIN_TOKEN): at least 32 characters, one word of
 * printable ASCII. A request presents it as one word after `Bearer `, in a header whose bytes Node
 * reads as Latin-1: with a space, a control character or a non-ASCII one (sent as UTF-8), no
 * request could ever present it, though the admin sign-in form (a form field) took it.
 */
export const bearerSecret = () =>
  z
    .string()
    .min(32, { error: 'expected at least 32 characters (e.g. `openssl rand -hex 32`)' })
    .regex(/^[\x21-\x7e]+$/, {
      error: 'expected printable ASCII without spaces (a bearer token is one word)',
    });

/** Variables of what both services serve operators rather than clients (docs/operations.md#health-metrics-and-shutdown). */
export const opsShape = {
  /**
   * Bearer token that `/metrics` on the service's own port requires. Unset: `/metrics` is not
   * served there at all (a 404), so nothing about the service's traffic is public by default.
   */
  METRICS_TOKEN: bearerSecret().optional(),
  /**
   * A second listener on 127.0.0.1 serving only `/metrics`, without a token: for a scraper on the
   * same host (or a sidecar). Unset: no such listener.
   */
  METRICS_PORT: wholeNumber(portMessage, 1, 65535).optional(),
  /**
   * How long a clean shutdown may take before the process exits anyway (on-shutdown.ts): below the
   * orchestrator's grace period, whose defaults differ (Docker's stop timeout 10 s, Kubernetes'
   * terminationGracePeriodSeconds 30 s). At least 5 s: the HTTP drain's grace is half of it
   * (listen.ts), and the receiver keeps 1.5 s of the rest for its closes, which leaves its last
   * spool pass at least 1 s.
   */
  SHUTDOWN_DEADLINE_MS: wholeNumber(
    "expected a whole number of milliseconds from 5000 to 600000 (below your orchestrator's grace period)",
    5_000,
    600_000,
  ).default(SHUTDOWN_DEADLINE_MS),
};

/**
 * METRICS_PORT is a listener of its own: on the port of another listener of the process, it would
 * bind first and the other's EADDRINUSE would name the variable that was right. `ports` are the
 * process's other listeners by variable.
 */
export function checkMetricsPort(metricsPort: number | undefined, ports: Record<string, number>): void {
  const clash = Object.entries(ports).find(([, port]) => port === metricsPort);
  if (clash === undefined) return;
  const [variable, port] = clash;
  throw new ConfigError([
    {
      variable: 'METRICS_PORT',
      message: `must differ from ${variable} (${port}): the metrics listener has a port of its own`,
    },
  ]);
}
