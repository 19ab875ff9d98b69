import type { Stats } from 'node:fs';

/**
 * Why an entry of SPOOL_DIR, seen by lstat, is not this process's to adopt, or undefined when it
 * is. Spooled events are queued as they stand, without the signature or allowlist checks they
 * passed when first received, so only what a receiver of this user wrote may be adopted: a
 * regular file (not a symlink, which would read some other file as this user, nor one with other
 * hard links) or a real folder, owned by the process's uid. In a SPOOL_DIR others may write in
 * (a Kubernetes emptyDir, an fsGroup volume, a shared folder), anything else may be planted.
 */
export function foreignEntryReason(
  stats: Stats,
  kind: 'segment' | 'folder',
  uid: number | undefined = process.getuid?.(),
): string | undefined {
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (kind === 'segment' && !stats.isFile()) return 'not a regular file';
  if (kind === 'folder' && !stats.isDirectory()) return 'not a folder';
  // No uids (Windows): nothing to compare.
  if (uid !== undefined && stats.uid !== uid) return `owned by uid ${stats.uid}, not this process's ${uid}`;
  if (kind === 'segment' && stats.nlink !== 1) return 'a file with other hard links';
  return undefined;
}
