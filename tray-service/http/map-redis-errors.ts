import { isRedisUnavailable } from '../../shared/redis/redis-failure.ts';
import { mapUnavailable } from './map-unavailable.ts';

/**
 * Redis's "cannot serve this now" becomes 503 with Retry-After, as the database's does
 * (map-store-errors.ts): a call that needs Redis (an admin session, a replay's progress) while it
 * is unreachable is not an internal error. Everything else goes on to the error middleware.
 */
export const mapRedisErrors = mapUnavailable(isRedisUnavailable, 'Redis is unavailable, try again later');
