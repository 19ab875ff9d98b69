import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isSegmentName } from './segment-files.ts';

/**
 * Every receiver process spools into a folder of its own under SPOOL_DIR, `instance-<random>`, so
 * receivers sharing a SPOOL_DIR never append to, drain or delete each other's segments. Beside it,
 * `instance-<random>.sock` is the owner's socket (owner-socket.ts): while it accepts connections
 * the folder is in use; once refused (or gone), its segments are the next starting receiver's, or
 * a running one's (adopt-orphaned-segments.ts, DEAD_CHECKS).
 */
const instancePattern = /^instance-[0-9a-f]{12}$/;

/** A name no other process has: 48 random bits. */
export const newInstanceName = () => `instance-${randomBytes(6).toString('hex')}`;

export const ownerSocketPath = (root: string, instance: string) => join(root, `${instance}.sock`);

/**
 * Whether `name`, an entry of SPOOL_DIR, is the spool's own: an instance folder, its owner socket,
 * or a segment a receiver from before the instance folders wrote there.
 */
export const isSpoolEntry = (name: string) =>
  instancePattern.test(name) ||
  (name.endsWith('.sock') && instancePattern.test(name.slice(0, -5))) ||
  isSegmentName(name);

/** The instance folders under `root`, and the instances whose socket file is there, sorted by name. */
export async function listInstances(root: string): Promise<{ folders: string[]; sockets: string[] }> {
  const entries = await readdir(root, { withFileTypes: true });
  const folders = entries
    .filter((entry) => entry.isDirectory() && instancePattern.test(entry.name))
    .map((entry) => entry.name)
    .sort();
  const sockets = entries
    .filter((entry) => entry.name.endsWith('.sock') && instancePattern.test(entry.name.slice(0, -5)))
    .map((entry) => entry.name.slice(0, -5))
    .sort();
  return { folders, sockets };
}

/**
 * Written into its folder by a receiver that stops with events left, before it gives up its
 * socket, whose file then goes: a starting receiver takes such a folder at once. A folder whose
 * socket file is gone without it may be a live receiver's whose socket file was removed (it makes
 * it again within seconds), so only the running receivers' repeated checks take it
 * (adopt-orphaned-segments.ts). Not a segment name: a drain never reads it.
 */
export const stoppedMarkName = '.stopped';
