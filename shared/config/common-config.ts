import { identifier, logLevel, url } from './env-types.ts';

/** Variables both services read. */
export const commonShape = {
  REDIS_URL: url(['redis', 'rediss'], 'redis://127.0.0.1:6379'),
  MONGODB_URI: url(['mongodb', 'mongodb+srv'], 'mongodb://127.0.0.1:27017'),
  MONGODB_DB: identifier('tray'),
  /** Prefix of every bull key in Redis; lets several deployments (or test suites) share one Redis. */
  QUEUE_PREFIX: identifier('bull'),
  LOG_LEVEL: logLevel,
};
