import { Redis } from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedis, type LocalServer } from '../../scripts/lib/local-servers.ts';

/**
 * A redis-server of the suite's own that a test can make refuse writes, through `admin`: demoted
 * to a replica of a second one (`demote`, READONLY), at maxmemory (OOM), or an ACL user's
 * permissions taken away (`userUrl` makes the user, with every permission). Started before the
 * suite, stopped after it.
 */
export function useRefusableRedis() {
  let dir: string | undefined;
  let primary: LocalServer | undefined;
  let server: LocalServer | undefined;
  let admin: Redis | undefined;
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useRefusableRedis: used before the suite started');
    return value;
  };
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'refusing-redis-'));
    [primary, server] = await Promise.all([
      startRedis({ dir: join(dir, 'primary') }),
      startRedis({ dir: join(dir, 'server') }),
    ]);
    admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
  });
  after(async () => {
    admin?.disconnect();
    await Promise.all([primary?.stop(), server?.stop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return {
    /** The server's URL, as its default user. */
    get url(): string {
      return started(server).url;
    },
    get admin(): Redis {
      return started(admin);
    },
    /** Makes the server a replica of the other one: it answers PING and refuses writes. */
    demote: () => started(admin).call('REPLICAOF', '127.0.0.1', String(new URL(started(primary).url).port)),
    promote: () => started(admin).call('REPLICAOF', 'NO', 'ONE'),
    /** A URL of the server signed in as `user`, an ACL user made with every permission. */
    async userUrl(user: string, password: string): Promise<string> {
      await started(admin).call('ACL', 'SETUSER', user, 'on', `>${password}`, '~*', '&*', '+@all');
      const url = new URL(started(server).url);
      url.username = user;
      url.password = password;
      return url.href;
    },
  };
}
