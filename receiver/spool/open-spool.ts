import { constants } from 'node:fs';
import { access, chmod, mkdir, open, readdir, rmdir, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { EncodedWebhookJob } from '../../shared/queue/webhook-queue.ts';
import {
  ifGone,
  listSegments,
  probeWrite,
  type SegmentFile,
  readSegment,
  segmentName,
  segmentPath,
  splitLines,
  makeFolder,
  syncDirectory,
} from './segment-files.ts';
import { adoptOrphanedSegments, type OnForeignEntry } from './adopt-orphaned-segments.ts';
import { isSpoolEntry, newInstanceName, ownerSocketPath, stoppedMarkName } from './instance-folders.ts';
import { holdOwnerSocket, type OwnerSocket } from './owner-socket.ts';
import { spoolDirStep } from './spool-dir-error.ts';
import { SpoolClosedError } from './spool-closed-error.ts';
import { SpoolFullError } from './spool-full-error.ts';
import { SPOOL_DEADLINE_MS } from './spool-deadline.ts';

/**
 * The durable local spool: events the queue could not take in time, one JSON line
 * each, appended and fsynced before the request is acknowledged. Appends that arrive while an fsync
 * runs are written together with the next one (group commit), so an outage does not cost one disk
 * flush per request. Each receiver process has a folder of its own under SPOOL_DIR (openSpool).
 */
export interface Spool {
  /** This process's instance folder under SPOOL_DIR, which holds its segment files. */
  readonly dir: string;
  /**
   * Resolves once the event is on disk (write + fsync); rejects if it is not, and at once with a
   * SpoolFullError while SpoolOptions.maxPendingBytes of earlier appends wait for the disk.
   */
  append(job: EncodedWebhookJob): Promise<void>;
  /**
   * Events spooled and not yet drained. The events of a failed write count until the next drain
   * has read the segment: some of them may have reached the disk, and the drain hands those over.
   */
  depth(): number;
  /**
   * Resolves, with how many events they held, once the segments found at open are counted. Until
   * then each of those counts as one event: reading a long outage's spool (seconds a gigabyte)
   * before the receiver listens would refuse every delivery meanwhile.
   */
  readonly counted: Promise<number>;
  /**
   * Entries under SPOOL_DIR that opening the spool left alone because this process's user did
   * not write them (SpoolOptions.onForeignEntry): nonzero means someone else writes there.
   */
  foreignEntries(): number;
  /**
   * Whether a drain has anything to do: events to hand over, or drained segments whose delete
   * failed and is to be retried.
   */
  hasWork(): boolean;
  /**
   * Hands every spooled event, oldest first, to `handler`; a segment file is deleted once all its
   * events were handled. Stops at the first handler error and rethrows it; the next call resumes.
   * Once `signal` is aborted it returns after the event in hand (a shutdown must not wait for a
   * whole spool); the next call resumes there too. A call made while a drain runs shares that
   * drain, and its signal. Crash-safe only if the handler is idempotent: a crash before the delete
   * replays the segment.
   */
  drain(handler: (job: EncodedWebhookJob) => Promise<void>, signal?: AbortSignal): Promise<number>;
  /**
   * Throws if the spool directory cannot be written (readiness): the directory is gone or not
   * writable, the last append failed, or an append has waited past `stalledAfterMs` for its
   * write. Writes nothing while appends work, so a flood of probes costs no disk flush. After a
   * failed append it writes a probe file, at most once per `probeIntervalMs`, and reports the
   * spool writable again once that works: with Redis back, nothing else would be spooled to show
   * the disk recovered.
   */
  checkWritable(): Promise<void>;
  /**
   * Takes over the segments of receivers that stopped since (adoptOrphanedSegments), as the spool
   * did when it opened: a receiver stopped while others run (a rolling restart) leaves its events
   * to them. Returns how many events it took over; each foreign entry is reported once.
   */
  adoptOrphans(): Promise<number>;
  close(): Promise<void>;
}

/** How often a spool makes its owner socket's file again if it was removed. */
const OWNER_CHECK_MS = 5_000;
/** SpoolOptions.adoptQuietMs's default. */
const ADOPT_QUIET_MS = 60_000;
/** SpoolOptions.maxPendingBytes's default. */
const MAX_PENDING_BYTES = 64 * 1024 * 1024;

export interface SpoolOptions {
  /**
   * A segment grows no further (but by a single group of appends larger than it), so a drain never
   * reads a huge file.
   */
  maxSegmentBytes?: number;
  /** Called for every line that is not a complete event (a torn write); never with its content. */
  onCorruptLine?: (segment: string) => void;
  /** After a failed append, the least time between two probe writes of checkWritable. */
  probeIntervalMs?: number;
  /** Called once per drained segment that could not be deleted; later drains retry the delete. */
  onDeleteFailed?: (segment: string, error: unknown) => void;
  /**
   * Called, when the spool opens, for each entry under SPOOL_DIR named like a segment or an
   * instance folder that it leaves alone because this process's user did not write it (another
   * uid's, a symlink, not a regular file): in a SPOOL_DIR others may write in, a planted one.
   */
  onForeignEntry?: OnForeignEntry;
  /**
   * Called once per path for a stopped receiver's folder (or SPOOL_DIR's own segments) that could
   * not be taken over for an error of its own (a damaged or locked folder): its events stay on
   * disk, and every later check tries it again; the other folders are taken over meanwhile.
   */
  onTakeOverFailed?: (path: string, error: unknown) => void;
  /**
   * adoptOrphans leaves a stopped receiver's folder alone while one of its segments changed within
   * this long (ms; default 60 s): a receiver still appending is alive, whatever its socket says.
   */
  adoptQuietMs?: number;
  /**
   * Bytes of appends not yet on disk (waiting for the write in progress, or in it) past which an
   * append is refused at once (SpoolFullError; default 64 MiB): with Redis down and a disk that
   * stalls, every request would otherwise wait in memory for as long as the stall lasts. An append
   * is taken whatever its size while nothing waits, so no event is too large for the spool.
   */
  maxPendingBytes?: number;
  /**
   * checkWritable fails while an append has waited this long (ms; default SPOOL_DEADLINE_MS, the
   * receiver's budget for a spooled answer) for its write: an fsync that does not return (a stalled volume)
   * fails no write, yet every delivery spooled meanwhile is answered 503.
   */
  stalledAfterMs?: number;
}

/**
 * Opens a spool under `root` (SPOOL_DIR) for this process: an instance folder of its own, held by
 * its owner socket while the process runs, into which it first moves what receivers no longer
 * running left under `root` (instance-folders.ts). Receivers sharing a SPOOL_DIR never touch each
 * other's files. Rejects with a SpoolDirError naming what failed.
 */
export async function openSpool(root: string, options: SpoolOptions = {}): Promise<Spool> {
  await spoolDirStep(root, 'create the folder', () => makeFolder(root));
  await spoolDirStep(root, 'make the folder private (0700)', () => makePrivateIfOwned(root));
  await spoolDirStep(root, 'write in the folder', () => access(root, constants.W_OK | constants.X_OK));
  const instance = newInstanceName();
  // The socket before the folder: a folder without a live socket is a dead receiver's to take.
  const owner = await spoolDirStep(root, 'listen on its owner socket', () =>
    holdOwnerSocket(ownerSocketPath(root, instance)),
  );
  try {
    return await openInstance(root, instance, owner, options);
  } catch (error) {
    // It may have taken stopped receivers' segments over before it failed: said stopped before its
    // socket goes, as a closing spool does, so the next start takes them at once (unsaid, only
    // running receivers' checks would, a minute and more later, and with none running, never).
    await markStopped(join(root, instance)).catch(() => undefined);
    await owner.release();
    throw error;
  }
}

/** `tell`, called at most once per path. */
function oncePerPath<T>(tell: (path: string, detail: T) => void): (path: string, detail: T) => void {
  const told = new Set<string>();
  return (path, detail) => {
    if (told.has(path)) return;
    told.add(path);
    tell(path, detail);
  };
}

async function openInstance(
  root: string,
  instance: string,
  owner: OwnerSocket,
  options: SpoolOptions,
): Promise<Spool> {
  const maxSegmentBytes = options.maxSegmentBytes ?? 64 * 1024 * 1024;
  const probeIntervalMs = options.probeIntervalMs ?? 5_000;
  const maxPendingBytes = options.maxPendingBytes ?? MAX_PENDING_BYTES;
  const stalledAfterMs = options.stalledAfterMs ?? SPOOL_DEADLINE_MS;
  const dir = join(root, instance);
  let foreign = 0;
  // Foreign entries, and folders a take-over failed on: each told once, however often the folder
  // is looked at again.
  const onForeign = oncePerPath((path, reason: string) => {
    foreign += 1;
    options.onForeignEntry?.(path, reason);
  });
  const onTakeOverFailed = oncePerPath((path, error: unknown) => options.onTakeOverFailed?.(path, error));
  /** Other folders whose owner the periodic checks found dead, and how many times in a row. */
  const deadChecks = new Map<string, number>();
  await spoolDirStep(root, `create its folder ${instance}`, () => mkdir(dir, { mode: 0o700 }));
  await spoolDirStep(root, 'take over the events of stopped receivers', () =>
    adoptOrphanedSegments(root, dir, instance, onForeign, { onTakeOverFailed }),
  );
  const existing = await spoolDirStep(root, `list ${instance}`, () => listSegments(dir));
  let depth = 0;
  /**
   * Lines counted into `depth` per segment (by seq): those that may be on disk. An append counts its
   * lines before writing them, since a write or fsync that fails may still leave some there and a
   * drain hands those over too; a drain sets each count to what it reads, so `depth` never misses
   * a spooled event (the drainer skips an empty spool) nor goes below zero.
   */
  const counted = new Map<number, number>();
  /**
   * Segments taken over whose count in `counted` is a stand-in (one event) until their lines are
   * counted, outside the appends' turn; a drain that reads one first sets the real count.
   */
  const estimated = new Set<number>();
  // One event each until counted (countEstimated), as segments taken over later are.
  for (const segment of existing) {
    counted.set(segment.seq, 1);
    estimated.add(segment.seq);
    depth += 1;
  }
  /**
   * Reads each of `segments` counted as one event and sets its real count, unless a drain read it
   * first. One that cannot be read (an I/O error) stays one event: the drainer visits it and says
   * so, and the others drain (refused at open, it ended this start and every later one on the
   * folder, with all of their acknowledged events still spooled). Returns the events read.
   */
  const countEstimated = async (segments: readonly SegmentFile[]) => {
    let read = 0;
    for (const segment of segments) {
      const lines = await readSegment(segmentPath(dir, segment.name)).then(linesToDrain, () => 1);
      read += lines;
      if (!estimated.delete(segment.seq)) continue;
      depth += lines - (counted.get(segment.seq) ?? 0);
      counted.set(segment.seq, lines);
    }
    return read;
  };
  let nextSeq = (existing.at(-1)?.seq ?? 0) + 1;
  let active: { handle: FileHandle; seq: number; bytes: number } | undefined;
  /** Lines already handled per segment, so a drain resumed after an error skips them. */
  const progress = new Map<string, number>();
  /** Segments whose every event was handed over but whose delete failed (removeDrained). */
  const drainedNotDeleted = new Set<string>();
  let pending: { line: string; at: number; done: () => void; fail: (error: unknown) => void }[] = [];
  /** When the oldest append of the flush under way was made (none while no flush runs). */
  let flushingSince: number | undefined;
  /** Bytes of the lines appended and not yet settled: in `pending`, or in the flush under way. */
  let pendingBytes = 0;
  let flushQueued = false;
  let chain: Promise<unknown> = Promise.resolve();
  let draining: Promise<number> | undefined;
  /**
   * The last flush (or the probe since) failed and no write has succeeded since: the disk refuses
   * writes (readiness). `at` is when, so probes are spaced by probeIntervalMs.
   */
  let writeFailure: { error: unknown; at: number } | undefined;
  let probing: Promise<void> | undefined;

  /**
   * Makes the instance folder again, and its owner socket first, if they were removed (SPOOL_DIR
   * deleted and made again by hand, say), so appends work once the disk does.
   */
  const ensureFolder = async () => {
    await makeFolder(root);
    await owner.ensure();
    // Made again: its entry in the root is synced too, or a crash could lose the folder with the
    // segments fsynced in it.
    await makeFolder(dir);
  };

  /** Runs `task` after every earlier one: appends and rotations never interleave. */
  const exclusive = <T>(task: () => Promise<T>): Promise<T> => {
    const run = chain.then(task);
    chain = run.catch(() => undefined);
    return run;
  };

  const closeActive = async () => {
    const current = active;
    active = undefined;
    await current?.handle.close().catch(() => undefined);
  };

  /**
   * A segment file of its own, created for this spool's appends: never one already in the folder.
   * A take-over whose listing failed after its renames leaves nextSeq on a segment moved in, which
   * may end in a dead receiver's torn line; appended to, the first event acknowledged after it
   * would join that fragment and be dropped as corrupt. Such numbers are passed over.
   */
  const openNewSegment = async () => {
    for (;;) {
      const seq = nextSeq++;
      try {
        return { handle: await open(segmentPath(dir, segmentName(seq)), 'ax', 0o600), seq };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
  };

  /**
   * After a failed write: whether the active segment holds more than its appends that succeeded
   * (part of the failed group, maybe a partial line), or undefined when that cannot be known (no
   * segment, or its size cannot be read).
   */
  const writtenPastAppended = async (): Promise<boolean | undefined> => {
    if (!active) return undefined;
    const { bytes, handle } = active;
    const size = await handle.stat().then(
      (stats) => stats.size,
      () => undefined,
    );
    return size === undefined ? undefined : size !== bytes;
  };

  const flush = async () => {
    flushQueued = false;
    const batch = pending;
    pending = [];
    flushingSince = batch[0]?.at;
    /** The segment the group was counted against, once it was. */
    let countedIn: number | undefined;
    try {
      // Its file removed from disk (the folder deleted by hand): appends would go on into a file
      // no drain can find, acknowledged and then gone when it closes. A new segment takes them.
      // One fstat per flush, and flushes happen only while Redis is not taking events.
      if (active && (await active.handle.stat()).nlink === 0) await closeActive();
      const data = Buffer.from(batch.map((entry) => entry.line).join(''), 'utf8');
      // A drain reads a segment whole: a group that would take its segment past the bound starts
      // the next one (a group may hold up to maxPendingBytes, the bound's size again).
      if (active && active.bytes > 0 && active.bytes + data.length > maxSegmentBytes) await closeActive();
      if (!active) {
        await ensureFolder();
        const opened = await openNewSegment();
        // Appended to only once its entry in the folder is on disk: kept after a failed sync, the
        // next appends would be fsynced and acknowledged in a file a power loss could take.
        await syncDirectory(dir).catch(async (error: unknown) => {
          await opened.handle.close().catch(() => undefined);
          throw error;
        });
        active = { ...opened, bytes: 0 };
      }
      counted.set(active.seq, (counted.get(active.seq) ?? 0) + batch.length);
      depth += batch.length;
      countedIn = active.seq;
      await active.handle.appendFile(data);
      await active.handle.sync();
      active.bytes += data.length;
      writeFailure = undefined;
    } catch (error) {
      writeFailure = { error, at: performance.now() };
      flushingSince = undefined;
      // Answered before the handle is closed, here and below: a close that stalls as well must
      // not hold the answers, nor keep their bytes counted against maxPendingBytes.
      for (const entry of batch) entry.fail(error);
      // Nothing of the group reached the file (a full disk refuses the first byte): it is not
      // counted, and the segment stays the one appended to. A new segment per refused group left
      // an empty file, and a folder sync, per group commit for as long as the disk stayed full.
      if ((await writtenPastAppended()) === false) {
        if (countedIn !== undefined) {
          counted.set(countedIn, (counted.get(countedIn) ?? 0) - batch.length);
          depth -= batch.length;
        }
        return;
      }
      // The file may now end in a partial line: never append behind it.
      await closeActive();
      return;
    }
    flushingSince = undefined;
    for (const entry of batch) entry.done();
    if (active !== undefined && active.bytes >= maxSegmentBytes) await closeActive();
  };

  /** Throws the write failure until a probe write, at most one per interval, succeeds. */
  const probeAfterFailure = (failure: { error: unknown; at: number }): Promise<void> => {
    if (performance.now() - failure.at < probeIntervalMs) return Promise.reject(failure.error);
    probing ??= ensureFolder()
      .then(() => probeWrite(dir))
      .then(
        () => {
          // An append that failed while the probe ran is newer news than the probe: it stands.
          if (writeFailure === failure) writeFailure = undefined;
        },
        (error: unknown) => {
          if (writeFailure === failure) writeFailure = { error, at: performance.now() };
          throw error;
        },
      )
      .finally(() => {
        probing = undefined;
      });
    return probing;
  };

  const drainOnce = async (
    handler: (job: EncodedWebhookJob) => Promise<void>,
    signal: AbortSignal | undefined,
  ): Promise<number> => {
    // The closed segments first. The one appended to is closed (so the drain sees a fixed set of
    // files, and new appends open a new one) only once every older one is drained: a drain that
    // keeps failing, every second of a long Redis outage, must not leave a file per pass.
    const closed = await exclusive(async () => active?.seq ?? nextSeq);
    const older = await drainBelow(closed, handler, signal);
    if (signal?.aborted) return older.handled;
    const below = await exclusive(async () => {
      await closeActive();
      return nextSeq;
    });
    const newer = await drainBelow(below, handler, signal);
    const unreadable = older.unreadable ?? newer.unreadable;
    if (unreadable) throw unreadable.error;
    return older.handled + newer.handled;
  };

  /** Drains the segments numbered below `below`, oldest first; see drain(). */
  const drainBelow = async (
    below: number,
    handler: (job: EncodedWebhookJob) => Promise<void>,
    signal: AbortSignal | undefined,
  ): Promise<{ handled: number; unreadable: { error: unknown } | undefined }> => {
    let handled = 0;
    let unreadable: { error: unknown } | undefined;
    // A folder removed by hand holds nothing to drain: its counted lines are let go below, instead
    // of a drain that fails on it every pass with depth never reaching 0.
    const listed = await listSegments(dir).catch(ifGone([]));
    const segments = listed.filter((segment) => segment.seq < below);
    // Deleted, but the folder's sync after it failed: no longer listed, so only that is retried.
    const names = new Set(listed.map((segment) => segment.name));
    for (const name of [...drainedNotDeleted]) if (!names.has(name)) await removeDrained(name);
    // Counted lines of a segment that is not there (removed by hand, say) will never be drained.
    const present = new Set(segments.map((segment) => segment.seq));
    for (const [seq, lines] of counted) {
      if (seq >= below || present.has(seq)) continue;
      depth -= lines - (progress.get(segmentName(seq)) ?? 0);
      counted.delete(seq);
      estimated.delete(seq);
      progress.delete(segmentName(seq));
    }
    for (const segment of segments) {
      if (signal?.aborted) break;
      // Handed over already; only its delete failed.
      if (drainedNotDeleted.has(segment.name)) {
        await removeDrained(segment.name);
        continue;
      }
      const path = segmentPath(dir, segment.name);
      let text: string;
      try {
        text = await readSegment(path);
      } catch (error) {
        // One segment that cannot be read (an I/O error) must not hold back every later one's
        // acknowledged events: it stays for the next pass, the others drain (the open one too),
        // and the pass still fails with its error (drainOnce), so the drainer says so.
        unreadable ??= { error };
        continue;
      }
      const { lines, torn } = splitLines(text);
      // What the appends counted may be on disk; what is there is what this drain hands over.
      depth += lines.length - (counted.get(segment.seq) ?? 0);
      counted.set(segment.seq, lines.length);
      estimated.delete(segment.seq);
      let done = progress.get(segment.name) ?? 0;
      for (const line of lines.slice(done)) {
        // The segment stays, with its progress, for the next drain (or the next start's).
        if (signal?.aborted) return { handled, unreadable };
        const job = decodeLine(line);
        if (job) await handler(job);
        else options.onCorruptLine?.(segment.name);
        done += 1;
        progress.set(segment.name, done);
        depth -= 1;
        handled += 1;
      }
      if (torn > 0) options.onCorruptLine?.(segment.name);
      progress.delete(segment.name);
      counted.delete(segment.seq);
      await removeDrained(segment.name);
    }
    return { handled, unreadable };
  };

  /**
   * Deletes a segment whose every event was handed over. If that fails (the folder turned
   * read-only, say), it is remembered, never read again, and the delete is retried by every later
   * drain: left alone, the next start would replay it, and queue its events again once their
   * dedupe marks have expired.
   */
  const removeDrained = async (name: string) => {
    try {
      await unlink(segmentPath(dir, name)).catch(ifGone(undefined));
      await syncDirectory(dir);
      drainedNotDeleted.delete(name);
    } catch (error) {
      if (!drainedNotDeleted.has(name)) options.onDeleteFailed?.(name, error);
      drainedNotDeleted.add(name);
    }
  };

  // Others' checks must never find this receiver's socket gone for long: its file is made again
  // if removed (by a cleaner of old files, say), on a timer of its own that no long drain delays.
  // Started once the spool is open: a spool that failed to open holds nothing to keep.
  /** Once closed, appends are refused (SpoolClosedError). */
  let closed = false;
  const keeper = setInterval(() => void owner.ensure().catch(() => undefined), OWNER_CHECK_MS);
  keeper.unref();
  // Never rejects: a segment that cannot be read stays counted as one event.
  const countedAtOpen = countEstimated(existing);
  return {
    dir,
    counted: countedAtOpen,
    append(job) {
      if (closed) return Promise.reject(new SpoolClosedError());
      const line = `${job.json}\n`;
      const bytes = Buffer.byteLength(line);
      if (pendingBytes > 0 && pendingBytes + bytes > maxPendingBytes)
        return Promise.reject(new SpoolFullError(pendingBytes));
      pendingBytes += bytes;
      return new Promise<void>((resolve, reject) => {
        const done = () => {
          pendingBytes -= bytes;
          resolve();
        };
        const fail = (error: unknown) => {
          pendingBytes -= bytes;
          reject(error);
        };
        pending.push({ line, at: performance.now(), done, fail });
        if (!flushQueued) {
          flushQueued = true;
          void exclusive(flush);
        }
      });
    },
    depth: () => depth,
    foreignEntries: () => foreign,
    hasWork: () => depth > 0 || drainedNotDeleted.size > 0,
    drain(handler, signal) {
      // One drain at a time: a second caller waits for the running one instead of replaying it.
      draining ??= drainOnce(handler, signal).finally(() => {
        draining = undefined;
      });
      return draining;
    },
    async checkWritable() {
      if (writeFailure !== undefined) await probeAfterFailure(writeFailure);
      // The oldest append not yet settled: the flush's, else the first waiting for the next one.
      const oldest = flushingSince ?? pending[0]?.at;
      const waitedMs = oldest === undefined ? 0 : Math.round(performance.now() - oldest);
      if (waitedMs > stalledAfterMs)
        throw Object.assign(new Error(`spool writes stalled: an append has waited ${waitedMs} ms`), {
          code: 'ESTALLED',
        });
      // Removed by hand or by a cleaner while nothing was written (Redis healthy, nothing spooled):
      // made again here, or nothing would until a write failed, and /readyz would say unwritable
      // until then. In turn with the appends, as a write's own re-make after a failure is.
      const found = await stat(dir).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      });
      if (found === undefined) await exclusive(ensureFolder);
      if (!(await stat(dir)).isDirectory())
        throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
      await access(dir, constants.W_OK | constants.X_OK);
    },
    async adoptOrphans() {
      // In turn with the appends (the segments taken over are numbered after every one here), but
      // only the renames: their lines are counted after, since reading a long outage's segments
      // (seconds for a gigabyte) in turn would hold every append behind it past its deadline.
      const { taken, failure } = await exclusive(async () => {
        await owner.ensure();
        const first = nextSeq;
        const [outcome] = await Promise.allSettled([
          adoptOrphanedSegments(root, dir, instance, onForeign, {
            firstSeq: first,
            deadChecks,
            quietMs: options.adoptQuietMs ?? ADOPT_QUIET_MS,
            onTakeOverFailed,
          }),
        ]);
        // What is in the folder now, also after a take-over that failed part-way: every segment
        // moved in is counted, and the next segment this spool opens comes after them.
        const inFolder = (await listSegments(dir)).filter((segment) => segment.seq >= first);
        nextSeq = Math.max(nextSeq, (inFolder.at(-1)?.seq ?? 0) + 1);
        const moved = inFolder.filter((segment) => !counted.has(segment.seq));
        for (const segment of moved) {
          counted.set(segment.seq, 1);
          estimated.add(segment.seq);
          depth += 1;
        }
        return { taken: moved, failure: outcome };
      });
      const adopted = await countEstimated(taken);
      if (failure.status === 'rejected') throw failure.reason;
      return adopted;
    },
    async close() {
      closed = true;
      clearInterval(keeper);
      await draining?.catch(() => undefined);
      await exclusive(closeActive);
      // A last try, so the next start does not replay them.
      for (const name of drainedNotDeleted) await removeDrained(name);
      // An emptied folder goes; one that holds events stays, for the next receiver to start.
      const left = await listSegments(dir).then(
        (segments) => segments.length,
        () => 1,
      );
      if (left === 0) await rmdir(dir).catch(() => undefined);
      // Said before the socket's file goes, so the next start takes the events at once rather
      // than leave them to running receivers' checks; not said, they wait for those.
      else await markStopped(dir).catch(() => undefined);
      await owner.release();
    },
  };
}

/**
 * Spooled events are raw payloads: readable by the receiver's own user only (0700 / 0600), also
 * when the folder existed before with a wider mode. A folder of another user's that the receiver
 * may write in (a Kubernetes emptyDir is root's and 0777) is not the receiver's to change: there
 * the instance folders (0700) and the files (0600) keep the payloads private. Nor is a folder
 * shared with anything else: one with the sticky bit (SPOOL_DIR=/tmp, for a receiver run as root,
 * lost /tmp's 1777 and every other user's use of it), or one holding more than the spool's own
 * entries (SPOOL_DIR=. made the working folder 0700).
 */
async function makePrivateIfOwned(dir: string): Promise<void> {
  const folder = await stat(dir);
  if (!folder.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
  if (folder.uid !== process.getuid?.() || (folder.mode & 0o077) === 0 || (folder.mode & 0o1000) !== 0)
    return;
  const others = (await readdir(dir)).filter((name) => !isSpoolEntry(name));
  if (others.length === 0) await chmod(dir, 0o700);
}

/** Writes the folder's stopped mark (instance-folders.ts), durably. */
async function markStopped(dir: string): Promise<void> {
  const handle = await open(join(dir, stoppedMarkName), 'w', 0o600);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  await syncDirectory(dir);
}

/** A spool line back into a job; undefined for a line that is not a job's JSON (a damaged file). */
function decodeLine(line: string): EncodedWebhookJob | undefined {
  try {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { dedupeKey } = parsed as { dedupeKey?: unknown };
    return typeof dedupeKey === 'string' ? { dedupeKey, json: line } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The events a segment left by another start counts until a drain reads it: its complete lines,
 * and at least one. A receiver killed between creating a segment and the end of its first append
 * leaves an empty file or one torn line; counted as nothing, it was never drained nor deleted,
 * and its folder went from receiver to receiver at every stop and start. The drain that reads it
 * sets the real count, reports a torn line, and deletes it.
 */
function linesToDrain(content: string): number {
  return Math.max(1, splitLines(content).lines.length);
}
