import { commonShape } from './common-config.ts';
import { port } from './env-types.ts';
import { parseEnv, type Env } from './parse-env.ts';

export const trayShape = {
  ...commonShape,
  TRAY_PORT: port(8081),
};

export type TrayConfig = ReturnType<typeof loadTrayConfig>;

export function loadTrayConfig(env: Env) {
  return parseEnv(trayShape, env);
}
