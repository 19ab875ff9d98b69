import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Refuses a data directory that holds files and is not a stack's (no dev-secrets.json): the stack
 * closes its directory to its owner (0700, then 0710 for PostgreSQL's account), so
 * `STACK_DATA_DIR=/tmp` would shut every other account out of /tmp, for good. A new or empty
 * directory, or one an earlier run made, is taken.
 */
export function checkDataDir(dataDir: string, variable = 'STACK_DATA_DIR'): void {
  if (!existsSync(dataDir) || existsSync(join(dataDir, 'dev-secrets.json'))) return;
  const entries = readdirSync(dataDir);
  if (entries.length === 0) return;
  const shown = entries.slice(0, 3).join(', ') + (entries.length > 3 ? ', ...' : '');
  throw new Error(
    `${variable}: ${dataDir} holds files of its own (${shown}) and is not a stack's data directory; name a new or empty one, as the stack makes it its owner's only`,
  );
}
