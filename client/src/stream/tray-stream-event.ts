import { streamEventNames, type StreamEventDataMap } from '../generated/tray-api-types.ts';

/**
 * What openTrayStream yields: every live-stream event but those it answers itself, `opened` (the
 * stream's id, named when it reconnects) and `expired`.
 */
export type TrayStreamEventName = Exclude<keyof StreamEventDataMap, 'opened' | 'expired'>;

/**
 * One live-stream event: its name, its id (the resume point: for an event the service sent without
 * one, the one before it) and its typed data.
 */
export type TrayStreamEvent = {
  [E in TrayStreamEventName]: { event: E; id: string; data: StreamEventDataMap[E] };
}[TrayStreamEventName];

/** Whether `event` is one this client yields (a newer service may send events it does not know). */
export function isTrayStreamEventName(event: string): event is TrayStreamEventName {
  return event !== 'opened' && event !== 'expired' && (streamEventNames as readonly string[]).includes(event);
}
