import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { enqueueOnce, type EnqueueTarget } from '../../../receiver/store/enqueue-once.ts';

/** A spool line: the WebhookJobData the receiver would have queued (receiver/spool). */
const spoolLine = z.object({
  dedupeKey: z.string().regex(/^[0-9a-f]{64}$/),
  webhook: z.string().min(1),
  // Kept as written (z.object drops a key it does not name): the tray applies no Standard Webhooks
  // delivery, and absent it is a line an older receiver spooled.
  scheme: z.enum(['platform', 'standard-webhooks']).optional(),
  receivedAt: z.string().refine((value) => !Number.isNaN(Date.parse(value))),
  event: z.string().min(1),
  data: z.record(z.string(), z.unknown()),
});

export interface SpoolCounts {
  queued: number;
  /** Queued before: within the dedupe window, or still in the queue under the same job id. */
  alreadyQueued: number;
  invalid: number;
  /** Line numbers of invalid lines (the first few), for the operator. */
  invalidLines: number[];
}

/**
 * Queues each event of a spool file. Spooled events were verified when received and carry no
 * signature, so nothing is verified again. Each goes through the receiver's own dedupe-and-enqueue
 * step, so an event queued within the dedupe window (even one whose job was already processed and
 * trimmed from the completed set) is not queued again, and replaying a file twice queues nothing
 * new the second time.
 */
export async function requeueSpool(
  target: EnqueueTarget,
  file: string,
  onBytes: (bytes: number) => void,
): Promise<SpoolCounts> {
  const counts: SpoolCounts = { queued: 0, alreadyQueued: 0, invalid: 0, invalidLines: [] };
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  let lineNo = 0;
  let bytes = 0;
  for await (const line of lines) {
    lineNo += 1;
    bytes += Buffer.byteLength(line) + 1;
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      parsed = undefined;
    }
    const result = spoolLine.safeParse(parsed);
    if (!result.success) {
      counts.invalid += 1;
      if (counts.invalidLines.length < 20) counts.invalidLines.push(lineNo);
      continue;
    }
    // The line as written, as the receiver's drainer queues it: parsed and written again, the
    // sender's JSON could change (a `__proto__` key of data dropped, a number past a double null).
    const job = { dedupeKey: result.data.dedupeKey, json: line };
    if ((await enqueueOnce(target, job)) === 'queued') counts.queued += 1;
    else counts.alreadyQueued += 1;
    onBytes(bytes);
  }
  return counts;
}
