import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** Bytes read at a time while looking for a line break from the end of a file. */
const CHUNK_BYTES = 1 << 20;

/** The position of the last `\n` in the file before `before`, or -1; read backwards a chunk at a time. */
function newlineBefore(fd: number, before: number): number {
  const chunk = Buffer.alloc(Math.min(CHUNK_BYTES, before));
  for (let end = before; end > 0;) {
    const start = Math.max(0, end - CHUNK_BYTES);
    const read = readSync(fd, chunk, 0, end - start, start);
    const at = chunk.subarray(0, read).lastIndexOf(0x0a);
    if (at >= 0) return start + at;
    end = start;
  }
  return -1;
}

/**
 * Where the complete lines of a file end (just after its last `\n`; 0 when it has none) and the
 * last of them, without its `\n`. What follows `end` is a line cut short as it was written. Reads
 * only the file's tail, so a file of gigabytes costs what its last line does.
 */
export function lastCompleteLine(path: string): { end: number; line?: string } {
  const fd = openSync(path, 'r');
  try {
    const last = newlineBefore(fd, fstatSync(fd).size);
    if (last < 0) return { end: 0 };
    const start = newlineBefore(fd, last) + 1;
    const line = Buffer.alloc(last - start);
    readSync(fd, line, 0, line.length, start);
    return { end: last + 1, line: line.toString('utf8') };
  } finally {
    closeSync(fd);
  }
}
