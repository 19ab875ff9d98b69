import { createHash } from 'node:crypto';

/**
 * The identity of a delivery: lowercase hex SHA-256 of the raw body. The envelope carries no event
 * id (spec/events.md), so a redelivery is recognised by its identical bytes. Also the bull job id.
 */
export function dedupeKey(rawBody: Buffer): string {
  return createHash('sha256').update(rawBody).digest('hex');
}
