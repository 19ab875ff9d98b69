import { connect } from 'node:net';
import { request as httpRequest } from 'node:http';

export interface RawResponse {
  /** HTTP status of the first response on the connection, or undefined if none came back. */
  readonly status: number | undefined;
  readonly text: string;
}

/**
 * Writes `raw` bytes to 127.0.0.1:`port` exactly as given (duplicated headers, conflicting lengths,
 * broken chunking: what an HTTP client library refuses to send), then reads until the server closes
 * the connection or `timeoutMs` passes.
 */
export function rawRequest(port: number, raw: string | Buffer, timeoutMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const chunks: Buffer[] = [];
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolve({ status: match ? Number(match[1]) : undefined, text });
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.once('connect', () => socket.write(raw));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('close', finish);
    socket.once('error', finish);
  });
}

/** A request head with CRLF line ends; `headers` may repeat a name. */
export function requestHead(path: string, headers: readonly (readonly [string, string])[]): string {
  const lines = [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...headers.map(([n, v]) => `${n}: ${v}`)];
  return `${lines.join('\r\n')}\r\n\r\n`;
}

export interface PostResult {
  readonly status: number;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  readonly json: unknown;
}

/**
 * POSTs the exact bytes with node:http (supertest JSON-serialises Buffers sent as application/json,
 * and fetch refuses some headers), so hostile bodies and headers arrive as generated.
 */
export function httpPost(
  port: number,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<PostResult> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: { ...headers, 'content-length': body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
