/** Each health request's own bound: a service that takes the connection and never answers. */
const REQUEST_TIMEOUT_MS = 2_000;

/**
 * Polls a service's URL until it answers 2xx, for at most `timeoutMs`. Each request is bounded
 * too: a service that accepts the connection and never answers held a bare fetch for undici's
 * five minutes, far past the deadline. A URL that cannot be built fails at once: only "not
 * listening yet" is worth waiting out.
 */
export async function waitHealthy(url: string, timeoutMs: number): Promise<void> {
  new URL(url);
  const deadline = Date.now() + timeoutMs;
  for (let left = timeoutMs; left > 0; left = deadline - Date.now()) {
    const signal = AbortSignal.timeout(Math.min(REQUEST_TIMEOUT_MS, left));
    if (
      await fetch(url, { signal }).then(
        (response) => response.ok,
        () => false,
      )
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, Math.min(200, Math.max(0, deadline - Date.now()))));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}
