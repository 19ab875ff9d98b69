import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Makes `path` its owner's only (0700), and the folders above it that do not exist yet as any other
 * folder (the umask's mode). mkdir's recursive `mode` applies to every folder it makes: a stack
 * started as root with STACK_DATA_DIR=/srv/stack/data closed /srv/stack to the postgres account it
 * runs PostgreSQL as, and then refused to start for a folder it had made itself. Like mkdir, leaves
 * the mode of a folder that exists as it is.
 */
export function makeOwnerOnlyDir(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  mkdirSync(path, { recursive: true, mode: 0o700 });
}
