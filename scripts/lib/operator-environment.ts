/**
 * The operator's variables `npm start` hands its services over its own development values: all
 * but `stale` (this stack's server URLs of an earlier run, staleStackUrls) and those set empty. An
 * empty value counts as unset in every service (docs/configuration.md), so passed on it replaced
 * the stack's value with nothing: an exported `WEBHOOK_SECRETS=` stopped the receiver, and
 * `WEBHOOK_ALLOWLIST=` turned the allowlist on and refused every local delivery. Pure.
 */
export function operatorEnvironment(env: NodeJS.ProcessEnv, stale: readonly string[]): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(env).filter(
      ([variable, value]) => value !== undefined && value !== '' && !stale.includes(variable),
    ),
  );
}
