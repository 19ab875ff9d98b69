import { connect, type Socket } from 'node:net';
import { ADMIN_TOKEN } from './admin-fixtures.ts';

/** A GET whose client stopped reading after the first bytes: a paused download, a sleeping laptop. */
export interface StalledReader {
  /** The status line the server answered, e.g. `HTTP/1.1 200 OK`. */
  status: string;
  socket: Socket;
  /** Reads again, and resolves with the bytes received in all once the server ends the connection. */
  readToEnd(): Promise<number>;
}

/**
 * Sends `GET path` as the admin (ADMIN_TOKEN, or the credential `header` names: a session's
 * cookie) over a raw socket and stops reading once the first bytes came.
 */
export async function stalledGet(
  port: number,
  path: string,
  header = `Authorization: Bearer ${ADMIN_TOKEN}`,
): Promise<StalledReader> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${header}\r\n\r\n`);
  const first: Buffer = await new Promise((resolve) => socket.once('data', resolve));
  socket.pause();
  let received = first.length;
  const ended = new Promise<number>((resolve) => {
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.once('close', () => resolve(received));
  });
  // A reset after the server dropped the connection is an end like another here.
  socket.on('error', () => undefined);
  socket.pause();
  return {
    status: first.toString('latin1').split('\r\n')[0] ?? '',
    socket,
    readToEnd() {
      socket.resume();
      return ended;
    },
  };
}
