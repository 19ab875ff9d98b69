import { constants } from 'node:fs';
import { mkdir, open, readFile, readdir, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

/**
 * Spool segment files are named by a sequence number, zero-padded so that name order is append
 * order (also across restarts: a new process continues after the highest number it finds).
 */
const segmentPattern = /^segment-(\d{12})\.ndjson$/;

export const isSegmentName = (name: string) => segmentPattern.test(name);
export const segmentName = (seq: number) => `segment-${String(seq).padStart(12, '0')}.ndjson`;

export interface SegmentFile {
  readonly name: string;
  readonly seq: number;
}

export async function listSegments(dir: string): Promise<SegmentFile[]> {
  const names = await readdir(dir);
  return names
    .map((name) => ({ name, match: segmentPattern.exec(name) }))
    .filter((entry) => entry.match !== null)
    .map((entry) => ({ name: entry.name, seq: Number(entry.match?.[1]) }))
    .sort((a, b) => a.seq - b.seq);
}

/**
 * A segment's text. Never through a symlink (O_NOFOLLOW, where the platform has it): a segment is
 * a file a receiver wrote, and a link in its place would have this process read another file.
 */
export const readSegment = (path: string): Promise<string> =>
  readFile(path, { encoding: 'utf8', flag: constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) });

/** Makes a created or removed directory entry durable (fsync of the directory itself). */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Makes `path` (and any missing folder above it), private, and syncs each new folder's entry into
 * its parent: a folder whose entry is not on disk may vanish in a power loss with every fsynced
 * segment in it.
 */
export async function makeFolder(path: string): Promise<void> {
  const target = resolve(path);
  const first = await mkdir(target, { recursive: true, mode: 0o700 });
  if (first === undefined) return;
  for (let made = target; ; made = dirname(made)) {
    await syncDirectory(dirname(made));
    if (made === first || dirname(made) === made) break;
  }
}

export const segmentPath = (dir: string, name: string) => join(dir, name);

/** Not a segment name, so a drain never reads it, also if a crash left it behind. */
export const probeName = '.write-probe';

/**
 * Creates, writes, fsyncs and removes a small file in `dir`: what an append does to the disk, so
 * its success says appends work again after one failed.
 */
export async function probeWrite(dir: string): Promise<void> {
  const path = join(dir, probeName);
  const handle = await open(path, 'w', 0o600);
  try {
    await handle.writeFile('probe\n');
    await handle.sync();
  } finally {
    await handle.close();
  }
  await unlink(path);
  await syncDirectory(dir);
}

/** The complete lines of a segment; a torn last line (a crash during an append) is dropped. */
export function splitLines(content: string): { lines: string[]; torn: number } {
  const parts = content.split('\n');
  const tail = parts.pop() ?? '';
  const lines = parts.filter((line) => line !== '');
  return { lines, torn: tail === '' ? 0 : 1 };
}

/** A handler of a failed file operation: `fallback` if the file was gone, else the error again. */
export function ifGone<T>(fallback: T): (error: NodeJS.ErrnoException) => T {
  return (error) => {
    if (error.code === 'ENOENT') return fallback;
    throw error;
  };
}
