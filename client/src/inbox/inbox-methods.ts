import type { CallOptions } from '../call-options.ts';
import type {
  ArchiveBody,
  IdsBody,
  MuteBody,
  MutesBody,
  MuteTargetInput,
  PutMuteBody,
  RemovedBody,
  SeenBody,
  SnoozeBody,
  UpdatedBody,
} from '../generated/tray-api-types.ts';
import { ALL_RECORDS_RETRY_WITHIN_MS } from '../request/all-records-retry.ts';
import { parseIsoDateTime } from '../generated/iso-date-time.ts';
import type { Send } from '../send.ts';

/** One mute in force, as the service lists it. */
export type Mute = MuteBody['data'];

/** A time the service takes: epoch milliseconds, a Date, or an ISO 8601 string with its offset. */
export type TrayTime = number | Date | string;

/** The inbox operations: seen, archived and snoozed records, and mutes. */
export interface InboxMethods {
  /**
   * Marks records seen: these (1 to 100 `v_tarid_uid`s) or every record in the inbox. Answers how
   * many changed. `'all'` here and in archive() is sent again after a 429 or 503 only within 2 s of
   * the call, as markAllAsRead() is.
   */
  markSeen(records: readonly string[] | 'all', options?: CallOptions): Promise<number>;
  /**
   * Archives records: these, every record in the inbox, or (`'all-read'`) every read one. Answers
   * how many changed.
   */
  archive(records: readonly string[] | 'all' | 'all-read', options?: CallOptions): Promise<number>;
  /** Brings archived records back to the inbox as they were. */
  unarchive(ids: readonly string[], options?: CallOptions): Promise<number>;
  /**
   * Takes records out of the inbox until `until` (later than now, at most 90 days on, nor past the
   * service's TRAY_RETENTION_DAYS); they come back unread.
   */
  snooze(ids: readonly string[], until: TrayTime, options?: CallOptions): Promise<number>;
  /** Brings snoozed records back now. */
  unsnooze(ids: readonly string[], options?: CallOptions): Promise<number>;
  /** The caller's mutes in force. */
  mutes(options?: CallOptions): Promise<Mute[]>;
  /** Mutes a post, a community or a user, until `until` or until unmuted; a second call changes `until` only. */
  mute(
    target: Omit<PutMuteBody, 'until'> & { until?: TrayTime | null },
    options?: CallOptions,
  ): Promise<Mute>;
  /** Lifts a mute; answers whether one was in force. */
  unmute(target: MuteTargetInput, options?: CallOptions): Promise<boolean>;
}

/**
 * An `until` as sent: epoch milliseconds, or the ISO 8601 text as given (the service reads it). A
 * number that is no time (an invalid Date, NaN, Infinity) is a TypeError: JSON would send it as
 * null, which a mute reads as "until unmuted". So is a fraction of a millisecond, which the
 * service refuses as a malformed body rather than naming the argument.
 */
function timeOf(time: TrayTime): number | string {
  const sent = time instanceof Date ? time.getTime() : time;
  if (typeof sent !== 'number') return sent;
  if (!Number.isFinite(sent)) throw new TypeError(`until: expected a valid time, got ${String(time)}`);
  if (!Number.isInteger(sent)) throw new TypeError(`until: expected whole milliseconds, got ${String(sent)}`);
  return sent;
}

/**
 * How long a call naming `until` may still be sent again: the service refuses an `until` that is
 * not later than its clock (400), so a retry after it could only fail, with a confusing message.
 */
function retriedBefore(until: number | string | null | undefined): { retryWithinMs?: number } {
  if (until === null || until === undefined) return {};
  // Read as the service reads it (its own reader, generated): Date.parse takes fewer forms (±hh,
  // the basic form, a `,` fraction) and more (no offset, 30 February) than the service.
  const at = typeof until === 'number' ? until : parseIsoDateTime(until);
  // A time the service cannot read is refused with 400, which is never sent again anyway.
  return typeof at === 'number' ? { retryWithinMs: at - Date.now() } : {};
}

export function inboxMethods(send: Send): InboxMethods {
  const mark = async (
    action: string,
    body: SeenBody | ArchiveBody | IdsBody | SnoozeBody,
    options: CallOptions,
  ) => {
    const answer = await send<UpdatedBody>({
      method: 'POST',
      path: `/notifications/v3/records/${action}`,
      body,
      signal: options.signal,
      // `all` takes the records in the inbox when the service applies it: retried only briefly.
      // A snooze is retried only before its `until`: after it, the service refuses the time (400).
      ...('all' in body
        ? { retryWithinMs: ALL_RECORDS_RETRY_WITHIN_MS }
        : 'until' in body
          ? retriedBefore(body.until)
          : {}),
    });
    return answer.data.updated;
  };
  return {
    markSeen: (records, options = {}) =>
      mark('seen', (records === 'all' ? { all: true } : { ids: [...records] }) satisfies SeenBody, options),
    archive: (records, options = {}) =>
      mark(
        'archive',
        (records === 'all'
          ? { all: true }
          : records === 'all-read'
            ? { all: true, readOnly: true }
            : { ids: [...records] }) satisfies ArchiveBody,
        options,
      ),
    unarchive: (ids, options = {}) => mark('unarchive', { ids: [...ids] } satisfies IdsBody, options),
    snooze: async (ids, until, options = {}) =>
      mark('snooze', { ids: [...ids], until: timeOf(until) } satisfies SnoozeBody, options),
    unsnooze: (ids, options = {}) => mark('unsnooze', { ids: [...ids] } satisfies IdsBody, options),
    async mutes(options = {}) {
      return (
        await send<MutesBody>({ method: 'GET', path: '/notifications/v3/mutes', signal: options.signal })
      ).data;
    },
    async mute({ targetType, targetId, until }, options = {}) {
      // Only the fields the service takes: a Mute from mutes() (its createdAt too) is the
      // natural thing to extend, and the service refuses any field it does not take.
      const body: PutMuteBody = {
        targetType,
        targetId,
        ...(until === undefined ? {} : { until: until === null ? null : timeOf(until) }),
      };
      return (
        await send<MuteBody>({
          method: 'PUT',
          path: '/notifications/v3/mutes',
          body,
          signal: options.signal,
          ...retriedBefore(body.until),
        })
      ).data;
    },
    async unmute({ targetType, targetId }, options = {}) {
      const answer = await send<RemovedBody>({
        method: 'DELETE',
        path: '/notifications/v3/mutes',
        // In the query, which the service reads alike: a DELETE's body is dropped by some proxies.
        query: { targetType, targetId } satisfies MuteTargetInput,
        signal: options.signal,
      });
      return answer.data.removed;
    },
  };
}
