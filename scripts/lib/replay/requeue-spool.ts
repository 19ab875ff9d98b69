import type Bull from 'bull';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { webhookJobOptions, type WebhookJobData } from '../../../shared/queue/webhook-queue.ts';

/** A spool line: the WebhookJobData the receiver would have queued (receiver/spool, issue 3). */
const spoolLine = z.object({
  dedupeKey: z.string().regex(/^[0-9a-f]{64}$/),
  webhook: z.string().min(1),
  receivedAt: z.string().refine((value) => !Number.isNaN(Date.parse(value))),
  event: z.string().min(1),
  data: z.record(z.string(), z.unknown()),
});

export interface SpoolCounts {
  queued: number;
  /** Already in the queue under the same dedupe key (bull keeps one job per id). */
  alreadyQueued: number;
  invalid: number;
  /** Line numbers of invalid lines (the first few), for the operator. */
  invalidLines: number[];
}

/**
 * Queues each event of a spool file. Spooled events were verified when received and carry no
 * signature, so nothing is verified again; the job id is the dedupe key, so an event already in
 * the queue is not queued twice, and replaying a file twice queues nothing new the second time.
 */
export async function requeueSpool(
  queue: Bull.Queue<WebhookJobData>,
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
    const job = result.data as WebhookJobData;
    if (await queue.getJob(job.dedupeKey)) {
      counts.alreadyQueued += 1;
    } else {
      await queue.add(job, { ...webhookJobOptions, jobId: job.dedupeKey });
      counts.queued += 1;
    }
    onBytes(bytes);
  }
  return counts;
}
