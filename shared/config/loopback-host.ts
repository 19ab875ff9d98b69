/**
 * Hosts whose traffic never leaves the machine: `localhost`, 127.0.0.0/8 and `::1` (bracketed or
 * not). Not names under `.localhost`: only some resolvers keep those on this machine, others ask
 * the network's DNS.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
