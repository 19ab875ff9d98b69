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

/** What a reader sees of a user's inbox beyond the platform's tray: every view's pages, the unseen count. */
export interface InboxSnapshot {
  views: Record<InboxView, InboxRecord[][]>;
  unseen: number;
}

export async function storageInboxSnapshot(
  storage: TrayStorage,
  userId: string,
  now: number,
): Promise<InboxSnapshot> {
  const inbox = inboxOf(storage);
  const views = {} as Record<InboxView, InboxRecord[][]>;
  for (const view of inboxViews) {
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
  return plain({ views, unseen: await inbox.countUnseen(userId, now) });
}

export function modelInboxSnapshot(model: ReferenceTray, userId: string, now: number): InboxSnapshot {
  const views = {} as Record<InboxView, InboxRecord[][]>;
  for (const view of inboxViews)
    views[view] = referenceViewHistory(model, userId, view, SNAPSHOT_PAGE_SIZE, now);
  return plain({ views, unseen: referenceCountUnseen(model, userId, now) });
}
