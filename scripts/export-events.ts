/**
 * Operator tool: writes stored events to an NDJSON file, the same lines as
 * GET /admin/events/export, straight from the tray's storage (no running tray service needed).
 */
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { StoredEvent } from '../tray-service/domain/stored-event.ts';
import { toEventView } from '../tray-service/admin/event-view.ts';
import { ndjsonStream } from '../tray-service/admin/ndjson-stream.ts';
import type { EventsFilter } from '../tray-service/storage/port.ts';
import { UsageError } from '../shared/errors/usage-error.ts';
import { parseCli, progressBar, runCli } from './lib/cli.ts';
import { openScriptStorage, storageVariables } from './lib/open-script-storage.ts';
import { parseEventsFilter } from '../tray-service/admin/parse-events-filter.ts';
import { AppError } from '../shared/errors/app-error.ts';

const usage = `
Usage: npm run export-events -- --out <file> [filters]

Writes every stored event matching the filters to <file>, one JSON object per line, newest first
(the shape of GET /admin/events/export). The file appears only when the export is complete.

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
  -h, --help              show this help

Environment: ${storageVariables}.
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
      },
      allowPositionals: true,
    },
    usage,
  );
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}\n${usage}`);
  const { out, ...filters } = values;
  if (!out) throw new UsageError(`--out: the output file is required\n${usage}`);
  const filter = filterOf(filters);

  const storage = await openScriptStorage('export-events');
  const partial = `${out}.partial`;
  const started = Date.now();
  const events = storage.events;
  const bar = progressBar('exporting', 'events');
  let written = 0;
  try {
    rmSync(partial, { force: true });
    bar.start(await events.count(filter), 0);
    const counter = new Transform({
      objectMode: true,
      transform(event: StoredEvent, _encoding, callback) {
        written += 1;
        if (written % 500 === 0) bar.update(written);
        callback(null, event);
      },
    });
    await pipeline(
      events.stream(filter),
      counter,
      ndjsonStream((event: StoredEvent) => toEventView(event)),
      // Raw payloads: readable by the owner only, whatever the umask. `wx` creates the file anew
      // (an old partial file is removed first), so the mode applies.
      createWriteStream(partial, { flags: 'wx', mode: 0o600 }),
    );
    bar.update(written);
    renameSync(partial, out);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  } finally {
    bar.stop();
    await storage.close();
  }
  process.stdout.write(
    `exported ${written} events to ${out} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
  return 0;
}

runCli(main);
