import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
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
  /**
   * 1 when the file ends in a line without its newline: an append a crash cut short, which the
   * receiver never acknowledged (it answers once the whole line is on disk) and its own drain
   * drops too. Not invalid: a dead receiver's spool, the case replay is for, may well end so.
   */
  cutOff: number;
}

/**
 * The file's size now, and whether it ends there in a line without its newline (a torn append).
 * The read stops at that size too: a copy still being written would otherwise be read past the
 * end the check looked at.
 */
async function sizeAndCutOff(file: string): Promise<{ size: number; cutOff: boolean }> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    if (size === 0) return { size, cutOff: false };
    const last = Buffer.alloc(1);
    await handle.read(last, 0, 1, size - 1);
    return { size, cutOff: last[0] !== 0x0a };
  } finally {
    await handle.close();
  }
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
  const counts: SpoolCounts = { queued: 0, alreadyQueued: 0, invalid: 0, invalidLines: [], cutOff: 0 };
  const { size, cutOff } = await sizeAndCutOff(file);
  if (size === 0) return counts;
  const input = createReadStream(file, { encoding: 'utf8', end: size - 1 });
  const lines = createInterface({ input, crlfDelay: Infinity });
  let lineNo = 0;
  let bytes = 0;
  /** Each line is queued once the next is read: only then is it known not to be a cut-off last one. */
  let held: string | undefined;
  for await (const next of lines) {
    if (held !== undefined) await queueLine(held);
    held = next;
  }
  if (held !== undefined) {
    if (cutOff) counts.cutOff = 1;
    else await queueLine(held);
  }
  return counts;

  async function queueLine(line: string): Promise<void> {
    lineNo += 1;
    bytes += Buffer.byteLength(line) + 1;
    if (line.trim() === '') return;
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
      return;
    }
    // The line as written, as the receiver's drainer queues it: parsed and written again, the
    // sender's JSON could change (a `__proto__` key of data dropped, a number past a double null).
    const job = { dedupeKey: result.data.dedupeKey, json: line };
    if ((await enqueueOnce(target, job)) === 'queued') counts.queued += 1;
    else counts.alreadyQueued += 1;
    onBytes(bytes);
  }
}
