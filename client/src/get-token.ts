/** Why the client asks `getToken` for a token. */
export interface TokenRequest {
  /**
   * The token the service has just refused (401), when that is why the client asks: return another
   * one then, not the same one from a cache. The service may refuse a token before its `exp` (for
   * its age, or a clock ahead of the app's); given back, the stream waits and asks again a few
   * times, then ends with the 401. Several calls refused together each ask with the same token:
   * return the current one when it already differs, else share one refresh among them.
   */
  refused?: string;
}

/** Gives the client a current bearer token of its user (a JWT the tray API accepts). */
export type GetToken = (request: TokenRequest) => string | Promise<string>;
