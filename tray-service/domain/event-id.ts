import { z } from 'zod';

/**
 * The longest id an event may carry (a user, community, post, comment or reaction id), in
 * characters as JavaScript counts them (UTF-16 code units). Storage indexes every id, and keys
 * joining several (a record's key holds its target's and its user's; a personal action's five
 * ids): PostgreSQL's, and FerretDB's on it, refuse an index entry over 2,704 bytes, so a payload
 * with an id of a few thousand characters would fail its job on every attempt and replay. 128
 * characters keep the largest of those entries under that limit whatever the characters (three
 * bytes of UTF-8 each, or escaped in JSON), and stay within what the API names: a target of up to
 * 512 characters, a record key of up to 1,024 even with both its ids escaped
 * (docs/contract.md#limits). A payload with a longer id is invalid (docs/tray-engine.md).
 */
export const MAX_EVENT_ID_LENGTH = 128;

/** An id of an event's payload: non-empty, at most MAX_EVENT_ID_LENGTH characters. */
export const eventId = z
  .string()
  .min(1)
  .max(MAX_EVENT_ID_LENGTH, { error: `expected an id of at most ${MAX_EVENT_ID_LENGTH} characters` });

/**
 * `id` when an event may carry it; undefined for a longer one, which no valid event names and which
 * storage must not index (a stored event's acting user and community).
 */
export function idWithinLimit(id: string | undefined): string | undefined {
  return id !== undefined && id.length <= MAX_EVENT_ID_LENGTH ? id : undefined;
}
