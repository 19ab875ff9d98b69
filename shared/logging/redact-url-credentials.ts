/**
 * A URL's scheme and user information (`user:password@`), up to the last `@` before the host ends:
 * user information holds no `/`, `?` or `#`, and the URL parser takes the last `@` as its end.
 */
const userInfo = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#]*@/gi;

/**
 * `text` with the credentials of every URL in it replaced by `***`. An error raised about a URL
 * quotes it whole (Node's fetch refuses a URL with credentials by naming it, password included),
 * and error text is logged and stored (a decision's lastError, shown by the admin API). The
 * configuration refuses such URLs; this keeps a password out of logs should one get through.
 */
export function redactUrlCredentials(text: string): string {
  return text.replace(userInfo, '$1***@');
}
