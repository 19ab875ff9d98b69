import helmet, { type HelmetOptions } from 'helmet';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';

/**
 * The headers `helmet(options)` sets on a response, computed once by running helmet itself against
 * a detached response. For the webhook path, which answers thousands of times a second with the
 * same bytes: walking helmet's twelve middlewares and twelve setHeader calls per request cost about
 * 4% of the receiver's CPU (BENCHMARKS.md, "Receiver"). helmet stays the one source of the values;
 * test/shared/http/helmet-headers.test.ts checks they match what `app.use(helmet())` sends.
 *
 * Only for options without per-request values: a CSP directive given as a function (a nonce, say)
 * would be computed once here and repeated. The receiver uses helmet's defaults.
 */
export function helmetHeaders(options?: Readonly<HelmetOptions>): ReadonlyMap<string, string> {
  const req = new IncomingMessage(new Socket());
  const res = new ServerResponse(req);
  let done = false;
  helmet(options)(req, res, (error?: unknown) => {
    if (error) throw error instanceof Error ? error : new Error(String(error));
    done = true;
  });
  if (!done) throw new Error('helmet did not finish synchronously; its headers depend on the request');
  const headers = new Map<string, string>();
  for (const [name, value] of Object.entries(res.getHeaders())) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : String(value));
  }
  return headers;
}
