import type { IncomingMessage, ServerResponse } from 'node:http';

/** The requests whose `100 Continue` listen left to the app, not sent yet. */
const deferred = new WeakSet<IncomingMessage>();

/**
 * A request whose client waits for `100 Continue` before it sends its body (`Expect:
 * 100-continue`), taken by listen's `deferContinue`: nothing is sent until the app asks for the
 * body (continueRequest), so a request refused on its head (a sender's address, a method, a path)
 * is answered before its body was invited. Node closes the connection after such an answer (a
 * final status on an `Expect: 100-continue` request with no `100 Continue` sent): the client may
 * send the body anyway or not at all (RFC 9110, 10.1.1), and a next request on the connection
 * could not be told from it.
 */
export function deferContinue(req: IncomingMessage): void {
  deferred.add(req);
}

/** Whether the request's client still waits for `100 Continue` before it sends its body. */
export function awaitsContinue(req: IncomingMessage): boolean {
  return deferred.has(req);
}

/**
 * Before an app reads a body: the `100 Continue` its client waits for, once. Nothing for a request
 * listen did not defer.
 */
export function continueRequest(req: IncomingMessage, res: ServerResponse): void {
  if (deferred.delete(req)) res.writeContinue();
}
