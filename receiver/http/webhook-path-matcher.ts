/**
 * Whether a request's target is the webhook path (WEBHOOK_PATH), as Express 5 would match it as a
 * route (path-to-regexp, neither case-sensitive nor strict): the query string and fragment left
 * out, the path in any case, with or without one trailing slash, whether or not the configured
 * path ends in one. `/webhooks/?a=1` is the webhook path `/webhooks`; `/webhooks/x`,
 * `/webhooks//` and a percent-encoded spelling are not; a target in absolute form is matched by
 * its path. The one matcher of the receiver's app and
 * of the own-server example, so both take the same requests.
 */
export function webhookPathMatcher(path: string): (target: string | undefined) => boolean {
  // `/webhooks/` is `/webhooks` with its optional slash: otherwise `/webhooks` would not match and
  // `/webhooks//` would.
  const bare = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const escaped = bare.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const pattern = new RegExp(`^${escaped}(?:/)?$`, 'i');
  return (target) => pattern.test(targetPath(target));
}

/** A request target's path: without its query and fragment, and the scheme and authority of the absolute form. */
export function targetPath(target: string | undefined): string {
  return (target ?? '').replace(ABSOLUTE_FORM, '').split(/[?#]/, 1)[0] ?? '';
}

/**
 * The scheme and authority of a target in absolute form (`http://host/webhooks`), which HTTP/1.1
 * servers must take (RFC 9112, 3.2.2) and Express routes by its path.
 */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;
