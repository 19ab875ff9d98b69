import { MongoClient, type Db } from 'mongodb';
import type { Logger } from '../logging/create-logger.ts';
import { isFerretDb } from './is-ferretdb.ts';
import { watchHeartbeats } from './watch-heartbeats.ts';

export interface MongoConnection {
  client: MongoClient;
  db: Db;
  /** Stops the heartbeat watch and closes the client: use this, not client.close(), to shut down. */
  close(): Promise<void>;
}

const connectTimeoutMS = 2_000;

/**
 * Connections to a FerretDB unless the URI names `maxPoolSize`. FerretDB 1.24 on PostgreSQL takes
 * two connections of its own pool (50 by default), one after the other, for an update or
 * findAndModify that matches a document: with 50 such commands at once each holds one and waits
 * for ever for a second, and every later command waits behind them. The worker runs 64 jobs at
 * once (TRAY_WORKER_CONCURRENCY); with 20 a process, an API process and a worker process on one
 * FerretDB stay under 50 (docs/storage.md says what more processes need). A real MongoDB keeps
 * the driver's default (100).
 */
const FERRETDB_POOL_SIZE = 20;

const namesPoolSize = (uri: string) => /[?&]maxPoolSize=/i.test(uri);

/** The driver's default; an awaited (streaming) heartbeat lasts up to this long. */
const heartbeatFrequencyMS = 10_000;
/**
 * Longer than any healthy heartbeat: an awaited hello, plus a connect and a handshake that are each
 * bounded by connectTimeoutMS, plus slack for a busy event loop.
 */
export const stuckHeartbeatMs = heartbeatFrequencyMS + 2 * connectTimeoutMS + 6_000;

/**
 * Connects with short server-selection timeouts: when MongoDB is down an API request fails with
 * 503 in about a second instead of hanging for the driver's default 30 s.
 *
 * The client is reconnected (closed and connected again; `db` stays valid) when a server's
 * heartbeat is stuck, which otherwise leaves the client failing every operation until the process
 * restarts (watch-heartbeats.ts). Operations in flight then fail once; jobs are retried by bull and
 * API requests answer 503, as during any database outage.
 */
export async function connectMongo(
  uri: string,
  dbName: string,
  options: {
    appName: string;
    serverSelectionTimeoutMS?: number;
    logger?: Logger;
    stuckHeartbeatMs?: number;
    /**
     * A pool of its own, over the URI's and the FerretDB default: a probe's client, a few
     * connections whose commands wait a bounded time on their socket and for a connection (without
     * that, a command that never got its answer held a small pool for good, and every later probe
     * waited behind it, reading a database that answered again as down).
     */
    pool?: { maxPoolSize: number; socketTimeoutMS: number; waitQueueTimeoutMS: number };
  },
): Promise<MongoConnection> {
  const settings = {
    appName: options.appName,
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 2_000,
    connectTimeoutMS,
    heartbeatFrequencyMS,
    ...options.pool,
  };
  let client = new MongoClient(uri, settings);
  await client.connect();
  if (options.pool === undefined && !namesPoolSize(uri) && (await isFerretDb(client.db()))) {
    await client.close();
    client = new MongoClient(uri, { ...settings, maxPoolSize: FERRETDB_POOL_SIZE });
    await client.connect();
  }
  const { logger } = options;
  const watch = watchHeartbeats(client, {
    stuckAfterMs: options.stuckHeartbeatMs ?? stuckHeartbeatMs,
    onStuck: async (servers) => {
      logger?.warn({ servers }, 'MongoDB server monitor stuck; reconnecting the client');
      await client.close();
      for (let attempt = 1; !watch.stopped; attempt += 1) {
        try {
          await client.connect();
          // Shut down while this connect ran: leave the client closed, as the owner asked.
          if (watch.stopped) return void (await client.close());
          logger?.info({ attempt }, 'MongoDB client reconnected');
          return;
        } catch (error) {
          logger?.warn({ attempt, err: (error as Error).message }, 'MongoDB reconnect failed; retrying');
          await new Promise((resolve) => setTimeout(resolve, Math.min(attempt * 1_000, 5_000)));
        }
      }
    },
  });
  return {
    client,
    db: client.db(dbName),
    async close() {
      watch.stop();
      await client.close();
    },
  };
}

export async function pingMongo(db: Db): Promise<void> {
  await db.command({ ping: 1 });
}
