import type { Removal } from '../../../../tray-service/domain/removal.ts';
import type { TrayOperation } from '../../../support/reference-tray/reference-tray.ts';
import type { ConformanceContext } from './conformance-case.ts';

/**
 * The removal of one action, post or comment (`id`) under `post` (in `community`, as the platform
 * says for a post on a community), dated `at` and applied on the tray's clock `now` (by default at
 * its own time): the operation both the storage and the reference tray take.
 */
export function removalOperation(
  context: ConformanceContext,
  removed: { kind: Removal['kind']; id: string; post: string; at: number; community?: string },
  now = removed.at,
): TrayOperation {
  const removal: Removal = {
    kind: removed.kind,
    id: context.id(removed.id),
    postId: context.id(removed.post),
    at: removed.at,
    ...(removed.community === undefined ? {} : { communityId: context.id(removed.community) }),
  };
  return { kind: 'removal', removals: [removal], now };
}
