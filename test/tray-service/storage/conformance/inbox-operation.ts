import type { MarkOperation, TrayOperation } from '../../../support/reference-tray/reference-tray.ts';
import type { InboxRecord } from '../../../../tray-service/domain/inbox-record.ts';
import type { InboxMark, InboxPort, TrayStorage } from '../../../../tray-service/storage/port.ts';
import { RETENTION_DAYS } from './apply-operation.ts';
import { MAX_MUTES_IN_FORCE } from '../../../../tray-service/domain/mute.ts';

/** Records a wake-up claims per statement in the cases: small, so a wake-up takes several batches. */
export const WAKE_BATCH = 3;

/** The storage's inbox port; a case needing it runs only where it exists (`needs: 'inbox'`). */
export function inboxOf(storage: TrayStorage): InboxPort {
  if (!storage.inbox) throw new Error('this adapter has no inbox port');
  return storage.inbox;
}

export type InboxOperation = Extract<TrayOperation, { kind: MarkOperation['kind'] | 'wake' | 'mute' }>;

export function isInboxOperation(operation: TrayOperation): operation is InboxOperation {
  return ['seen', 'archive', 'unarchive', 'snooze', 'unsnooze', 'wake', 'mute', 'unmute'].includes(
    operation.kind,
  );
}

function markOf(
  operation: Extract<TrayOperation, { kind: 'seen' | 'archive' | 'unarchive' | 'snooze' | 'unsnooze' }>,
): InboxMark {
  switch (operation.kind) {
    case 'seen':
      return { kind: 'seen', ids: operation.ids };
    case 'archive':
      return { kind: 'archive', ids: operation.ids, ...(operation.readOnly ? { readOnly: true } : {}) };
    case 'unarchive':
      return { kind: 'unarchive', ids: operation.ids };
    case 'snooze':
      return { kind: 'snooze', ids: operation.ids, until: operation.until };
    case 'unsnooze':
      return { kind: 'unsnooze', ids: operation.ids };
  }
}

/**
 * Applies an inbox operation of the reference tray through the inbox port, as the use cases will:
 * answers what the model's apply answers (`updated` of a mark, 1 for a removed mute, else 0). A
 * wake-up claims batches until one comes back short. The records a mark or wake-up returns go to
 * `tell`, compared by the caller with the model's (told-records.ts).
 */
export async function applyInboxOperation(
  storage: TrayStorage,
  operation: InboxOperation,
  /** Told the records a mark or a wake-up returns: what the use cases hand the live streams. */
  tell: (records: readonly InboxRecord[]) => Promise<void> = async () => undefined,
): Promise<number> {
  const inbox = inboxOf(storage);
  const { now } = operation;
  switch (operation.kind) {
    case 'wake':
      for (;;) {
        const woken = await inbox.wakeDue(now, WAKE_BATCH);
        await tell(woken);
        if (woken.length < WAKE_BATCH) return 0;
      }
    case 'mute':
      await inbox.putMute(
        operation.userId,
        operation.target,
        operation.until,
        now,
        RETENTION_DAYS,
        MAX_MUTES_IN_FORCE,
      );
      return 0;
    case 'unmute':
      return (await inbox.removeMute(operation.userId, operation.target, now, RETENTION_DAYS)) ? 1 : 0;
    default: {
      const marked = await inbox.mark(operation.userId, markOf(operation), now);
      await tell(marked);
      return marked.length;
    }
  }
}
