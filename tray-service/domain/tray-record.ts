import type { ActorSnapshot, FeedRef, TrayRecordDoc, TrayVerb } from '../../shared/tray/tray-record.ts';

export type { ActorSnapshot, FeedRef, TrayVerb };

/**
 * A tray record as readers see it (the tray API, the live tray, messages): what the contract's
 * NotificationRecord is derived from. It carries no storage mechanics (no claim versions, group
 * keys or expiry dates): each storage adapter keeps those to itself and returns this shape.
 */
export interface TrayRecord extends Pick<
  TrayRecordDoc,
  | 'userId'
  | 'verb'
  | 'targetId'
  | 'targetType'
  | 'targetName'
  | 'parentTargetId'
  | 'lastActionId'
  | 'lastActionSegmentNo'
  | 'feed'
  | 'mentionIn'
  | 'actors'
  | 'actorsCount'
  | 'lastUpdate'
  | 'hasRead'
  | 'unreadAt'
> {
  /** v_tarid_uid: encodeRecordKey({ verb, targetId, userId }) (record-key.ts). */
  key: string;
  /** Epoch ms on the tray's clock of this state's write: what a reconnecting stream asks for. */
  changedAt: number;
}
