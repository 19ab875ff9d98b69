import { parseClusterNodes } from '../../shared/config/parse-cluster-nodes.ts';
import { hostPort } from '../../shared/http/host-port.ts';

/**
 * A URL as the stack prints it (the operator's own URLs included): its password, if any, replaced,
 * and its query shown as `?…`, since a query may carry a password too (node-postgres reads
 * `password` there, ioredis merges the query into its options, MongoDB's options hold key
 * passwords and session tokens). One the URL parser refuses (a password with an unencoded `/`, a
 * MongoDB URI listing several hosts) has everything from its scheme to its last `@` replaced: a
 * password may hold any character but the `@` that ends it.
 */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '****';
    const query = parsed.search === '' ? '' : '?…';
    parsed.search = '';
    parsed.hash = '';
    return `${parsed.toString()}${query}`;
  } catch {
    // After the last `@`: a password may hold a `?` (a query holding an `@` is cut with it).
    const at = url.lastIndexOf('@');
    const query = url.indexOf('?', at < 0 ? 0 : at + 1);
    const [base, shownQuery] = query < 0 ? [url, ''] : [url.slice(0, query), '?…'];
    const shown = base.replace(
      /^([a-z][a-z0-9+.-]*:\/\/)?.*@/is,
      (_match, scheme: string | undefined) => `${scheme ?? ''}****@`,
    );
    return `${shown}${shownQuery}`;
  }
}

/**
 * REDIS_CLUSTER_NODES as the stack prints it: the seeds as host:port, or, when an entry does not
 * read as one, nothing of it (one pasted as a URL may hold the password; the services say which).
 */
export function shownClusterNodes(text: string): string {
  try {
    return parseClusterNodes(text)
      .map((node) => hostPort(node.host, String(node.port)))
      .join(',');
  } catch {
    return '(REDIS_CLUSTER_NODES as set, not repeated: an entry is no host:port, which the services name)';
  }
}
