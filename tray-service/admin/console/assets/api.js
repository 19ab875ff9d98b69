/* global document, fetch, location, URLSearchParams */
// The admin JSON API as the console calls it: same origin, the /admin session's cookie, and for
// every unsafe method the session's CSRF token in `x-csrf-token` (docs/operations.md#events-console).

/** Where the admin router is mounted, from the page (/admin). */
export const ADMIN = document.body.dataset.adminBase ?? '/admin';

/** The largest page the admin lists accept (ADMIN_LIST_MAX_LIMIT), from the page. */
const LIST_MAX_LIMIT = Number(document.body.dataset.listMaxLimit) || Infinity;

/** A page of `size` rows, or of as many as this instance allows when it allows fewer. */
export const pageLimit = (size) => Math.min(size, LIST_MAX_LIMIT);

/** A refused call: `status` is the HTTP status, `message` the API's own (naming the bad field). */
export class ApiError extends Error {
  constructor(status, message, code) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

/** Sends the browser to the sign-in form; it comes back here after signing in. */
export function signIn() {
  const next = `${location.pathname}${location.search}${location.hash}`;
  location.assign(`${ADMIN}/login?next=${encodeURIComponent(next)}`);
}

/** `path` under /admin with the non-empty values of `query`. */
export function adminUrl(path, query = {}) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const search = params.toString();
  return `${ADMIN}${path}${search ? `?${search}` : ''}`;
}

let csrfToken;

/** The session's CSRF token, fetched once (GET /admin/session). */
async function csrf(fresh = false) {
  if (csrfToken === undefined || fresh) {
    const session = await call('GET', '/session');
    csrfToken = session.csrfToken;
  }
  return csrfToken;
}

async function call(method, path, { query, body, retried = false } = {}) {
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD') headers['x-csrf-token'] = await csrf();
  const response = await fetch(adminUrl(path, query), {
    method,
    headers,
    credentials: 'same-origin',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (response.status === 401) {
    signIn();
    throw new ApiError(401, 'Your session has ended: signing in again.');
  }
  const json = await response.json().catch(() => undefined);
  if (response.status === 403 && method !== 'GET' && !retried) {
    // The token may belong to a session that was replaced (signed in again in another tab).
    await csrf(true);
    return call(method, path, { query, body, retried: true });
  }
  if (!response.ok) {
    const error = json?.error ?? json;
    throw new ApiError(
      response.status,
      error?.message ?? `${response.status} ${response.statusText}`,
      error?.code,
    );
  }
  return json;
}

export const getJson = (path, query) => call('GET', path, { query });
export const postJson = (path, body = {}) => call('POST', path, { body });
