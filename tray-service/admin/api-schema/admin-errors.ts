import type { oas31 } from 'zod-openapi';
import { errorResponse, header } from '../../http/api-schema/error-responses.ts';

/**
 * The errors every admin call may answer. 429 only from the failed-authentication limit: the
 * per-user rate limit guards the tray and block paths only, not /admin.
 */
export const adminErrors = {
  400: errorResponse('A parameter has a bad value or is unknown (code 400001); the message names it'),
  401: errorResponse(
    'No credential: neither a bearer (ADMIN_TOKEN or an admin JWT; a user token never is) nor a live admin session cookie',
    { 'WWW-Authenticate': header('`Bearer` when the token is missing') },
  ),
  403: errorResponse(
    'The session cookie sent from another site’s page (its Sec-Fetch-Site or Origin), or a POST with it without its x-csrf-token',
  ),
  405: errorResponse('Method not allowed on this path (Allow lists the allowed ones)', {
    Allow: header('The methods this path allows'),
  }),
  429: errorResponse('Too many failed authentications from this address (AUTH_FAILURE_LIMIT); code 400311', {
    'Retry-After': header('Seconds until the address may try again'),
  }),
  500: errorResponse('Internal error (no details)'),
  503: errorResponse('The database, Redis (sessions, replays), or the JWT key set, is unavailable', {
    'Retry-After': header('Seconds to wait (the database or Redis unavailable)'),
  }),
};

/** Who may call an admin path: a bearer credential or the admin session. */
export const adminSecurity: oas31.SecurityRequirementObject[] = [{ adminAuth: [] }, { adminSession: [] }];

/** A 429 of a capped route: its own code, or the failed-authentication limit's. */
export const busy = (what: string) =>
  errorResponse(`${what}, or too many failed authentications (400311)`, {
    'Retry-After': header('Seconds to wait before trying again'),
  });

export const noEvent = errorResponse('No unexpired event with this key');
