import { connect } from 'node:net';
import { createRedis } from '../../../shared/redis/create-redis.ts';

/**
 * Sends `GET path` with a session cookie and leaves (closes the connection) while the admin guard
 * is still looking the session up: the real Redis of the sessions is paused (`CLIENT PAUSE`) for
 * `pauseMs`, and the client goes after a third of it. Resolves once the paused lookup has answered
 * and the route has run on a response whose client is gone.
 */
export async function leaveDuringLookup(
  port: number,
  path: string,
  cookie: string,
  redisUrl: string,
  pauseMs = 600,
): Promise<void> {
  const pauser = createRedis(redisUrl);
  try {
    await pauser.call('CLIENT', 'PAUSE', String(pauseMs), 'ALL');
  } finally {
    pauser.disconnect();
  }
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${cookie}\r\n\r\n`);
  await new Promise((resolve) => setTimeout(resolve, pauseMs / 3));
  socket.destroy();
  await new Promise((resolve) => setTimeout(resolve, pauseMs));
}
