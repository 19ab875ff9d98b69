import { closeSync, openSync, readSync, statSync } from 'node:fs';

/** Where a server's log stood when it was launched: what it wrote since is this start's. */
export interface LogMark {
  readonly path: string;
  readonly offset: number;
}

export function markLog(path: string): LogMark {
  let offset = 0;
  try {
    offset = statSync(path).size;
  } catch {
    // not written yet
  }
  return { path, offset };
}

/**
 * The line of a server's log that says why this start failed: PostgreSQL's first FATAL or PANIC,
 * else Redis's last warning (`#`), else the last line, without the time and pid before it. The log
 * is appended by every run, so only what came after `mark` counts.
 */
export function logFailureLine(mark: LogMark): string | undefined {
  let text: string;
  try {
    const fd = openSync(mark.path, 'r');
    try {
      const size = statSync(mark.path).size;
      const bytes = Buffer.alloc(Math.max(0, size - mark.offset));
      readSync(fd, bytes, 0, bytes.length, mark.offset);
      text = bytes.toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const lines = text
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter((line) => line !== '');
  const fatal = lines.find((line) => /\b(?:FATAL|PANIC):/.test(line));
  if (fatal) return fatal.replace(/^.*?\b(FATAL|PANIC):/, '$1:');
  const warning = lines.findLast((line) => /^\d+:[A-Z] .*? # /.test(line));
  if (warning) return warning.replace(/^.*? # /, '');
  return lines.at(-1);
}
