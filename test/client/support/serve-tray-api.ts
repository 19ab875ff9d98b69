import type { Express } from 'express';
import type { AddressInfo } from 'node:net';
import { closeServer, listen } from '../../../shared/http/listen.ts';
import { tokenFor, useTrayApi, type TrayApiHarness } from '../../tray-service/api/support/api-harness.ts';

export interface ServedTrayApi {
  readonly harness: TrayApiHarness;
  /** The URL of the suite's tray API (the harness's app over its storage and Redis). */
  readonly baseUrl: string;
  /** Serves another app (other deps) on a port of its own, closed with the suite; answers its URL. */
  serve(app: Express): Promise<string>;
}

/**
 * Registers hooks giving the enclosing suite a tray API listening on 127.0.0.1, over its own
 * PostgreSQL (or TEST_STORAGE's) database and Redis: what the client calls in its tests.
 */
export function useServedTrayApi(): ServedTrayApi {
  const harness = useTrayApi();
  const servers: Awaited<ReturnType<typeof listen>>[] = [];
  let baseUrl: string | undefined;
  const serve = async (app: Express) => {
    const server = await listen(app, { port: 0 });
    servers.push(server);
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  before(async () => {
    baseUrl = await serve(harness.app());
  });
  after(async () => {
    for (const server of servers.splice(0)) await closeServer(server, 1_000);
  });
  return {
    harness,
    get baseUrl() {
      if (!baseUrl) throw new Error('useServedTrayApi: used before the suite started');
      return baseUrl;
    },
    serve,
  };
}

/** A getToken for `userId` that the served API accepts. */
export const tokensOf = (userId: string) => () => tokenFor(userId);
