/** A line longer than the reader's bound: skipped, never held (its first characters and length). */
export interface LongLine {
  readonly tooLong: true;
  /** Its length in characters, as read. */
  readonly length: number;
}

const BREAK = /[\r\n]/g;

/** Where the first line break at or after `from` is, or -1. */
function breakAt(text: string, from: number): number {
  BREAK.lastIndex = from;
  return BREAK.exec(text)?.index ?? -1;
}

/**
 * Where the text after the break at `end` starts, and whether the break was a "\r" ending `text`
 * (a "\n" starting the next chunk then belongs to it).
 */
function after(text: string, end: number): { next: number; afterCr: boolean } {
  if (text[end] === '\n') return { next: end + 1, afterCr: false };
  if (end + 1 === text.length) return { next: end + 1, afterCr: true };
  return { next: text[end + 1] === '\n' ? end + 2 : end + 1, afterCr: false };
}

/**
 * The lines of `input` (text chunks) as readline gives them with `crlfDelay: Infinity` (a line ends
 * at "\r\n", "\n" or "\r": a spreadsheet's "CSV (Macintosh)" has only the last), except that a
 * line longer than `maxChars` comes as a LongLine and is read past without being kept: a file that
 * is one line (a JSON array, say) would otherwise be held whole in memory, and past V8's longest
 * string fail with a stack trace.
 */
export async function* boundedLines(
  input: AsyncIterable<string | Buffer>,
  maxChars: number,
): AsyncGenerator<string | LongLine> {
  let pending = '';
  /** The length of the long line being read past, or undefined while none is. */
  let skipping: number | undefined;
  let afterCr = false;
  const ended = (line: string): string | LongLine =>
    line.length > maxChars ? { tooLong: true, length: line.length } : line;
  for await (const chunk of input) {
    let text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    if (afterCr && text.startsWith('\n')) text = text.slice(1);
    afterCr = false;
    let start = 0;
    if (skipping !== undefined) {
      const end = breakAt(text, 0);
      if (end === -1) {
        skipping += text.length;
        continue;
      }
      yield { tooLong: true, length: skipping + end };
      skipping = undefined;
      ({ next: start, afterCr } = after(text, end));
    }
    pending += text.slice(start);
    let from = 0;
    for (let end = breakAt(pending, from); end !== -1; end = breakAt(pending, from)) {
      yield ended(pending.slice(from, end));
      ({ next: from, afterCr } = after(pending, end));
    }
    pending = pending.slice(from);
    if (pending.length > maxChars) {
      skipping = pending.length;
      pending = '';
    }
  }
  if (skipping !== undefined) yield { tooLong: true, length: skipping };
  else if (pending !== '') yield ended(pending);
}
