/**
 * Operator tool: writes stored events to an NDJSON file, the same lines as
 * GET /admin/events/export, straight from the tray's storage (no running tray service needed).
 */
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { trayWorkerShape } from '../shared/config/tray-worker-config.ts';
import type { StoredEvent } from '../tray-service/domain/stored-event.ts';
import { toEventView } from '../tray-service/admin/event-view.ts';
import { ndjsonStream } from '../tray-service/admin/ndjson-stream.ts';
import type { EventsFilter } from '../tray-service/storage/port.ts';
import { UsageError } from '../shared/errors/usage-error.ts';
import { parseCli, progressBar, runCli, scriptEnv } from './lib/cli.ts';
import { openScriptStorage, storageVariables } from './lib/open-script-storage.ts';
import { parseIsoTime } from '../tray-service/admin/parse-iso-time.ts';

const usage = `
Usage: npm run export-events -- --out <file> [filters]

Writes every stored event matching the filters to <file>, one JSON object per line, newest first
(the shape of GET /admin/events/export). The file appears only when the export is complete.

Filters:
  --event <name>      e.g. post.didCreate
  --webhook <name>    the webhook that delivered it
  --status <status>   applied, stored, unknown or invalid
  --since <time>      received at or after (ISO 8601)
  --until <time>      received before (ISO 8601)

Options:
  --out <file>        output file (required)
  -h, --help          show this help

Environment: ${storageVariables}; EVENTS_RETENTION_DAYS (each line's expiresAt).
Exit code: 0 done, 1 failed, 2 bad arguments or configuration.
`;

const statuses = ['applied', 'stored', 'unknown', 'invalid'] as const;

function time(value: string | undefined, name: string): Date | undefined {
  if (value === undefined) return undefined;
  // The admin API's parser: a day that does not exist is refused, a time without offset is UTC.
  const date = parseIsoTime(value);
  if (!date) throw new UsageError(`--${name}: expected an ISO 8601 time`);
  return date;
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
        since: { type: 'string' },
        until: { type: 'string' },
      },
      allowPositionals: true,
    },
    usage,
  );
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}\n${usage}`);
  if (!values.out) throw new UsageError(`--out: the output file is required\n${usage}`);
  const status = values.status;
  if (status !== undefined && !statuses.includes(status as (typeof statuses)[number])) {
    throw new UsageError(`--status: expected ${statuses.join(', ')}`);
  }
  const filter: EventsFilter = {};
  if (values.event) filter.event = values.event;
  if (values.webhook) filter.webhook = values.webhook;
  if (status) filter.status = status as EventsFilter['status'];
  const since = time(values.since, 'since');
  const until = time(values.until, 'until');
  if (since) filter.since = since;
  if (until) filter.until = until;
  if (since && until && since >= until) throw new UsageError('--until: must be later than --since');

  const { EVENTS_RETENTION_DAYS: retentionDays } = scriptEnv({
    EVENTS_RETENTION_DAYS: trayWorkerShape.EVENTS_RETENTION_DAYS,
  });
  const storage = await openScriptStorage('export-events');
  const out = values.out;
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
      ndjsonStream((event: StoredEvent) => toEventView(event, retentionDays)),
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
