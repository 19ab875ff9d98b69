import type { Db } from 'mongodb';
import { isFerretDb } from '../../../../shared/mongo/is-ferretdb.ts';

/**
 * Whether the server makes TTL indexes. MongoDB does; FerretDB 1.24 refuses `expireAfterSeconds`
 * (code 238), and there the periodic purge alone expires data (purge-expired.ts). Asked once at
 * start-up, so an expiry index created without TTL on FerretDB is not taken for a changed
 * definition at every start.
 */
export async function acceptsTtlIndexes(db: Db): Promise<boolean> {
  return !(await isFerretDb(db));
}
