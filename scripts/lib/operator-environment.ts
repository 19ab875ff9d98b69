import { hostname } from 'node:os';
import { namesThisMachine } from '../../shared/config/listen-config.ts';
import { envValue } from '../../shared/config/parse-env.ts';

/**
 * The operator's variables `npm start` hands its services over its own development values: all
 * but `stale` (this stack's server URLs of an earlier run, staleStackUrls) and those set empty. An
 * empty value counts as unset in every service (docs/configuration.md), so passed on it replaced
 * the stack's value with nothing: an exported `WEBHOOK_SECRETS=` stopped the receiver, and
 * `WEBHOOK_ALLOWLIST=` turned the allowlist on and refused every local delivery. Blank is empty, as
 * the services read it (envValue): a CRLF env file sourced by a shell leaves `REDIS_URL=\r`, which
 * passed on kept the stack from starting its own Redis. Nor HOST when it is this machine's name
 * (`machine`): tcsh sets that in every environment, and the services refuse it (listen-config.ts),
 * so the stack asked to be opened to the network, and opened stopped anyway. Pure.
 */
export function operatorEnvironment(
  env: NodeJS.ProcessEnv,
  stale: readonly string[],
  machine = hostname(),
): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(env).filter(
      ([variable]) =>
        envValue(env, variable) !== undefined &&
        !stale.includes(variable) &&
        !(variable === 'HOST' && shellsHost(env, machine)),
    ),
  );
}

/** Whether HOST is this machine's name, as tcsh sets it: npm start leaves it out. */
export function shellsHost(env: NodeJS.ProcessEnv, machine = hostname()): boolean {
  const host = envValue(env, 'HOST');
  return host !== undefined && namesThisMachine(host, machine);
}
