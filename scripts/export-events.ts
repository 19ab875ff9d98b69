/**
 * Operator tool: writes stored events to an NDJSON file, the same lines as
 * GET /admin/events/export, straight from the tray's storage (no running tray service needed).
 */
import {
  closeSync,
  createWriteStream,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { SingleBar } from 'cli-progress';
import type { StoredEvent } from '../tray-service/domain/stored-event.ts';
import { toEventView } from '../tray-service/admin/event-view.ts';
import { ndjsonStream } from '../tray-service/admin/ndjson-stream.ts';
import type { EventsFilter } from '../tray-service/storage/port.ts';
import type { PageKey } from '../tray-service/domain/page-cursor.ts';
import { createEventsQuery } from '../tray-service/use-cases/events-query.ts';
import { lastCompleteLine } from './lib/last-complete-line.ts';
import { takePidLock } from './lib/pid-lock.ts';
import { UsageError } from '../shared/errors/usage-error.ts';
import { commandLinePath, onStopSignal, parseCli, progressBar, runCli } from './lib/cli.ts';
import { openScriptStorage, scriptStorageName, storageVariables } from './lib/open-script-storage.ts';
import { parseEventsFilter } from '../tray-service/admin/parse-events-filter.ts';
import { AppError } from '../shared/errors/app-error.ts';

const usage = `
Usage: npm run export-events -- --out <file> [filters]

Writes every stored event matching the filters to <file>, one JSON object per line, newest first
(the shape of GET /admin/events/export). The file appears only when the export is complete;
until then the events go to <file>.partial, which an interrupted run leaves for --resume.

Filters (those of GET /admin/events, with its rules and messages):
  --event <name>          e.g. post.didCreate
  --webhook <name>        the webhook that delivered it
  --status <status>       applied, stored, unknown, invalid or foreign
  --userId <id>           the acting user: the author of a post, comment or reaction; the one
                          user a join, leave, profile change or ban names
  --communityId <id>      the community it happened in
  --moderation <outcome>  none (no decision), any (at least one), flag or ban-request (the most
                          severe decision)
  --since <time>          received at or after (ISO 8601)
  --until <time>          received before (ISO 8601)

Options:
  --out <file>            output file (required)
  --resume                go on with <file>.partial, left by an interrupted run with the same
                          filters, after its last complete line (without it, an old
                          <file>.partial is removed and the export starts again)
  --force                 replace <file> if it exists (without it, an existing <file> is refused)
  --count-up-to <n>       count the matches for the progress bar up to n (default 1000000);
                          past it the progress shows how many so far, without a total
  -h, --help              show this help

Environment: ${storageVariables}. The export only reads: a database role that may only read, or
a replica, will do; a database an older version of the tray left is refused (run the export from
the version the tray runs).
Exit code: 0 done, 1 failed, 2 bad arguments or configuration.
`;

/**
 * The options' filter, by the admin API's parser: the export's refusal sends operators here, so
 * the same filters select the same events (a day that does not exist is refused, a time without
 * offset is UTC), and a bad one is named as the API names it.
 */
function filterOf(options: Record<string, string | undefined>): EventsFilter {
  try {
    return parseEventsFilter(options, 'option');
  } catch (error) {
    if (error instanceof AppError && error.kind === 'VALIDATION') throw new UsageError(`--${error.message}`);
    throw error;
  }
}

async function main(): Promise<number> {
  const { values, positionals } = parseCli(
    {
      args: process.argv.slice(2),
      options: {
        out: { type: 'string' },
        event: { type: 'string' },
        webhook: { type: 'string' },
        status: { type: 'string' },
        userId: { type: 'string' },
        communityId: { type: 'string' },
        moderation: { type: 'string' },
        since: { type: 'string' },
        until: { type: 'string' },
        resume: { type: 'boolean' },
        force: { type: 'boolean' },
        'count-up-to': { type: 'string' },
      },
      allowPositionals: true,
    },
    usage,
  );
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}\n${usage}`);
  const { out: given, resume, force, 'count-up-to': countUpTo, ...filters } = values;
  if (!given) throw new UsageError(`--out: the output file is required\n${usage}`);
  const out = commandLinePath(given);
  const countBound = countBoundOf(countUpTo);
  const filter = filterOf(filters);
  checkOutFolder(out, given.endsWith('/'));
  // Two exports to one name (another user's, another day's) replaced the first without a word.
  if (force !== true && existsSync(out))
    throw new UsageError(`--out: ${out} exists; name another file, or give --force to replace it`);
  const partial = `${out}.partial`;
  const source = scriptStorageName();
  // The filters alone let a resume in a shell pointed at another deployment append its events to
  // this one's: one file that reads as one export of one database.
  if (resume === true) checkSameSource(partial, source);
  const unlock = lockPartial(partial);
  try {
    return await exportTo(out, partial, filter, { resume: resume === true, countBound, source }, unlock);
  } finally {
    unlock();
  }
}

/**
 * Matches the progress bar's count reads at most. Bounded, as the admin API's count is: a count of
 * every match runs under the statement timeout (10 s by default), and on tens of millions of
 * stored events it was cancelled and the export failed before its first line.
 */
const COUNT_BOUND = 1_000_000;

function countBoundOf(option: string | undefined): number {
  if (option === undefined) return COUNT_BOUND;
  const bound = /^\d{1,9}$/.test(option) ? Number(option) : 0;
  if (bound < 1) throw new UsageError(`--count-up-to: expected a whole number from 1 to 999999999`);
  return bound;
}

/**
 * The folder --out names must exist: its files (the lock first) are made there. A folder at --out
 * itself is refused now: found only at the rename, the whole export ran first, and its partial
 * file, named after --out, was inside the folder the refusal told the operator to move away.
 */
function checkOutFolder(target: string, typedAsFolder: boolean): void {
  if (typedAsFolder || statSync(target, { throwIfNoEntry: false })?.isDirectory())
    throw new UsageError(
      `--out: ${target} is a folder; name the file to write (such as ${join(target, 'events.ndjson')})`,
    );
  const folder = dirname(target);
  let isFolder: boolean;
  try {
    isFolder = statSync(folder).isDirectory();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new UsageError(`--out: the folder ${folder} does not exist`);
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR')
      throw new UsageError(`--out: ${dirname(folder)} is not a folder`);
    throw error;
  }
  if (!isFolder) throw new UsageError(`--out: ${folder} is not a folder`);
}

/**
 * The export into `partial` (from scratch, or resumed after its last line), renamed `out` once whole.
 * Stopped part-way (a failure, or Ctrl-C or SIGTERM), it says how to go on; on a signal it frees
 * the partial file's lock (`unlock`) and ends the process at once, 130 or 143, as a shell expects:
 * the storage is not closed first, as its query in flight may wait for a lock for as long as
 * the statement timeout.
 */
async function exportTo(
  out: string,
  partial: string,
  filter: EventsFilter,
  options: { resume: boolean; countBound: number; source: string },
  unlock: () => void,
): Promise<number> {
  const { resume, countBound } = options;
  // Files are touched only once the storage is open: a run that cannot reach it (or is
  // misconfigured) must not remove the partial export of an earlier one.
  // Read-only: an analytics role may hold SELECT alone, or DATABASE_URL name a replica, and an
  // export never changes the schema the running service uses.
  const storage = await openScriptStorage('export-events', { readOnly: true });
  let after: ReturnType<typeof resumedAfter>;
  try {
    after = resume ? resumedAfter(partial, filter) : startAfresh(partial, filter, options.source);
  } catch (error) {
    await storage.close();
    throw error;
  }
  const started = Date.now();
  const events = createEventsQuery(storage.events);
  // Made once the matches are counted: without a total past the bound.
  let bar: SingleBar | undefined;
  let written = 0;
  const sayStopped = () =>
    process.stderr.write(
      `stopped after ${written} events${after ? ' more' : ''}; ${partial} keeps them: run the same command with --resume to go on\n`,
    );
  const offStopSignal = onStopSignal(() => {
    bar?.stop();
    sayStopped();
    unlock();
  });
  try {
    // One past the bound says "more" without counting the rest.
    const matches = await events.count(filter, after, countBound + 1);
    const untotalled = matches > countBound;
    const shown = progressBar('exporting', 'events', { untotalled });
    bar = shown;
    shown.start(untotalled ? 0 : matches, 0);
    const counter = new Transform({
      objectMode: true,
      transform(event: StoredEvent, _encoding, callback) {
        written += 1;
        if (written % 500 === 0) shown.update(written);
        callback(null, event);
      },
    });
    await pipeline(
      events.export(filter, Number.POSITIVE_INFINITY, after),
      counter,
      ndjsonStream((event: StoredEvent) => toEventView(event)),
      // Raw payloads: readable by the owner only, whatever the umask (startAfresh made the file).
      createWriteStream(partial, { flags: 'a', mode: 0o600 }),
    );
    shown.update(written);
    // On disk before it gets the final name: a power cut after the rename must not leave a
    // short file under the name that says the export is whole.
    syncFile(partial);
    renameInPlace(partial, out);
    syncFolder(dirname(out));
    rmSync(filterFileOf(partial), { force: true });
    rmSync(sourceFileOf(partial), { force: true });
  } catch (error) {
    bar?.stop();
    sayStopped();
    throw error;
  } finally {
    offStopSignal();
    bar?.stop();
    await storage.close();
  }
  process.stdout.write(
    `exported ${written} events${after ? ' more' : ''} to ${out} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
  return 0;
}

/**
 * The rename made durable, where the file system allows it: some (network, FUSE) refuse a folder's
 * fsync, and the export is whole and in place by now; failing here would say it is not.
 */
function syncFolder(path: string): void {
  try {
    syncFile(path);
  } catch {
    // Best effort, as above.
  }
}

function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * The whole export put at --out. A folder there refuses it (found only now: it may have been made
 * while the export ran): named, so the operator moves it and --resume, which finds nothing more to
 * write, puts the export in its place.
 */
function renameInPlace(partial: string, out: string): void {
  try {
    renameSync(partial, out);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EISDIR' || code === 'ENOTEMPTY' || code === 'EEXIST')
      throw new Error(`--out: ${out} is a folder; move it away first`, { cause: error });
    throw error;
  }
}

/**
 * Holds `partial` for this run: a second run on the same --out (a --resume while the first still
 * runs) would cut the file under it and interleave their lines. A lock left by a run that was
 * killed (its process gone) is taken over. Returns its release.
 */
function lockPartial(partial: string): () => void {
  return takePidLock(
    `${partial}.lock`,
    // Its command line names the script: after a reboot the pid may be any other Node program's.
    'export-events',
    (holder) =>
      new UsageError(`another run (process ${holder}) is writing ${partial}; wait for it to end, or stop it`),
  );
}

/** Beside a partial export: the filters it was started with, so --resume cannot mix two exports. */
const filterFileOf = (partial: string) => `${partial}.filters.json`;

/** Beside a partial export: the database it reads (scriptStorageName), for the same reason. */
const sourceFileOf = (partial: string) => `${partial}.source`;

/** Refuses to resume a partial export started on another database (one of before this is taken). */
function checkSameSource(partial: string, source: string): void {
  if (!existsSync(sourceFileOf(partial))) return;
  const kept = readFileSync(sourceFileOf(partial), 'utf8').trim();
  if (kept !== source)
    throw new UsageError(
      `--resume: ${partial} was started on ${kept}, and this run reads ${source}; point the storage variables at that database, or run without --resume`,
    );
}

/** The filter as its file keeps it: keys in order, times as ISO text. */
const filterText = (filter: EventsFilter) =>
  JSON.stringify(Object.fromEntries(Object.entries(filter).sort(([a], [b]) => a.localeCompare(b))));

/** A new, empty partial file readable by its owner only, and its filters beside it; nothing to skip. */
function startAfresh(partial: string, filter: EventsFilter, source: string): undefined {
  rmSync(partial, { force: true });
  // `wx` creates the file anew (an old one is removed first), so the mode applies.
  writeFileSync(partial, '', { flag: 'wx', mode: 0o600 });
  writeFileSync(filterFileOf(partial), `${filterText(filter)}\n`, { mode: 0o600 });
  writeFileSync(sourceFileOf(partial), `${source}\n`, { mode: 0o600 });
  return undefined;
}

/**
 * Where an interrupted export goes on: after the event of the partial file's last complete line (a
 * line cut short after it is cut off). Its own time and key place it, so an event that expired
 * since still does.
 */
function resumedAfter(partial: string, filter: EventsFilter): PageKey | undefined {
  if (!existsSync(partial))
    throw new UsageError(`--resume: no ${partial} to go on with; run without --resume`);
  // Without --resume the partial file would be removed: the operator moves it away first.
  if (!existsSync(filterFileOf(partial)))
    throw new UsageError(
      `--resume: ${partial} has no ${filterFileOf(partial)} beside it, so the filters it was started with are not known; move it away to keep it, then run without --resume`,
    );
  const kept = readFileSync(filterFileOf(partial), 'utf8').trim();
  if (kept !== filterText(filter))
    throw new UsageError(
      `--resume: ${partial} was started with other filters (${kept}); give the same ones, or run without --resume`,
    );
  const { end, line } = lastCompleteLine(partial);
  // Judged before the torn tail is cut off: a file refused is left as it was.
  const last = line === undefined ? undefined : exportedEvent(line);
  if (line !== undefined && last === undefined)
    throw new UsageError(
      `--resume: the last line of ${partial} is not an exported event (a key and a receivedAt time); move the file away to keep it, then run without --resume`,
    );
  truncateSync(partial, end);
  return last;
}

/** Where an exported line's event sorts (its time and key), or undefined for another line. */
function exportedEvent(line: string): PageKey | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { key, receivedAt } = parsed as { key?: unknown; receivedAt?: unknown };
  const at = typeof receivedAt === 'string' ? new Date(receivedAt) : undefined;
  if (typeof key !== 'string' || at === undefined || Number.isNaN(at.getTime())) return undefined;
  return { at, id: key };
}

runCli(main);
