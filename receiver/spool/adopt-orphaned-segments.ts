import { lstat, rename, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { foreignEntryReason } from './foreign-entry.ts';
import { listInstances, ownerSocketPath } from './instance-folders.ts';
import { ownerIsAlive } from './owner-socket.ts';
import { ifGone, listSegments, probeName, segmentName, segmentPath, syncDirectory } from './segment-files.ts';

/** Told of each entry under SPOOL_DIR left alone because this process did not write it. */
export type OnForeignEntry = (path: string, reason: string) => void;

/** foreignEntryReason of the entry at `path` (lstat: a symlink is itself, not what it names). */
async function whyForeign(path: string, kind: 'segment' | 'folder'): Promise<string | undefined> {
  const stats = await lstat(path).catch(ifGone(undefined));
  return stats === undefined ? undefined : foreignEntryReason(stats, kind);
}

/**
 * Moves into the new, empty folder `own` (instance `instance` of `root`) the segments that
 * receivers no longer running left under `root`: those of every instance folder whose owner socket
 * refuses connections or is gone, and those directly in `root` (spooled before receivers had
 * folders of their own). They are numbered from 1 in the order found, oldest first per folder. A
 * rename either happens or fails as a whole, so when two receivers start at once each segment goes
 * to exactly one of them; the other finds it gone and skips it. Emptied folders and dead sockets
 * are removed. Only this user's folders and regular files are taken (foreign-entry.ts): anything
 * else is left where it is and reported to `onForeign`.
 */
export async function adoptOrphanedSegments(
  root: string,
  own: string,
  instance: string,
  onForeign: OnForeignEntry = () => undefined,
): Promise<void> {
  const { folders, sockets } = await listInstances(root);
  const orphans: string[] = [];
  for (const name of folders) {
    if (name === instance) continue;
    const reason = await whyForeign(join(root, name), 'folder');
    if (reason !== undefined) onForeign(join(root, name), reason);
    else if (!(await ownerIsAlive(ownerSocketPath(root, name)))) orphans.push(name);
  }
  let seq = 1;
  for (const folder of [root, ...orphans.map((name) => join(root, name))]) {
    for (const segment of await listSegments(folder).catch(ifGone([]))) {
      const from = segmentPath(folder, segment.name);
      const before = await whyForeign(from, 'segment');
      if (before !== undefined) {
        onForeign(from, before);
        continue;
      }
      const to = segmentPath(own, segmentName(seq));
      const moved = await rename(from, to).then(() => true, ifGone(false));
      if (!moved) continue;
      // Checked again where no one else can write: in a folder others may write in, the entry
      // could have been swapped between the check above and the rename.
      const after = await whyForeign(to, 'segment');
      if (after !== undefined) {
        await unlink(to);
        onForeign(from, `${after} (swapped in while it was taken over; removed)`);
        continue;
      }
      seq += 1;
    }
  }
  if (seq > 1) await syncDirectory(own);
  for (const name of orphans) {
    const folder = join(root, name);
    // A probe file a crash left is all an orphan may still hold; anything else keeps it for later.
    await unlink(join(folder, probeName)).catch(() => undefined);
    await rmdir(folder).catch(() => undefined);
  }
  // Sockets of receivers that died before they made their folder, or whose folder is gone now.
  for (const name of sockets) {
    if (name === instance || (folders.includes(name) && !orphans.includes(name))) continue;
    const path = ownerSocketPath(root, name);
    if (!(await ownerIsAlive(path))) await unlink(path).catch(ifGone(undefined));
  }
  await syncDirectory(root);
}
