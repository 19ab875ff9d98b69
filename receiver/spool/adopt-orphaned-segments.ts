import { lstat, rename, rm, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { foreignEntryReason } from './foreign-entry.ts';
import { listInstances, ownerSocketPath, stoppedMarkName } from './instance-folders.ts';
import { ownerIsAlive, ownerStatus } from './owner-socket.ts';
import { ifGone, listSegments, probeName, segmentName, segmentPath, syncDirectory } from './segment-files.ts';

/** Told of each entry under SPOOL_DIR left alone because this process did not write it. */
export type OnForeignEntry = (path: string, reason: string) => void;

/** Whether no segment in `folder` changed in the last `quietMs` (an unreadable one counts as changed). */
async function quietSince(folder: string, quietMs: number): Promise<boolean> {
  if (quietMs <= 0) return true;
  const since = Date.now() - quietMs;
  for (const segment of await listSegments(folder).catch(ifGone([]))) {
    const stats = await lstat(segmentPath(folder, segment.name)).catch(ifGone(undefined));
    if (stats !== undefined && stats.mtimeMs > since) return false;
  }
  return true;
}

/**
 * Whether a starting receiver takes the folder `name` at once: its owner died (the socket refuses)
 * or stopped with events left (its mark). A socket file gone without the mark may be a live
 * receiver's, removed by hand or by a cleaner of old files: taking its folder would move the
 * segment it appends to, so only the running receivers' checks, spanning its own remaking of the
 * socket, take that one.
 */
async function takenAtStart(root: string, name: string): Promise<boolean> {
  const status = await ownerStatus(ownerSocketPath(root, name));
  if (status !== 'gone') return status === 'refused';
  const mark = await lstat(join(root, name, stoppedMarkName)).catch(ifGone(undefined));
  return mark?.isFile() === true;
}

/** foreignEntryReason of the entry at `path` (lstat: a symlink is itself, not what it names). */
async function whyForeign(path: string, kind: 'segment' | 'folder'): Promise<string | undefined> {
  const stats = await lstat(path).catch(ifGone(undefined));
  return stats === undefined ? undefined : foreignEntryReason(stats, kind);
}

/**
 * A running receiver takes a folder over only once it found its owner dead in this many checks in
 * a row: a live owner whose socket file was removed makes it again at its own next check
 * (OwnerSocket.ensure), so checks spanning two of its periods always find it alive once. At start
 * the folders of owners that died (socket refused) or stopped (stoppedMarkName) are taken at once;
 * one whose socket file is merely gone is left to those checks.
 */
export const DEAD_CHECKS = 3;

export interface AdoptOptions {
  /** The first number given to a segment taken over: above every segment `own` holds (default 1). */
  firstSeq?: number;
  /**
   * A running receiver's: how many checks in a row found each folder's owner dead, kept from one
   * call to the next; a folder is taken at DEAD_CHECKS. Without it, at once.
   */
  deadChecks?: Map<string, number>;
  /**
   * With deadChecks: a folder a segment of which changed less than this long ago (ms) is not taken
   * yet, however its socket answers: a live receiver appending to a segment always changes it.
   */
  quietMs?: number;
  /**
   * Told of another receiver's folder (or SPOOL_DIR's own segments) that could not be looked at or
   * taken over for an error of its own (a damaged folder, a locked one): it is left for the next
   * call, and the rest are taken over. Otherwise one such folder stopped every start, and every
   * running check before the folders after it.
   */
  onTakeOverFailed?: (path: string, error: unknown) => void;
}

/**
 * Moves into the folder `own` (instance `instance` of `root`) the segments that receivers no
 * longer running left under `root`: those of every instance folder whose owner socket refuses
 * connections or is gone, and those directly in `root` (spooled before receivers had folders of
 * their own). They are numbered from `firstSeq` in the order found, oldest first per folder, past
 * any number taken in `own`; returns how many numbers it used. A rename either happens or fails as
 * a whole, so when two receivers adopt at once each segment goes to exactly one of them; the other
 * finds it gone and skips it. Emptied folders and dead sockets are removed. Only this user's
 * folders and regular files are taken (foreign-entry.ts): anything else is left where it is and
 * reported to `onForeign`.
 */
export async function adoptOrphanedSegments(
  root: string,
  own: string,
  instance: string,
  onForeign: OnForeignEntry = () => undefined,
  options: AdoptOptions = {},
): Promise<number> {
  const firstSeq = options.firstSeq ?? 1;
  const { folders, sockets } = await listInstances(root);
  const orphans: string[] = [];
  const { deadChecks } = options;
  const failed = (path: string, error: unknown) => options.onTakeOverFailed?.(path, error);
  for (const name of folders) {
    if (name === instance) continue;
    try {
      const reason = await whyForeign(join(root, name), 'folder');
      if (reason !== undefined) onForeign(join(root, name), reason);
      else if (!deadChecks) {
        if (await takenAtStart(root, name)) orphans.push(name);
      } else if (await ownerIsAlive(ownerSocketPath(root, name))) deadChecks.delete(name);
      else {
        const seen = (deadChecks.get(name) ?? 0) + 1;
        deadChecks.set(name, seen);
        if (seen >= DEAD_CHECKS && (await quietSince(join(root, name), options.quietMs ?? 0)))
          orphans.push(name);
      }
    } catch (error) {
      failed(join(root, name), error);
    }
  }
  if (deadChecks) for (const name of deadChecks.keys()) if (!folders.includes(name)) deadChecks.delete(name);
  /** The next number; the folders a segment left (synced too: a crash cannot bring one back). */
  const moving: Moving = { seq: firstSeq, emptied: new Set() };
  const { emptied } = moving;
  /** Orphans that failed part-way: kept, with what is left in them, for a later call. */
  const kept = new Set<string>();
  for (const folder of [root, ...orphans.map((name) => join(root, name))]) {
    try {
      await moveSegments(folder, own, moving, onForeign);
    } catch (error) {
      // Only the folder's own failures leave it for later: one of `own` still fails the call.
      if (!(error instanceof SourceFolderError)) throw error;
      kept.add(folder);
      failed(folder, error.cause);
    }
  }
  // Also after a folder that failed part-way: what was moved in before is synced.
  if (emptied.size > 0) await syncDirectory(own);
  // The root is synced below, after the orphans' folders go.
  for (const folder of emptied) if (folder !== root) await syncDirectory(folder).catch(ifGone(undefined));
  for (const name of orphans) {
    const folder = join(root, name);
    if (kept.has(folder)) continue;
    // A probe file a crash left and the stopped mark are all an orphan may still hold; anything
    // else keeps it for later.
    await unlink(join(folder, probeName)).catch(() => undefined);
    await unlink(join(folder, stoppedMarkName)).catch(() => undefined);
    await rmdir(folder).catch(() => undefined);
  }
  // Sockets of receivers that died before they made their folder, or whose folder is gone now. One
  // whose folder failed part-way stays: refusing, it has the next start take that folder at once.
  for (const name of sockets) {
    const left = folders.includes(name) && (!orphans.includes(name) || kept.has(join(root, name)));
    if (name === instance || left) continue;
    const path = ownerSocketPath(root, name);
    if (!(await ownerIsAlive(path))) await unlink(path).catch(ifGone(undefined));
  }
  await syncDirectory(root);
  return moving.seq - firstSeq;
}

/** A failure of the folder segments are taken from, not of `own`: that folder is left for later. */
class SourceFolderError extends Error {
  constructor(cause: unknown) {
    super('the folder could not be taken over', { cause });
  }
}

const ofSource = <T>(step: Promise<T>): Promise<T> =>
  step.catch((error: unknown) => {
    throw new SourceFolderError(error);
  });

/** A take-over's progress through the folders it moves segments out of. */
interface Moving {
  seq: number;
  emptied: Set<string>;
}

/**
 * Moves the segments of `folder` into `own`, numbered from `moving.seq`, past any number taken
 * there; `moving` keeps the progress also when a later segment fails.
 */
async function moveSegments(
  folder: string,
  own: string,
  moving: Moving,
  onForeign: OnForeignEntry,
): Promise<void> {
  for (const segment of await ofSource(listSegments(folder).catch(ifGone([])))) {
    const from = segmentPath(folder, segment.name);
    const before = await ofSource(whyForeign(from, 'segment'));
    if (before !== undefined) {
      onForeign(from, before);
      continue;
    }
    // Never over a segment of `own` (a number taken by an earlier, failed take-over, say).
    while (await lstat(segmentPath(own, segmentName(moving.seq))).then(() => true, ifGone(false)))
      moving.seq += 1;
    const to = segmentPath(own, segmentName(moving.seq));
    // A rename that fails is the folder's (it cannot be changed), as far as can be told here.
    const moved = await ofSource(rename(from, to).then(() => true, ifGone(false)));
    if (!moved) continue;
    moving.emptied.add(folder);
    // Checked again where no one else can write: in a folder others may write in, the entry
    // could have been swapped between the check above and the rename.
    const after = await whyForeign(to, 'segment');
    if (after !== undefined) {
      // Whatever it is (a directory too): it is in `own` now, named like a segment.
      await rm(to, { recursive: true, force: true });
      onForeign(from, `${after} (swapped in while it was taken over; removed)`);
      continue;
    }
    moving.seq += 1;
  }
}
