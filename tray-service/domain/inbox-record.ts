import type { InboxState } from './inbox-state.ts';
import type { TrayRecord } from './tray-record.ts';

/** A tray record with its inbox state: what the inbox's views and marks return (v3). */
export interface InboxRecord extends TrayRecord, InboxState {}
