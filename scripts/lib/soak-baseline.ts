// The soak's same-run baseline: the bare calls under the service's own figures, timed from the
// bench's process on the same machine and stores through the whole run. A latency of the service
// that climbs while these stay flat is the service's; one that climbs with them is the machine
// (a neighbour on a shared host, the disk filling its cache) and no trend of the product.
import { Redis } from 'ioredis';
import pg from 'pg';
import { POSTGRES_SESSION_OPTIONS } from '../../tray-service/storage/postgres/connect-postgres.ts';
import { plainPage } from './bench-api-plain.ts';
import { p99Tenths } from './quantile.ts';

export interface SoakBaselineMinute {
  /** p99 of the history page's own statement, sent by node-postgres alone (ms). */
  barePageP99Ms: number;
  /** p99 of a Redis PING, the round trip under every enqueue and stream publish (ms). */
  barePingP99Ms: number;
  /** How many of each were timed in the minute. */
  bareCalls: number;
}

export interface SoakBaseline {
  /** The minute's figures; the samples start again. */
  take(): SoakBaselineMinute;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * Times, one after the other every `everyMs`, the page statement of the next of `users` (the API's
 * default page of the inbox view, as the soak's readers ask for it) and a Redis PING. One loop, so
 * the baseline adds little load of its own; a failed call is counted out, not timed.
 */
export function startSoakBaseline(options: {
  databaseUrl: string;
  redisUrl: string;
  users: readonly string[];
  pageSize: number;
  everyMs?: number;
}): SoakBaseline {
  const sql = new pg.Pool({
    connectionString: options.databaseUrl,
    options: POSTGRES_SESSION_OPTIONS,
    max: 1,
  });
  const redis = new Redis(options.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 1 });
  // A call that fails is dropped below; an error event without a listener would end the bench.
  redis.on('error', () => {});
  sql.on('error', () => {});
  let page: number[] = [];
  let ping: number[] = [];
  let stopped = false;
  const loop = (async () => {
    for (let n = 0; !stopped; n += 1) {
      const user = options.users[(n * 7919) % options.users.length] ?? '';
      const { text, values } = plainPage(user, 'inbox', undefined, options.pageSize);
      let began = performance.now();
      await sql.query(text, values).then(
        () => page.push(performance.now() - began),
        () => {},
      );
      began = performance.now();
      await redis.ping().then(
        () => ping.push(performance.now() - began),
        () => {},
      );
      await sleep(options.everyMs ?? 50);
    }
  })();
  return {
    take() {
      const minute = {
        barePageP99Ms: p99Tenths(page),
        barePingP99Ms: p99Tenths(ping),
        bareCalls: Math.min(page.length, ping.length),
      };
      page = [];
      ping = [];
      return minute;
    },
    async stop() {
      stopped = true;
      await loop;
      await sql.end();
      redis.disconnect();
    },
  };
}
