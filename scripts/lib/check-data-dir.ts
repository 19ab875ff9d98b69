import { existsSync, readdirSync } from 'node:fs';
import { takeOverRightPath } from './pid-lock.ts';

/**
 * What the stack itself keeps in its data directory (a start cut short, or a killed stack, may leave
 * some without dev-secrets.json): its secrets, the servers' data, the spool, the lock and stack.env,
 * with the files those are written through or taken with.
 */
const STACK_ENTRIES = new Set([
  'dev-secrets.json',
  'dev-secrets.json.new',
  // An earlier version's FerretDB data, from when npm start ran it.
  'ferretdb',
  'postgres',
  'redis',
  'receiver-spool',
  'stack.pid',
  // The right to replace a killed stack's lock, left by a start killed while it took it over.
  takeOverRightPath('stack.pid'),
  'stack.env',
  'stack.env.new',
]);

/** dev-secrets.json's temporary name while it is written (createWhole): `dev-secrets.json.<pid>.new`. */
const SECRETS_BEING_WRITTEN = /^dev-secrets\.json\.\d+\.new$/;

const isStackEntry = (entry: string) => STACK_ENTRIES.has(entry) || SECRETS_BEING_WRITTEN.test(entry);

/**
 * Refuses a data directory that holds files not the stack's: the stack closes its directory to its
 * owner (0700, then 0710 for PostgreSQL's account), so `STACK_DATA_DIR=/tmp` would shut every other
 * account out of /tmp, for good. A new or empty directory, or one a stack made, is taken.
 */
export function checkDataDir(dataDir: string, variable = 'STACK_DATA_DIR'): void {
  if (!existsSync(dataDir)) return;
  const foreign = readdirSync(dataDir)
    .filter((entry) => !isStackEntry(entry))
    .sort();
  if (foreign.length === 0) return;
  const shown = foreign.slice(0, 3).join(', ') + (foreign.length > 3 ? ', ...' : '');
  throw new Error(
    `${variable}: ${dataDir} holds files of its own (${shown}) and is not a stack's data directory; name a new or empty one, as the stack makes it its owner's only`,
  );
}
