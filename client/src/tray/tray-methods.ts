import type { CallOptions } from '../call-options.ts';
import type {
  DataStringBody,
  HistoryV3Page,
  HistoryV3Query,
  MarkAllBody,
  NotificationRecord,
  ReadBody,
  UnreadCountBody,
} from '../generated/tray-api-types.ts';
import { ALL_RECORDS_RETRY_WITHIN_MS } from '../request/all-records-retry.ts';
import type { TrayRequest } from '../request/send-request.ts';
import type { Send } from '../send.ts';
import { TrayApiError } from '../tray-api-error.ts';
import { eachUntilAborted } from '../request/each-until-aborted.ts';

/** Which records a history lists: the inbox (default), archived, snoozed or all. */
export type HistoryView = NonNullable<HistoryV3Query['view']>;

export interface HistoryOptions extends CallOptions {
  /** Where to start: a page's `nextPage` (the walk then continues below it). */
  startAfter?: number;
  view?: HistoryView;
}

/** The tray's own calls: counts, history, read marks, delete-all. */
export interface TrayMethods {
  /** The caller's unread and unseen counts of the inbox (GET /notifications/v3). */
  counts(options?: CallOptions): Promise<UnreadCountBody['data']>;
  /**
   * Every record of the caller, newest first, fetching pages as the loop asks for them (it follows
   * `nextPage`, so records sharing one `lastUpdate` are never split or repeated). Stop the loop
   * early with `break`; no further page is fetched.
   */
  history(options?: HistoryOptions): AsyncGenerator<NotificationRecord, void, undefined>;
  /** One page; pass the previous page's `nextPage` as `startAfter` (0 means there is no next page). */
  historyPage(startAfter?: number, view?: HistoryView, options?: CallOptions): Promise<HistoryV3Page>;
  /** Marks one record read; a TrayApiError 404 when the caller has no such record. */
  read(verb: ReadBody['verb'], targetId: string, options?: CallOptions): Promise<void>;
  /**
   * Marks every record of the caller read. This and the two below take the records the service
   * holds when it applies them, so after a 429 or 503 they are sent again only within 2 s of the
   * call (docs/client.md, "Tokens, errors and retries").
   */
  markAllAsRead(options?: CallOptions): Promise<void>;
  /** Sets the caller's last-read time to now: the unread count starts again from 0. */
  setLastRead(options?: CallOptions): Promise<void>;
  /** Deletes every record of the caller. */
  deleteAll(options?: CallOptions): Promise<void>;
}

export function trayMethods(send: Send, settings: { locale?: string | undefined }): TrayMethods {
  const historyPage = (startAfter?: number, view?: HistoryView, options: CallOptions = {}) =>
    send<HistoryV3Page>({
      method: 'GET',
      path: '/notifications/v3/history',
      query: { startAfter, view, locale: settings.locale },
      signal: options.signal,
    });
  /** A call on every record of the caller: retried only briefly (ALL_RECORDS_RETRY_WITHIN_MS). */
  const allRecords =
    (method: TrayRequest['method'], path: string) =>
    async (options: CallOptions = {}): Promise<void> => {
      await send<DataStringBody | MarkAllBody>({
        method,
        path,
        signal: options.signal,
        retryWithinMs: ALL_RECORDS_RETRY_WITHIN_MS,
      });
    };
  return {
    async counts(options = {}) {
      const body = await send<UnreadCountBody>({
        method: 'GET',
        path: '/notifications/v3',
        signal: options.signal,
      });
      return body.data;
    },
    async *history(options = {}) {
      let startAfter = options.startAfter;
      for (;;) {
        const page = await historyPage(startAfter, options.view, options);
        // Each page lies strictly below the one before: a cursor that does not go down (a proxy's
        // cached page, a faulty service) would fetch the same page for ever. 1 asks for the first
        // page, so a page answering 1 goes back to the top. Checked before the page's records are
        // handed out, which would repeat the page's before.
        const goesBack =
          page.nextPage === 1 ||
          (startAfter !== undefined && startAfter !== 1 && page.nextPage >= startAfter);
        if (page.nextPage !== 0 && goesBack)
          throw new TrayApiError(
            200,
            0,
            `history: the page after ${startAfter} gave nextPage ${page.nextPage}, which does not go below it`,
          );
        yield* eachUntilAborted(page.data, options.signal);
        // 0 is the last page's nextPage; an empty page ends the walk too, whatever it says.
        if (page.nextPage === 0 || page.data.length === 0) return;
        startAfter = page.nextPage;
      }
    },
    historyPage,
    async read(verb, targetId, options = {}) {
      await send<DataStringBody>({
        method: 'POST',
        path: '/notifications/v2/read',
        body: { verb, targetId } satisfies ReadBody,
        signal: options.signal,
      });
    },
    // The service answers these with a fixed acknowledgement (DataStringBody, MarkAllBody): nothing to hand on.
    markAllAsRead: allRecords('GET', '/notifications/v3/mark-all-as-read'),
    setLastRead: allRecords('POST', '/notifications/v2/last-read'),
    deleteAll: allRecords('DELETE', '/notifications/v3/delete-all'),
  };
}
