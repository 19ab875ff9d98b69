import { commonShape, withRedisTarget } from './common-config.ts';
import { port } from './env-types.ts';
import { parseEnv, type Env } from './parse-env.ts';
import { trayAdminShape } from './tray-admin-config.ts';
import { trayApiShape } from './tray-api-config.ts';
import { trayMessagesShape } from './tray-messages-config.ts';
import { trayWorkerShape } from './tray-worker-config.ts';

export const trayShape = {
  ...commonShape,
  TRAY_PORT: port(8081),
  ...trayWorkerShape,
  ...trayApiShape,
  ...trayMessagesShape,
  ...trayAdminShape,
};

export type TrayConfig = ReturnType<typeof loadTrayConfig>;

export function loadTrayConfig(env: Env) {
  return withRedisTarget(parseEnv(trayShape, env));
}
