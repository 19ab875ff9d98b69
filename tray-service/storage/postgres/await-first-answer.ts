import pg from 'pg';
import { TimeoutError } from '../../../shared/errors/timeout-error.ts';

/**
 * How long opening the storage waits for the server's first answer: a session opened and `SELECT
 * 1` answered. A server that answers at all does this in milliseconds, even under load; giving up
 * costs only a retry, which start-up makes anyway while its wait lasts.
 */
export const FIRST_ANSWER_MS = 5_000;

/**
 * Resolves once the URL's server opens a session and answers `SELECT 1`, within `timeoutMs`;
 * otherwise rejects with a TimeoutError saying which step got no answer, having closed its socket.
 *
 * Opening the storage runs the migrations, which may rightly take minutes, so start-up cannot bound
 * the open as a whole; and the pool waits for ever by default for a server that accepts TCP
 * connections but never answers (a stopped or hung server, or a pooler whose server hangs).
 * This check, on a connection of its own, tells that server from a long migration before either
 * begins. It is not the pool's `connectionTimeoutMillis`: node-postgres applies that to waiting
 * for a free client too, so it would fail the API's and the worker's queries under load.
 */
export async function awaitFirstAnswer(
  url: string,
  applicationName: string,
  timeoutMs = FIRST_ANSWER_MS,
): Promise<void> {
  const client = new pg.Client({ connectionString: url, application_name: applicationName });
  // The socket's error after the destroy below (or a reset) is reported by the pending call.
  client.on('error', () => undefined);
  let step = 'while connecting';
  let timedOut = false;
  // One deadline for both steps; destroying the socket makes the pending step reject at once.
  const timer = setTimeout(() => {
    timedOut = true;
    client.connection.stream.destroy();
  }, timeoutMs);
  try {
    await client.connect();
    step = 'to SELECT 1';
    await client.query('SELECT 1');
  } catch (error) {
    if (timedOut) {
      throw new TimeoutError(timeoutMs, `no answer within ${timeoutMs / 1_000} s ${step}`);
    }
    throw error;
  } finally {
    clearTimeout(timer);
    // Ending a session that answered is immediate; one that did not is already destroyed.
    await client.end().catch(() => undefined);
  }
}
