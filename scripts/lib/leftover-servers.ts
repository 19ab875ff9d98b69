import { join } from 'node:path';
import { runningPid } from './running-pid.ts';

/**
 * Refuses, naming it, a Redis or PostgreSQL still running on the stack's files after the stack that
 * started it was killed (SIGKILL leaves its servers behind): a new Redis would write the same
 * append-only file, and PostgreSQL would refuse to start with a lock-file error.
 */
export function checkNoLeftoverServers(dataDir: string): void {
  const servers = [
    { name: 'Redis', dir: join(dataDir, 'redis'), pidFile: 'redis.pid', command: 'redis-server' },
    {
      name: 'PostgreSQL',
      dir: join(dataDir, 'postgres'),
      pidFile: 'data/postmaster.pid',
      command: 'postgres',
    },
  ];
  for (const { name, dir, pidFile, command } of servers) {
    const pid = runningPid(join(dir, pidFile), command);
    if (pid !== undefined) {
      throw new Error(
        `a ${name} (pid ${pid}) left running by an earlier npm start still uses ${dir}: stop it (kill ${pid}), then start again`,
      );
    }
  }
}
