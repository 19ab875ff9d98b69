/** A line longer than the reader's bound: skipped, never held (its first characters and length). */
export interface LongLine {
  readonly tooLong: true;
  /** Its length in characters, as read. */
  readonly length: number;
}

/**
 * The lines of `input` (text chunks) as readline gives them with `crlfDelay: Infinity` (split at
 * "\n", a "\r" before it dropped), except that a line longer than `maxChars` comes as a LongLine
 * and is read past without being kept: a file that is one line (a JSON array, say) would otherwise
 * be held whole in memory, and past V8's longest string fail with a stack trace.
 */
export async function* boundedLines(
  input: AsyncIterable<string | Buffer>,
  maxChars: number,
): AsyncGenerator<string | LongLine> {
  let pending = '';
  /** The length of the long line being read past, or undefined while none is. */
  let skipping: number | undefined;
  const ended = (line: string): string | LongLine => {
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    return text.length > maxChars ? { tooLong: true, length: text.length } : text;
  };
  for await (const chunk of input) {
    const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    let start = 0;
    if (skipping !== undefined) {
      const end = text.indexOf('\n');
      if (end === -1) {
        skipping += text.length;
        continue;
      }
      yield { tooLong: true, length: skipping + end };
      skipping = undefined;
      start = end + 1;
    }
    pending += text.slice(start);
    let from = 0;
    for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n', from)) {
      yield ended(pending.slice(from, end));
      from = end + 1;
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
