import { Redis } from 'ioredis';

/** redis-server's own CPU seconds (user + system) so far, from INFO: the benches' Redis cost. */
export async function redisCpuSeconds(redisUrl: string): Promise<number> {
  const client = new Redis(redisUrl);
  try {
    const info = await client.info('cpu');
    const field = (name: string) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? 0);
    return field('used_cpu_user') + field('used_cpu_sys');
  } finally {
    client.disconnect();
  }
}
