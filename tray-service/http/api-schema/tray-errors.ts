import type { ZodOpenApiResponseObject } from 'zod-openapi';
import { BODY_LIMIT_KB } from './body-limit.ts';
import { errorResponse, header, unauthorizedResponse } from './error-responses.ts';

/** The errors every tray call may answer (docs/contract.md#errors). */
export const trayErrors = {
  400: errorResponse(
    'A field failed validation or a parameter or field the call does not take was sent (code 400001, the message names it), the body is malformed, or a page cursor (startAfter, paginationToken) is invalid (code 400002, message "Query Token is invalid")',
  ),
  401: unauthorizedResponse(
    'Missing, expired or invalid bearer token (code 401000), or the user is globally banned (code 401001)',
  ),
  405: errorResponse('Method not allowed on this path (Allow lists the allowed ones)', {
    Allow: header('The methods this path allows'),
  }),
  429: errorResponse(
    'More than RATE_LIMIT_CALLS calls in RATE_LIMIT_WINDOW_MS (message "RateLimit Exceed"), or too many failed authentications from the address (AUTH_FAILURE_LIMIT); code 400311',
    { 'Retry-After': header('Seconds until the window resets', 'integer') },
  ),
  500: errorResponse('Internal error (no details)'),
  503: errorResponse('The storage (or the token key set) is unavailable', {
    'Retry-After': header('Seconds to wait before trying again', 'integer'),
  }),
} satisfies Record<number, ZodOpenApiResponseObject>;

/** What a write of state a user keeps for themselves (a mute, the last-read time) answers once their deletion is stored. */
export const USER_DELETED_DESCRIPTION =
  'The user was deleted (code 410001; a token issued before the deletion): a deletion is final, nothing was stored';

export const userDeleted = errorResponse(USER_DELETED_DESCRIPTION);

/** The 413 of a call that takes a JSON body of the default limit (require-json.ts). */
export const bodyTooLarge = errorResponse(`Body larger than ${BODY_LIMIT_KB} kB`);

/** The errors of a call that takes a JSON body, or refuses one that is not JSON (a read: no-input.ts). */
export const trayBodyErrors = {
  ...trayErrors,
  413: bodyTooLarge,
  415: errorResponse('Body is not application/json'),
};
