import type { InboxRecord } from '../domain/inbox-record.ts';
import type { InboxView } from '../domain/inbox-view.ts';
import type { TrayStorage } from '../storage/port.ts';
import { requireInbox } from './require-inbox.ts';

export interface InboxHistoryPage {
  records: InboxRecord[];
  /** The next `startAfter`, or 0 on the last page. */
  nextPage: number;
}

/**
 * v3 history of one view of the inbox (docs/tray-rules.md#inbox): records below `startAfter`,
 * newest first, paged as the platform's history. Without the inbox extensions, InboxUnsupportedError.
 */
export async function inboxHistoryPage(
  storage: Pick<TrayStorage, 'inbox' | 'engine'>,
  request: { userId: string; view: InboxView; startAfter: number | undefined; pageSize: number; now: number },
): Promise<InboxHistoryPage> {
  return requireInbox(storage).page(
    request.userId,
    request.view,
    request.startAfter,
    request.pageSize,
    request.now,
  );
}
