import { isoTimePattern } from './parse-iso-time.ts';
import { textMaxLength } from './parse-query.ts';

/** Pieces of the admin API's OpenAPI document, shared by its parts (admin-openapi.ts, console-openapi.ts). */

export type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: Schema) => ({ 'application/json': { schema } });
export const error = (description: string, headers?: Schema) => ({
  description,
  content: json(ref('Error')),
  ...(headers ? { headers } : {}),
});
const retryAfter = {
  'Retry-After': { description: 'Seconds to wait (MongoDB unavailable)', schema: { type: 'string' } },
};

/**
 * 429 only from the failed-authentication limit: the per-user rate limit guards the tray and
 * block paths only, not /admin.
 */
export const adminErrors = {
  400: error('A parameter has a bad value or is unknown (code 400001); the message names it'),
  401: error(
    'No credential: neither a bearer (ADMIN_TOKEN or an admin JWT; a user token never is) nor a live admin session cookie',
    {
      'WWW-Authenticate': { description: '`Bearer` when the token is missing', schema: { type: 'string' } },
    },
  ),
  429: error('Too many failed authentications from this address (AUTH_FAILURE_LIMIT); code 400311', {
    'Retry-After': { description: 'Seconds until the address may try again', schema: { type: 'string' } },
  }),
  500: error('Internal error (no details)'),
  503: error('MongoDB, or the JWT key set, is unavailable', retryAfter),
};

/** A 429 of a capped route: its own code, or the failed-authentication limit's. */
export const busy = (what: string) =>
  error(`${what}, or too many failed authentications (400311)`, {
    'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'string' } },
  });

export const isoTime = (bound: string) => ({
  type: 'string',
  pattern: isoTimePattern.source,
  description: `${bound}; ISO 8601 date or date-time (2026-11-20, 2026-11-20T10:00:00Z; UTC when no offset is given). The day must exist (2026-02-30 is a 400), and since < until.`,
});
export const text = (description: string, example: string) => ({
  type: 'string',
  minLength: 1,
  maxLength: textMaxLength,
  description,
  examples: [example],
});
export const query = (name: string, schema: Schema) => ({ name, in: 'query', required: false, schema });
