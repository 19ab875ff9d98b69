import type {
  ZodOpenApiOperationObject,
  ZodOpenApiPathItemObject,
  ZodOpenApiPathsObject,
  ZodOpenApiResponseObject,
  ZodOpenApiResponsesObject,
} from 'zod-openapi';
import { errorBody, header, unauthorizedBody, type Headers } from './error-responses.ts';

/** What every call behind the per-user rate limit answers once it is counted (limit-per-user.ts). */
export const rateLimitHeaders: Headers = {
  'X-RateLimit-Limit': header('The calls a user may make in one window (RATE_LIMIT_CALLS)', 'integer'),
  'X-RateLimit-Remaining': header('The calls the user has left in the current window', 'integer'),
};

/** What every 5xx carries (shared/http/request-id.ts): the error handler's, and /readyz's. */
export const requestIdHeader: Headers = {
  'X-Request-Id': header(
    "The id of this failure's log line (a proxy's own id when it sent a plain one): quote it to the operators",
  ),
};

/** What an answer carries when it is a whole body and not an error (Express's weak ETag). */
export const etagHeader: Headers = {
  ETag: header('A weak tag of this body: sent back as If-None-Match, it gets 304 while the body is the same'),
};

/** The 304 of a GET whose answer carries an ETag. */
export const notModified: ZodOpenApiResponseObject = {
  description: 'Not Modified: If-None-Match named the ETag of the body this call would answer now (no body)',
  headers: etagHeader,
};

/** The bearer challenge of a tray call's 401 (require-user.ts). */
const bearerChallenge: Headers = {
  'WWW-Authenticate': header(
    '`Bearer`; on a user call, with `error="invalid_token"` when a token was sent and refused',
  ),
};

export interface AnswerHeaderRules {
  /** The paths are behind the per-user rate limit: every answer but a 401 may carry its headers. */
  rateLimited?: boolean;
  /** The paths take the user's bearer token: a 401 carries the challenge. */
  bearer?: boolean;
}

/** Media types written as they are produced (the live streams, the admin export), never tagged. */
const STREAMED = new Set(['text/event-stream', 'application/x-ndjson', 'text/csv']);

/** The error shapes: written by the error handler, untagged (shared/http/error-middleware.ts). */
const ERROR_BODIES = [errorBody, unauthorizedBody];

const withHeaders = (response: ZodOpenApiResponseObject, headers: Headers): ZodOpenApiResponseObject => ({
  ...response,
  headers: { ...response.headers, ...headers },
});

const hasBodyOf = (response: ZodOpenApiResponseObject, schemas: readonly unknown[]) =>
  schemas.includes(response.content?.['application/json']?.schema);

/**
 * The headers a caller acts on, added to every response of `paths` that carries them, in one
 * place rather than beside each status of each call: the ETag of a whole body and a GET's 304,
 * the X-Request-Id of a 5xx, the rate limit's and the bearer challenge
 * where `rules` say. Returns new objects: the path declarations share their error responses.
 */
export function withAnswerHeaders(paths: ZodOpenApiPathsObject, rules: AnswerHeaderRules = {}) {
  const out: ZodOpenApiPathsObject = {};
  for (const [path, item] of Object.entries(paths)) {
    const methods: ZodOpenApiPathItemObject = { ...item };
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const operation = item[method];
      if (operation) methods[method] = operationWithHeaders(method, operation, rules);
    }
    out[path] = methods;
  }
  return out;
}

function operationWithHeaders(
  method: string,
  operation: ZodOpenApiOperationObject,
  rules: AnswerHeaderRules,
): ZodOpenApiOperationObject {
  type Entry = [keyof ZodOpenApiResponsesObject, ZodOpenApiResponsesObject['default']];
  const entries = Object.entries(operation.responses) as Entry[];
  // A GET that tags its body answers 304 to a matching If-None-Match (after the same checks).
  if (
    method === 'get' &&
    !('304' in operation.responses) &&
    entries.some(([status, response]) => answersNotModified(status, response))
  )
    entries.push(['304', notModified]);
  const responses: ZodOpenApiResponsesObject = {};
  for (const [status, response] of entries) {
    if (response === undefined || '$ref' in response) {
      responses[status] = response;
      continue;
    }
    const code = Number(status);
    let answer = isTagged(response) ? withHeaders(response, etagHeader) : response;
    if (code >= 500) answer = withHeaders(answer, requestIdHeader);
    if (rules.rateLimited && code !== 401) answer = withHeaders(answer, rateLimitHeaders);
    if (rules.bearer && code === 401 && hasBodyOf(answer, ERROR_BODIES))
      answer = withHeaders(answer, bearerChallenge);
    responses[status] = answer;
  }
  return { ...operation, responses };
}

/**
 * Express tags every whole body it sends, whatever the method and status; the error handler's
 * answers are written untagged.
 */
function isTagged(response: ZodOpenApiResponsesObject['default']): boolean {
  if (response === undefined || '$ref' in response || hasBodyOf(response, ERROR_BODIES)) return false;
  const types = Object.keys(response.content ?? {});
  return types.length > 0 && types.every((type) => !STREAMED.has(type));
}

/** A GET whose success is tagged answers 304 to a matching If-None-Match. */
const answersNotModified = (status: string, response: ZodOpenApiResponsesObject['default']) =>
  Number(status) >= 200 && Number(status) < 300 && isTagged(response);
