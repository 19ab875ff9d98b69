import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface BlackholeProxy {
  /** The port the proxy listens on (127.0.0.1). */
  readonly port: number;
  /**
   * Stops carrying bytes either way on every connection open now, without closing any: what a
   * network cut or a vanished host looks like to both ends. Connections made later are carried.
   */
  blackhole(): void;
  /**
   * Stops carrying the server's bytes on every connection open now, still carrying the client's:
   * a command reaches the server and runs, and its answer is lost on the way back.
   */
  loseReplies(): void;
  /**
   * Carries connections made from now on to another local port; those open now stay where they
   * are: a managed server failing over behind one address (a DNS name, a virtual IP).
   */
  retarget(port: number): void;
  close(): Promise<void>;
}

/**
 * A TCP proxy in front of a local server (127.0.0.1:`targetPort`) for the tests of a connection
 * whose peer goes silent without a FIN or a RST, which stopping a process cannot show: the kernel
 * closes a dead process's sockets, and a SIGSTOPped one still gets its bytes acknowledged.
 */
export async function startBlackholeProxy(targetPort: number): Promise<BlackholeProxy> {
  /** Connections carried now. */
  const pairs = new Set<[Socket, Socket]>();
  /** Every connection still open, carried or not, for close(). */
  const open = new Set<[Socket, Socket]>();
  let target = targetPort;
  const server: Server = createServer((client) => {
    const upstream = connect(target, '127.0.0.1');
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    open.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      pairs.delete(pair);
      open.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    blackhole() {
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        // Read and dropped: nothing piles up to close the flow, nothing reaches the other end.
        client.removeAllListeners('data').on('data', () => undefined);
        upstream.removeAllListeners('data').on('data', () => undefined);
      }
      pairs.clear();
    },
    loseReplies() {
      for (const [client, upstream] of pairs) {
        upstream.unpipe(client);
        upstream.removeAllListeners('data').on('data', () => undefined);
      }
    },
    retarget(port) {
      target = port;
    },
    async close() {
      server.close();
      for (const [client, upstream] of open) {
        client.destroy();
        upstream.destroy();
      }
    },
  };
}
