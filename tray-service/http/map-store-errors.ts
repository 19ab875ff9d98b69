import { mapUnavailable } from './map-unavailable.ts';
import { isStorageUnavailable } from '../storage/storage-unavailable.ts';

/**
 * The one place storage errors become 503 (the JSON error shape, Retry-After); everything else
 * goes on to the error middleware. Which errors those are is each adapter's to say
 * (storage/storage-unavailable.ts).
 */
export const mapStoreErrors = mapUnavailable(
  isStorageUnavailable,
  'the database is unavailable, try again later',
);
