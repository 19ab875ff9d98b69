import type { DevSecrets } from './dev-secrets.ts';

/** The stack's server URLs that .data/stack.env hands a shell, with the password each carries. */
const STACK_URLS = [
  ['REDIS_URL', 'REDIS_PASSWORD'],
  ['DATABASE_URL', 'POSTGRES_PASSWORD'],
] as const;

/**
 * Which of REDIS_URL and DATABASE_URL name this stack's own servers (they carry the password from
 * its secrets file): set in a shell that read .data/stack.env of an earlier run, they name servers
 * that stopped with it, which `npm start` would otherwise take for the operator's own. Pure.
 */
export function staleStackUrls(env: NodeJS.ProcessEnv, secrets: DevSecrets): string[] {
  return STACK_URLS.filter(([variable, password]) => {
    const url = env[variable];
    if (!url) return false;
    try {
      return decodeURIComponent(new URL(url).password) === secrets[password];
    } catch {
      return false;
    }
  }).map(([variable]) => variable);
}
