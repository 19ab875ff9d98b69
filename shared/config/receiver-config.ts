import { commonShape } from './common-config.ts';
import { port } from './env-types.ts';
import { parseEnv, type Env } from './parse-env.ts';

export const receiverShape = {
  ...commonShape,
  RECEIVER_PORT: port(8080),
};

export type ReceiverConfig = ReturnType<typeof loadReceiverConfig>;

export function loadReceiverConfig(env: Env) {
  return parseEnv(receiverShape, env);
}
