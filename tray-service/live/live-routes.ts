import type { TokenVerifier } from '../http/auth/create-token-verifier.ts';
import type { MountedRoutes } from '../http/mounted-routes.ts';
import type { MessageRenderer } from '../messages/message-renderer.ts';
import type { LiveTray } from './create-live-tray.ts';
import { createStreamRouter, streamPaths } from './create-stream-router.ts';

/** The live tray's stream endpoints, as the tray API's listener mounts them. */
export function liveRoutes(
  live: LiveTray,
  deps: { messages: MessageRenderer; verifyToken: TokenVerifier },
): MountedRoutes {
  return {
    at: '/notifications',
    paths: streamPaths.map((path) => `/notifications${path}`),
    router: ({ afterCaller, guard }, now) =>
      createStreamRouter({
        hub: live.hub,
        streamsPerInstance: live.streamsPerInstance,
        slots: live.slots,
        tickets: live.tickets,
        messages: deps.messages,
        verifyToken: deps.verifyToken,
        afterCaller,
        guard,
        now,
      }),
  };
}
