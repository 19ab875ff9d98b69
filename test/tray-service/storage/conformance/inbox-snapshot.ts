import type { ReferenceTray } from '../../../support/reference-tray/reference-tray.ts';
import {
  referenceCountUnseen,
  referenceViewHistory,
} from '../../../support/reference-tray/reference-tray-reads.ts';
import type { InboxRecord } from '../../../../tray-service/domain/inbox-record.ts';
import { inboxViews, type InboxView } from '../../../../tray-service/domain/inbox-view.ts';
import type { TrayStorage } from '../../../../tray-service/storage/port.ts';
import { inboxOf } from './inbox-operation.ts';
import { plain, SNAPSHOT_PAGE_SIZE } from './tray-snapshot.ts';

/**
 * What a reader sees of a user's inbox beyond the platform's tray: every view's pages and record
 * count (its totalPages), the unseen count.
 */
export interface InboxSnapshot {
  views: Record<InboxView, InboxRecord[][]>;
  counts: Record<InboxView, number>;
  unseen: number;
}

export async function storageInboxSnapshot(
  storage: TrayStorage,
  userId: string,
  now: number,
): Promise<InboxSnapshot> {
  const inbox = inboxOf(storage);
  const views = {} as Record<InboxView, InboxRecord[][]>;
  const counts = {} as Record<InboxView, number>;
  for (const view of inboxViews) {
    counts[view] = await inbox.countView(userId, view, now);
    const pages: InboxRecord[][] = [];
    let startAfter: number | undefined;
    for (let guard = 0; guard < 100; guard++) {
      const page = await inbox.page(userId, view, startAfter, SNAPSHOT_PAGE_SIZE, now);
      pages.push(page.records);
      if (page.nextPage === 0) break;
      startAfter = page.nextPage;
    }
    views[view] = pages;
  }
  return plain({ views, counts, unseen: await inbox.countUnseen(userId, now) });
}

export function modelInboxSnapshot(model: ReferenceTray, userId: string, now: number): InboxSnapshot {
  const views = {} as Record<InboxView, InboxRecord[][]>;
  const counts = {} as Record<InboxView, number>;
  for (const view of inboxViews) {
    views[view] = referenceViewHistory(model, userId, view, SNAPSHOT_PAGE_SIZE, now);
    counts[view] = views[view].flat().length;
  }
  return plain({ views, counts, unseen: referenceCountUnseen(model, userId, now) });
}
