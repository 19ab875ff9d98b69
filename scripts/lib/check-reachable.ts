import { fetchFailureCause } from '../../shared/http/fetch-failure-cause.ts';
import { redactUrlCredentials } from '../../shared/logging/redact-url-credentials.ts';

/**
 * Throws one line naming `what` is not reachable at `url`, and why (ECONNREFUSED, ...), when no
 * HTTP server answers there at all; any answer, an error status included, will do. fetch's own
 * message is only "fetch failed". `where`: how the user says where it is instead.
 */
export async function checkReachable(what: string, url: string, where: string): Promise<void> {
  try {
    const answer = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    await answer.body?.cancel();
  } catch (error) {
    // fetch's refusal of a URL with credentials repeats it: neither is shown with its password.
    const cause = redactUrlCredentials(fetchFailureCause(error) ?? (error as Error).message);
    throw new Error(
      `cannot reach the ${what} at ${redactUrlCredentials(url)} (${cause}): is npm start running? ${where} say where it is`,
    );
  }
}
