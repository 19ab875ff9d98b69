/**
 * Express's `trust proxy` for a parsed TRUST_PROXY list: the listed proxies, or false (the socket's
 * address is the caller's) when none are. req.ip and req.secure follow it.
 */
export function trustProxySetting(proxies: readonly string[] | undefined): string[] | false {
  return proxies && proxies.length > 0 ? [...proxies] : false;
}
