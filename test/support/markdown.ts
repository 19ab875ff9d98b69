/** A line of a markdown file with its 1-based number. */
export interface NumberedLine {
  line: string;
  number: number;
}

/** Lines of a markdown file outside fenced code blocks, with their line numbers. */
export function proseLines(text: string): NumberedLine[] {
  const lines: NumberedLine[] = [];
  let fenced = false;
  text.split('\n').forEach((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced) lines.push({ line, number: index + 1 });
  });
  return lines;
}

/** A row of a markdown table: its cells, trimmed, and its line number. */
export interface TableRow {
  cells: string[];
  number: number;
}

/**
 * The body rows of every table among `lines` (header and delimiter rows left out). Cells are split
 * on `|`, so a cell holding a literal `|` is not supported (none of the tables read this way has one).
 */
export function tableRows(lines: readonly NumberedLine[]): TableRow[] {
  const rows: TableRow[] = [];
  let inTable = false;
  lines.forEach(({ line, number }, index) => {
    if (!line.trimStart().startsWith('|')) {
      inTable = false;
      return;
    }
    const cells = line
      .trim()
      .replace(/^\|/, '')
      .replace(/\|$/, '')
      .split('|')
      .map((cell) => cell.trim());
    const next = lines[index + 1]?.line ?? '';
    if (!inTable && /^\s*\|[\s:|-]+\|\s*$/.test(next)) {
      inTable = true; // the header row; the delimiter row follows
      return;
    }
    if (cells.every((cell) => /^:?-+:?$/.test(cell))) return;
    if (inTable) rows.push({ cells, number });
  });
  return rows;
}

/** The text inside each pair of backticks of `text`, in order. */
export const backticked = (text: string): string[] =>
  [...text.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? '');

/** The lines under the heading `title` (any level), up to the next heading of the same or a higher level. */
export function section(lines: readonly NumberedLine[], title: string): NumberedLine[] {
  const start = lines.findIndex(({ line }) =>
    new RegExp(`^#{1,6}\\s+${escapeRegExp(title)}\\s*$`).test(line),
  );
  if (start < 0) return [];
  const level = /^#+/.exec(lines[start]?.line ?? '')?.[0].length ?? 1;
  const end = lines.findIndex(
    ({ line }, index) => index > start && (/^#+/.exec(line)?.[0].length ?? Infinity) <= level,
  );
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
