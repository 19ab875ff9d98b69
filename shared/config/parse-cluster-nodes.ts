import type { RedisNodeAddress } from '../redis/redis-target.ts';

/**
 * REDIS_CLUSTER_NODES: comma-separated `host:port` seed nodes (IPv6 hosts in brackets). Throws an
 * Error whose message names the bad entry by its place; duplicates are refused because they usually mean a
 * copy-paste mistake that leaves fewer seeds than intended.
 */
export function parseClusterNodes(text: string): RedisNodeAddress[] {
  const entries = text.split(',').map((entry) => entry.trim());
  const nodes: RedisNodeAddress[] = [];
  entries.forEach((entry, index) => {
    if (entry === '') throw new Error(`entry ${index + 1} is empty; expected host:port,host:port,...`);
    const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(entry);
    const port = Number(match?.[2]);
    const hostText = match?.[1];
    if (hostText === undefined || port < 1 || port > 65535) {
      // The entry is not repeated: a seed written as a URL may hold the password (which goes in
      // REDIS_URL), and this message goes to the log.
      const credentials = entry.includes('@') ? '; user and password go in REDIS_URL' : '';
      throw new Error(
        `entry ${index + 1} is not host:port (a host name or IP address and a port from 1 to 65535${credentials})`,
      );
    }
    const host = hostText.replace(/^\[(.*)\]$/, '$1');
    if (nodes.some((node) => node.host === host && node.port === port)) {
      throw new Error(`"${entry}" is listed twice`);
    }
    nodes.push({ host, port });
  });
  return nodes;
}
