import type { IncomingMessage, ServerResponse } from 'node:http';

/** The requests whose `100 Continue` listen left to the app, with the keep-alive each had. */
const deferred = new WeakMap<IncomingMessage, boolean>();

/**
 * A request whose client waits for `100 Continue` before it sends its body (`Expect:
 * 100-continue`), taken by listen's `deferContinue`: nothing is sent until the app asks for the
 * body (continueRequest), so a request refused on its head (a sender's address, a method, a path)
 * is answered before its body was invited. Such an answer closes the connection: the client may
 * send the body anyway or not at all (RFC 9110, 10.1.1), and a next request on the connection
 * could not be told from it.
 */
export function deferContinue(req: IncomingMessage, res: ServerResponse): void {
  deferred.set(req, res.shouldKeepAlive);
  res.shouldKeepAlive = false;
}

/** Whether the request's client still waits for `100 Continue` before it sends its body. */
export function awaitsContinue(req: IncomingMessage): boolean {
  return deferred.has(req);
}

/**
 * Before an app reads a body: the `100 Continue` its client waits for, once, and the connection
 * kept alive again as it would have been. Nothing for a request listen did not defer.
 */
export function continueRequest(req: IncomingMessage, res: ServerResponse): void {
  const keepAlive = deferred.get(req);
  if (keepAlive === undefined) return;
  deferred.delete(req);
  res.shouldKeepAlive = keepAlive;
  res.writeContinue();
}
