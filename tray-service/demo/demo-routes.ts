import type { MountedRoutes } from '../http/mounted-routes.ts';
import type { MessageRenderer } from '../messages/message-renderer.ts';
import { createDemoRouter, demoPaths } from './create-demo-router.ts';
import { loadClientModules } from './load-client-modules.ts';

/** The demo page (TRAY_DEMO), as the tray API's listener mounts it beside the live streams. */
export function demoRoutes(messages: MessageRenderer): MountedRoutes {
  const clientModules = loadClientModules();
  return {
    at: '/',
    paths: demoPaths(clientModules),
    router: () => createDemoRouter({ messages, clientModules }),
  };
}
