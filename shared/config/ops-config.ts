import { z } from 'zod';
import { wholeNumber } from './env-types.ts';

const portMessage = 'expected a TCP port number (1-65535)';

/** Variables of what both services serve operators rather than clients (docs/operations.md#health-metrics-and-shutdown). */
export const opsShape = {
  /**
   * Bearer token that `/metrics` on the service's own port requires. Unset: `/metrics` is not
   * served there at all (a 404), so nothing about the service's traffic is public by default.
   */
  METRICS_TOKEN: z
    .string()
    .min(32, { error: 'expected at least 32 characters (e.g. `openssl rand -hex 32`)' })
    .optional(),
  /**
   * A second listener on 127.0.0.1 serving only `/metrics`, without a token: for a scraper on the
   * same host (or a sidecar). Unset: no such listener.
   */
  METRICS_PORT: wholeNumber(portMessage, 1, 65535).optional(),
};
