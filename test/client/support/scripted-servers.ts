import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Registers hooks giving each test of the enclosing suite real HTTP servers whose answers it
 * writes itself: for what the tray service never answers on its own (a proxy's page, a cut event,
 * a Retry-After of a month), which the client must still survive. Each is closed after its test,
 * connections and all.
 */
export function useScriptedServers(): { serve(handler: RequestListener): Promise<string> } {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
  return {
    /** Starts a server on 127.0.0.1 answering with `handler`; answers its base URL. */
    async serve(handler) {
      const server = createServer(handler);
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
  };
}
