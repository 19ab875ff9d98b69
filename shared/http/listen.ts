import {
  createServer,
  STATUS_CODES,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { LOOPBACK } from '../config/listen-config.ts';
import { AppError, errorBody } from '../errors/app-error.ts';
import type { Logger } from '../logging/create-logger.ts';
import { SHUTDOWN_DEADLINE_MS } from '../process/on-shutdown.ts';
import { hostPort } from './host-port.ts';
import { deferContinue } from './expect-continue.ts';

/**
 * Node answers a request its parser refuses (a control character in a header, a malformed request
 * line), or one that came too slowly, with a bare status before Express sees it. This answers the
 * same status with the JSON error body every other refusal has.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // Answer, then close the socket once the answer is flushed (a slow client must not keep it).
  if (socket.writable) {
    const refusal =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new AppError('REQUEST_TIMEOUT', 'request took too long to arrive')
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? new AppError('HEADERS_TOO_LARGE', 'request headers too large')
          : error.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW'
            ? new AppError('PAYLOAD_TOO_LARGE', 'chunk extensions too large')
            : new AppError('BAD_REQUEST', 'malformed HTTP request');
    const body = JSON.stringify(errorBody(refusal));
    const { status } = refusal;
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      () => socket.destroy(),
    );
    return;
  }
  socket.destroy();
}

export interface ListenOptions {
  port: number;
  /** Default loopback: a listener is reachable from other machines only when configured so. */
  host?: string;
  /** Slowloris defence: a client must send all headers within this time. */
  headersTimeoutMs?: number;
  /** A client must send the whole request within this time. */
  requestTimeoutMs?: number;
  /** How long an idle kept-alive connection stays open (default 5 s). */
  keepAliveTimeoutMs?: number;
  /** The variable that chose the port (RECEIVER_PORT, ...), named when it cannot be bound. */
  portVariable?: string;
  /** The variable that chose the host (RECEIVER_HOST, HOST, ...), named when the address is the problem. */
  hostVariable?: string | undefined;
  /** Where the listener's errors after start-up go (a process warning on stderr without). */
  logger?: Logger;
  /**
   * The app sends `100 Continue` itself, when it reads a body (expect-continue.ts): a request it
   * refuses on its head is answered without inviting the body. Off: Node sends it before the app
   * sees the request.
   */
  deferContinue?: boolean;
}

/**
 * Errors of the address, not the port: not an address of this machine, a name that does not
 * resolve (or not now), an IPv6 address on a host without IPv6.
 */
const HOST_ERRORS = new Set(['EADDRNOTAVAIL', 'ENOTFOUND', 'EAI_AGAIN', 'EAFNOSUPPORT']);

/**
 * A listener that could not bind: port in use (EADDRINUSE), not allowed (EACCES), no such address
 * (EADDRNOTAVAIL, ENOTFOUND). The message names the variable to change: the host's for an error of
 * the address, the port's otherwise.
 */
export class ListenError extends Error {
  override name = 'ListenError';
  readonly host: string;
  readonly port: number;
  readonly code: string;

  constructor(
    host: string,
    port: number,
    code: string,
    variables: Pick<ListenOptions, 'portVariable' | 'hostVariable'> = {},
  ) {
    const variable = HOST_ERRORS.has(code) ? variables.hostVariable : variables.portVariable;
    super(`cannot listen on ${hostPort(host, port)}: ${code}${variable ? ` (${variable})` : ''}`);
    this.host = host;
    this.port = port;
    this.code = code;
  }
}

/** Answers `refusal` with the JSON error body every refusal has, and closes the connection. */
function refuse(res: ServerResponse, refusal: AppError): void {
  const body = JSON.stringify(errorBody(refusal));
  res.writeHead(refusal.status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  res.end(body);
}

/**
 * `app`, behind the Host check Node would otherwise make itself: an HTTP/1.1 request without one
 * is refused (RFC 9112, 3.2), here with the JSON error body, where Node's own answer had none.
 */
function requiringHost(app: RequestListener): RequestListener {
  return (req, res) => {
    if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) {
      refuse(res, new AppError('BAD_REQUEST', 'missing Host header (HTTP/1.1 requires one)'));
      return;
    }
    app(req, res);
  };
}

export async function listen(app: RequestListener, options: ListenOptions): Promise<Server> {
  // Node enforces headersTimeout/requestTimeout only when it sweeps connections, every 30 s by
  // default; a 1 s sweep makes the slowloris limits hold to about a second.
  const handler = requiringHost(app);
  const server = createServer({ connectionsCheckingInterval: 1_000, requireHostHeader: false }, handler);
  if (options.deferContinue)
    server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      deferContinue(req);
      handler(req, res);
    });
  // An Expect other than 100-continue (which Node answers as ever): Node's own 417 had no body.
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) =>
    refuse(res, new AppError('EXPECTATION_FAILED', 'expectation not supported: only 100-continue is')),
  );
  const host = options.host ?? LOOPBACK;
  server.listen(options.port, host);
  server.headersTimeout = options.headersTimeoutMs ?? 10_000;
  server.requestTimeout = options.requestTimeoutMs ?? 30_000;
  // Node times headers and the request from a request's first byte, not from the end of the one
  // before, so a keep-alive longer than either limit leaves the slowloris defence as it is.
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 5_000;
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) =>
      reject(error.code ? new ListenError(host, options.port, error.code, options) : error);
    server.once('error', failed);
    server.once('listening', () => {
      server.off('error', failed);
      resolve();
    });
  });
  // Once listening, an error is one of accepting a connection (EMFILE: the process is out of file
  // descriptors), and Node goes on listening. The start-up's listener, left on, took the first
  // unsaid, and the second, unheard, ended the process.
  const bound = hostPort(host, (server.address() as AddressInfo).port);
  server.on('error', (error: NodeJS.ErrnoException) => {
    if (options.logger)
      options.logger.error({ err: error }, `the listener on ${bound} failed: ${error.code ?? error.message}`);
    else process.emitWarning(error);
  });
  return server;
}

/**
 * At start-up: a listener that cannot bind ends the process with one fatal log line naming the
 * address and the variable to change (exit 1), like the other start-up refusals, instead of an
 * unhandled rejection's stack trace. With `stop` (a process whose shutdown is registered: its
 * worker may hold jobs by then), through that shutdown, which exits 1; the listener's promise then
 * never settles.
 */
export async function listenedOrExit<T>(
  logger: Logger,
  listening: Promise<T>,
  stop?: (reason: string) => void,
): Promise<T> {
  try {
    return await listening;
  } catch (error) {
    if (!(error instanceof ListenError)) throw error;
    logger.fatal({ host: error.host, port: error.port, code: error.code }, error.message);
    if (!stop) process.exit(1);
    stop(error.message);
    return new Promise<T>(() => undefined);
  }
}

/**
 * How long a shutdown lets in-flight requests finish before it closes their connections: half the
 * shutdown deadline the process was given (SHUTDOWN_DEADLINE_MS as configured), so a client that
 * never finishes its request (partial headers, a slow body) costs the drain this much and leaves
 * the other half for what closes after it (the receiver's spool and queue, the tray's pools),
 * instead of holding the process to the deadline. At the least deadline accepted, 5 s, that half
 * holds the receiver's 1.5 s reserve for its closes and a last spool pass of 1 s.
 */
export const drainGraceMs = (deadlineMs: number): number => deadlineMs / 2;

/** closeServer's grace when none is given: that of the built-in deadline. */
const DEFAULT_DRAIN_GRACE_MS = drainGraceMs(SHUTDOWN_DEADLINE_MS);

/** closeServer's `onCut` for a service's shutdown: one warning with the count. */
export const warnCut =
  (logger: Logger) =>
  (connections: number): void =>
    logger.warn({ connections }, 'closed connections whose requests had not finished within the drain');

/** How often a drain closes the kept-alive connections that have gone idle since it began. */
const IDLE_SWEEP_MS = 50;

/**
 * Stops accepting connections at once, closes idle keep-alive sockets, lets in-flight requests
 * finish, and after `graceMs` closes the connections still open. Node goes on serving a kept-alive
 * connection after close(): a balancer reusing its connections kept every one busy, so the drain
 * always ran its whole grace and then reset what was in flight. So each request from now on is
 * answered with `Connection: close`, and connections that go idle (their request in flight at
 * the start answered) are closed as they do. `onCut` is told how many connections the grace's end
 * closed with a request unfinished (the shutdown logs it: those clients saw a reset).
 */
export async function closeServer(
  server: Server,
  graceMs = DEFAULT_DRAIN_GRACE_MS,
  onCut?: (connections: number) => void,
): Promise<void> {
  const toClose = (_req: IncomingMessage, res: ServerResponse) => res.setHeader('Connection', 'close');
  server.prependListener('request', toClose);
  // A request listen's deferContinue takes comes as 'checkContinue' instead (never added where
  // there is none: Node would stop sending 100 Continue itself).
  if (server.listenerCount('checkContinue') > 0) server.prependListener('checkContinue', toClose);
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
  const timer = setTimeout(() => {
    // Idle ones were closed as they went idle: what is left is busy.
    server.closeIdleConnections();
    server.getConnections((error, count) => {
      server.closeAllConnections();
      if (!error && count > 0) onCut?.(count);
    });
  }, graceMs);
  await closed;
  clearInterval(sweep);
  clearTimeout(timer);
}
