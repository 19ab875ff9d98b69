import { z } from 'zod';
import { ConfigError } from '../errors/config-error.ts';

export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Validates an environment record against a schema whose keys are variable names.
 * Empty strings count as unset, so `FOO=` falls back to the default instead of failing oddly.
 */
export function parseEnv<S extends z.ZodRawShape>(shape: S, env: Env): z.infer<z.ZodObject<S>> {
  const input: Record<string, string> = {};
  for (const key of Object.keys(shape)) {
    const value = envValue(env, key);
    if (value !== undefined) input[key] = value;
  }
  const result = z.object(shape).safeParse(input);
  if (result.success) return result.data;
  throw new ConfigError(
    result.error.issues.map((issue) => ({
      variable: String(issue.path[0] ?? '(unknown)'),
      message: issue.message,
    })),
  );
}

/** One variable as every reader takes it: trimmed, and unset when empty. */
export function envValue(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === '' ? undefined : value;
}
