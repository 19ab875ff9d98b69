import type { InboxPort, TrayStorage } from '../storage/port.ts';
import { InboxUnsupportedError } from './inbox-unsupported-error.ts';

/** The storage's inbox extensions, or the typed error every inbox operation answers without them. */
export function requireInbox(storage: Pick<TrayStorage, 'inbox' | 'engine'>): InboxPort {
  if (!storage.inbox) throw new InboxUnsupportedError(storage.engine);
  return storage.inbox;
}
