import { rename, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { listInstances, ownerSocketPath } from './instance-folders.ts';
import { ownerIsAlive } from './owner-socket.ts';
import { ifGone, listSegments, probeName, segmentName, segmentPath, syncDirectory } from './segment-files.ts';

/**
 * Moves into the new, empty folder `own` (instance `instance` of `root`) the segments that
 * receivers no longer running left under `root`: those of every instance folder whose owner socket
 * refuses connections or is gone, and those directly in `root` (spooled before receivers had
 * folders of their own). They are numbered from 1 in the order found, oldest first per folder. A
 * rename either happens or fails as a whole, so when two receivers start at once each segment goes
 * to exactly one of them; the other finds it gone and skips it. Emptied folders and dead sockets
 * are removed.
 */
export async function adoptOrphanedSegments(root: string, own: string, instance: string): Promise<void> {
  const { folders, sockets } = await listInstances(root);
  const orphans: string[] = [];
  for (const name of folders) {
    if (name !== instance && !(await ownerIsAlive(ownerSocketPath(root, name)))) orphans.push(name);
  }
  let seq = 1;
  for (const folder of [root, ...orphans.map((name) => join(root, name))]) {
    for (const segment of await listSegments(folder).catch(ifGone([]))) {
      const moved = await rename(segmentPath(folder, segment.name), segmentPath(own, segmentName(seq))).then(
        () => true,
        ifGone(false),
      );
      if (moved) seq += 1;
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
