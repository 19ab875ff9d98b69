import { join } from 'node:path';
import { createBenchDatabase } from './bench-database.ts';
import { startPostgres, startRedis } from './local-servers.ts';
import type { Stoppable } from './stop-on-signal.ts';

/**
 * Redis and a PostgreSQL database of the bench's own: the operator's servers when REDIS_URL or
 * DATABASE_URL are set, otherwise servers started under `dir` and pushed onto `servers` (the caller
 * stops them, also on Ctrl-C; the database on an operator's server is pushed too, to be dropped). `redisPrefixes` are the services' Redis key prefixes, unique to this
 * run: on the operator's Redis the default ones are a running stack's, whose queue the bench's
 * workers would take jobs from (and whose tray would apply the bench's events).
 */
export async function startBenchStores(
  dir: string,
  databasePrefix: string,
  servers: Stoppable[],
): Promise<{ redisUrl: string; databaseUrl: string; redisPrefixes: NodeJS.ProcessEnv }> {
  const redis = process.env.REDIS_URL ? undefined : await startRedis({ dir: join(dir, 'redis') });
  if (redis) servers.push(redis);
  const postgres = process.env.DATABASE_URL
    ? undefined
    : await startPostgres({ dir: join(dir, 'postgres'), durability: 'persistent' });
  if (postgres) servers.push(postgres);
  const databaseUrl = postgres
    ? await createBenchDatabase(postgres.url, databasePrefix)
    : await createBenchDatabase(process.env.DATABASE_URL ?? '', databasePrefix, servers);
  const run = `${databasePrefix}-${Date.now()}`;
  const redisPrefixes = {
    QUEUE_PREFIX: run,
    STREAM_REDIS_PREFIX: `${run}-live`,
    RATE_LIMIT_PREFIX: `${run}-rl`,
    BAN_REDIS_PREFIX: `${run}-bans`,
  };
  return { redisUrl: redis?.url ?? process.env.REDIS_URL ?? '', databaseUrl, redisPrefixes };
}
