import { createServer, type Server } from 'node:net';
import { freePort } from '../../scripts/lib/local-servers.ts';

/**
 * Registers hooks holding a loopback port open for the enclosing suite (a plain TCP listener), so
 * a process told to listen there meets EADDRINUSE. `port()` is read inside tests.
 */
export function useOccupiedPort(): { port: () => number } {
  let occupied: Server | undefined;
  let busyPort = 0;
  before(async () => {
    busyPort = await freePort();
    const server = createServer();
    occupied = server;
    await new Promise<void>((resolve) => server.listen(busyPort, '127.0.0.1', resolve));
  });
  after(() => new Promise<void>((resolve) => (occupied ? occupied.close(() => resolve()) : resolve())));
  return { port: () => busyPort };
}
