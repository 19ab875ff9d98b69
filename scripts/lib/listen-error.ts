import { createServer } from 'node:net';

/**
 * Why a listener could not bind host:port at this moment (EADDRINUSE: another program has it;
 * EADDRNOTAVAIL: no interface has that address), or undefined when it could.
 */
export function listenError(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}
