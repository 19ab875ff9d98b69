/**
 * Whether a request's target is the webhook path as the receiver's router takes it (Express 5:
 * path-to-regexp, neither case-sensitive nor strict): the query string and fragment left out, the
 * path in any case, with or without one trailing slash. `/webhooks/?a=1` is the receiver's webhook
 * path; `/webhooks/x`, `/webhooks//` and a percent-encoded spelling are not.
 */
export function webhookPathMatcher(path: string): (target: string | undefined) => boolean {
  const escaped = path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const pattern = new RegExp(`^${escaped}(?:/)?$`, 'i');
  return (target) => pattern.test((target ?? '').split(/[?#]/, 1)[0] ?? '');
}
