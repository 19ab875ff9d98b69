import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { errorResponse, jsonContent } from './error-responses.ts';
import { trayErrors } from './tray-errors.ts';

/** GET /healthz. */
export const healthBody = z.strictObject({ status: z.literal('ok') });

/**
 * GET /readyz: each dependency's check; a failed one says only how it failed. `degraded`: Redis
 * fails its check, the storage answers (served, without streams, tickets and shared rate limits).
 */
export const readinessBody = z.strictObject({
  status: z.enum(['ready', 'degraded', 'unavailable']),
  checks: z.record(
    z.string(),
    z.strictObject({
      ok: z.boolean(),
      reason: z.enum(['timed out', 'failed']).optional(),
      detail: z.record(z.string(), z.unknown()).optional(),
    }),
  ),
});

/** What every listener serves beside its API: probes, metrics and this document. */
export const servicePaths: ZodOpenApiPathsObject = {
  '/healthz': {
    get: {
      summary: 'The process is alive',
      security: [],
      responses: { 200: { description: '{"status":"ok"}', content: jsonContent(healthBody) } },
    },
  },
  '/readyz': {
    get: {
      summary: 'The storage and Redis answer',
      security: [],
      responses: {
        200: {
          description: 'Ready, or degraded: Redis fails its check while the storage answers',
          content: jsonContent(readinessBody),
        },
        503: { description: 'The storage is unavailable', content: jsonContent(readinessBody) },
      },
    },
  },
  '/metrics': {
    get: {
      summary:
        'Prometheus metrics: served here only with METRICS_TOKEN set, to its bearer (without it, on the METRICS_PORT listener alone)',
      security: [{ metricsToken: [] }],
      responses: {
        200: {
          description: 'Prometheus text exposition format',
          content: { 'text/plain': { schema: { type: 'string' } } },
        },
        401: errorResponse('Missing or wrong METRICS_TOKEN'),
        404: errorResponse('Not served on this listener: METRICS_TOKEN is unset'),
        429: trayErrors[429],
      },
    },
  },
  '/openapi.json': {
    get: {
      summary: 'This document',
      security: [],
      responses: {
        200: {
          description: 'OpenAPI 3.1 document, generated from the zod schemas the routers use',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
        429: trayErrors[429],
      },
    },
  },
};
