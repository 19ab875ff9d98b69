/**
 * Loads current community memberships so a new deployment knows who is in which community before
 * any join event arrives. Idempotent: re-importing the same file changes nothing.
 */
import { createReadStream } from 'node:fs';
import { extname } from 'node:path';
import { UsageError } from '../shared/errors/usage-error.ts';
import { boundedLines, type LongLine } from './lib/bounded-lines.ts';
import { commandLinePath, onStopSignal, statOperand, parseCli, progressBar, runCli } from './lib/cli.ts';
import { openScriptStorage, storageVariables } from './lib/open-script-storage.ts';
import {
  csvColumns,
  otherKindOfLine,
  parseCsvLine,
  parseNdjsonLine,
  type LineResult,
  type MemberRow,
} from './lib/members/parse-member-line.ts';
import { parseIsoTime } from '../tray-service/admin/parse-iso-time.ts';

const usage = `
Usage: npm run import-members -- <file> [options]

Imports community memberships from a CSV file (header: communityId,userId[,joinedAt]) or an
NDJSON file (one {"communityId","userId"[,"joinedAt"]} object per line). Each listed user becomes
an active member; joinedAt (ISO 8601 or epoch ms) sets from when posts reach them, else --as-of.
A membership the tray changed after --as-of (a later join or leave) is left as it is, and an
active member keeps the join time the tray already has: re-importing a file changes nothing.

Options:
  --format csv|ndjson   file format (default: from the extension .csv/.ndjson/.jsonl)
  --as-of <time>        when the list was taken, ISO 8601 (default: the file's modification
                        time, so a re-run of the same file reads it as of the same moment;
                        after editing the file, give the time the first run printed)
  --batch-size <n>      documents per database round trip (default: 1000)
  --max-errors <n>      invalid lines to print before only counting them (default: 20)
  -h, --help            show this help

Environment: ${storageVariables}.
Exit code: 0 done, 1 failed, 2 bad arguments or configuration, 3 done but some lines were invalid.
`;

function positiveInt(value: string | undefined, name: string, fallback: number, max?: number): number {
  if (value === undefined) return fallback;
  const tooLarge = max !== undefined && Number(value) > max;
  if (!/^\d+$/.test(value) || Number(value) < 1 || tooLarge)
    throw new UsageError(
      max === undefined
        ? `--${name}: expected a whole number >= 1`
        : `--${name}: expected a whole number from 1 to ${max}`,
    );
  return Number(value);
}

/** One batch is one transaction (PostgreSQL) and is held in memory: a file's worth would be. */
const MAX_BATCH_SIZE = 10_000;

/** How far ahead of this machine's clock a list's time may be: another machine's clock. */
const CLOCK_ALLOWANCE_MS = 5 * 60_000;

/**
 * A join after the list was taken (less another machine's clock) is a mistake in the file: epoch
 * microseconds, or local times read as UTC from a zone ahead of it. Stored, it reopened a
 * membership left after the list.
 */
function joinedByAsOf(row: MemberRow, asOf: number): LineResult {
  if (row.joinedAt === undefined || row.joinedAt <= asOf + CLOCK_ALLOWANCE_MS) return { ok: true, row };
  return {
    ok: false,
    reason: `joinedAt: after the list was taken (${new Date(asOf).toISOString()}); a time without an offset is UTC, an epoch number milliseconds`,
  };
}

async function main(): Promise<number> {
  const { values, positionals } = parseCli(
    {
      args: process.argv.slice(2),
      options: {
        format: { type: 'string' },
        'as-of': { type: 'string' },
        'batch-size': { type: 'string' },
        'max-errors': { type: 'string' },
      },
      allowPositionals: true,
    },
    usage,
  );
  const [given, ...extra] = positionals;
  if (!given || extra.length > 0) throw new UsageError(`expected exactly one file\n${usage}`);
  const file = commandLinePath(given);
  const format = values.format ?? { '.csv': 'csv', '.ndjson': 'ndjson', '.jsonl': 'ndjson' }[extname(file)];
  if (format !== 'csv' && format !== 'ndjson') {
    throw new UsageError(
      values.format === undefined
        ? '--format: expected csv or ndjson (cannot tell from the file name)'
        : `--format: expected csv or ndjson, not ${values.format}`,
    );
  }
  // As the admin API and export-events read times: a real calendar day, and UTC without an offset.
  const givenAsOf = values['as-of'] === undefined ? undefined : parseIsoTime(values['as-of'])?.getTime();
  if (values['as-of'] !== undefined && givenAsOf === undefined)
    throw new UsageError('--as-of: expected an ISO 8601 time');
  const batchSize = positiveInt(values['batch-size'], 'batch-size', 1000, MAX_BATCH_SIZE);
  const maxErrors = positiveInt(values['max-errors'], 'max-errors', 20);
  const stats = statOperand(file);
  if (!stats.isFile()) throw new UsageError(`cannot read ${file}: not a file`);
  const size = stats.size;
  // A file that is no member list is refused before the storage is opened (and its schema updated).
  if (format === 'csv') {
    try {
      csvColumns(withoutBom((await firstLine(file))?.line ?? ''));
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`${file}: ${(error as Error).message}`);
    }
  } else {
    const first = await firstLine(file);
    const otherKind = otherKindOfLine(withoutBom(first?.line ?? ''));
    if (otherKind !== undefined) throw new UsageError(`${file}: line ${first?.number ?? 1}: ${otherKind}`);
  }
  // No list is taken after its file was written. "Now" would move with every run: a re-run that
  // finishes an interrupted import would then read the list as newer than the leaves stored in
  // between, and bring those members back.
  const asOf = givenAsOf ?? Math.floor(stats.mtimeMs);
  const asOfSource = givenAsOf === undefined ? "the file's time" : '--as-of';
  // A list from the future would hold its new members back until then and override every leave
  // before then, and no later import could undo it: an import never takes anything back.
  if (asOf > Date.now() + CLOCK_ALLOWANCE_MS) {
    const shown = new Date(asOf).toISOString();
    throw new UsageError(
      givenAsOf === undefined
        ? `${file}: the file's time (${shown}) is in the future; give the time the list was taken with --as-of`
        : `--as-of: ${shown} is in the future; give the time the list was taken`,
    );
  }
  // Before anything changes: the time to give --as-of on a run after the file was edited.
  process.stdout.write(`importing ${file} as of ${new Date(asOf).toISOString()} (${asOfSource})\n`);

  const storage = await openScriptStorage('import-members');
  const totals = {
    inserted: 0,
    updated: 0,
    unchanged: 0,
    invalid: 0,
    lines: 0,
  };
  const started = Date.now();
  const problems: string[] = [];
  const bar = progressBar('importing', 'bytes');
  /** Lines read by the batches stored so far: what a stopped run has imported. */
  let imported = 0;
  // On PostgreSQL batches are transactions: one cut short by a signal is rolled back, those before
  // it stay (on MongoDB it may be partly in). A re-run with the same time finishes the import
  // either way, as each line's change is idempotent (docs/operations.md#operator-scripts).
  const offStopSignal = onStopSignal(() => {
    bar.stop();
    process.stderr.write(
      `stopped with ${imported} lines imported: run the same import again with --as-of ${new Date(asOf).toISOString()} to finish (lines already in count as unchanged)\n`,
    );
  });
  bar.start(size, 0);
  try {
    const lines = boundedLines(createReadStream(file, 'utf8'), MAX_LINE_CHARS);
    let columns: ReturnType<typeof csvColumns> | undefined;
    let batch: MemberRow[] = [];
    let lineNo = 0;
    let bytes = 0;
    const flush = async () => {
      const read = totals.lines;
      const counts = await storage.members.importBatch(
        // A line without joinedAt: a member since the list was taken.
        batch.map((row) => ({
          communityId: row.communityId,
          userId: row.userId,
          since: row.joinedAt ?? asOf,
        })),
        asOf,
      );
      totals.inserted += counts.inserted;
      totals.updated += counts.updated;
      totals.unchanged += counts.unchanged;
      imported = read;
      batch = [];
      bar.update(bytes);
    };
    for await (const read of lines) {
      lineNo += 1;
      if (typeof read !== 'string') {
        // Counted as what it is to the progress, roughly (its characters, one byte each).
        bytes += read.length + 1;
        totals.lines += 1;
        totals.invalid += 1;
        if (totals.invalid <= maxErrors) problems.push(`${file}:${lineNo}: ${longLineProblem(read)}`);
        continue;
      }
      bytes += Buffer.byteLength(read) + 1;
      const line = lineNo === 1 ? withoutBom(read) : read;
      if (line.trim() === '') continue;
      if (format === 'csv' && !columns) {
        columns = csvColumns(line);
        continue;
      }
      totals.lines += 1;
      const parsed: LineResult = columns ? parseCsvLine(line, columns) : parseNdjsonLine(line);
      const result = parsed.ok ? joinedByAsOf(parsed.row, asOf) : parsed;
      if (!result.ok) {
        totals.invalid += 1;
        // Printed after the bar, which owns the terminal line while it runs.
        if (totals.invalid <= maxErrors) problems.push(`${file}:${lineNo}: ${result.reason}`);
        continue;
      }
      batch.push(result.row);
      if (batch.length >= batchSize) await flush();
    }
    if (batch.length > 0) await flush();
    bar.update(size);
  } finally {
    offStopSignal();
    bar.stop();
    await storage.close();
  }
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  if (totals.invalid > maxErrors)
    process.stderr.write(`... ${totals.invalid - maxErrors} more invalid lines\n`);
  process.stdout.write(
    `imported ${file} as of ${new Date(asOf).toISOString()} (${asOfSource}): ${totals.lines} lines, ` +
      `${totals.inserted} inserted, ${totals.updated} updated, ${totals.unchanged} unchanged, ` +
      `${totals.invalid} invalid (${((Date.now() - started) / 1000).toFixed(1)} s)\n`,
  );
  if (totals.invalid > 0 && givenAsOf === undefined) {
    process.stderr.write(
      `fix the invalid lines and run again with --as-of ${new Date(asOf).toISOString()}: ` +
        "the edited file's newer time would bring back members who left since\n",
    );
  }
  return totals.invalid > 0 ? 3 : 0;
}

/** Windows editors and spreadsheet exports start a UTF-8 file with a byte-order mark. */
const withoutBom = (line: string) => line.replace(/^\uFEFF/, '');

/**
 * The longest line read (characters): a member's line is a few hundred at most, a CSV's with other
 * columns a few thousand. A longer one is an invalid line, read past without being kept.
 */
const MAX_LINE_CHARS = 65_536;

const longLineProblem = (line: LongLine) =>
  `a line of ${line.length} characters (at most ${MAX_LINE_CHARS}): one member per line, not a JSON array`;

/** The file's first line that is not blank and its number, or undefined for a file of blank lines. */
async function firstLine(file: string): Promise<{ line: string; number: number } | undefined> {
  const input = createReadStream(file, 'utf8');
  try {
    let number = 0;
    for await (const line of boundedLines(input, MAX_LINE_CHARS)) {
      number += 1;
      if (typeof line !== 'string') throw new UsageError(`${file}: line ${number}: ${longLineProblem(line)}`);
      if (line.trim() !== '') return { line, number };
    }
    return undefined;
  } finally {
    input.destroy();
  }
}

runCli(main);
