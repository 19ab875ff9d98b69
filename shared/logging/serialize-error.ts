import { stdSerializers } from 'pino';
import { redactUrlCredentials } from './redact-url-credentials.ts';

/**
 * How deep below a logged error a Redis command is looked for: an error's own properties, a
 * nested error's (pino serializes those too) and the objects they hold; deeper values are left
 * as they are rather than walked (an error may hold a whole client).
 */
const MAX_DEPTH = 6;

interface CommandLike {
  name?: unknown;
  args: unknown;
}

const isCommand = (value: unknown): value is CommandLike =>
  typeof value === 'object' && value !== null && 'args' in value;

/** Objects worth looking into: arrays, errors (raw or serialized) and plain objects; not class instances. */
function isWalkable(value: object): boolean {
  if (Array.isArray(value) || value instanceof Error) return true;
  if (typeof (value as { message?: unknown }).message === 'string') return true;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * `value` with every `command` that has `args` replaced by its name alone; copies what it changes,
 * so the logged error (ioredis's, a caller's) keeps its own command.
 */
function withoutCommandArgs(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  // Any string, not only a message or a stack: `err: error.message`, an error's own `url`.
  if (typeof value === 'string') return redactUrlCredentials(value);
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH || seen.has(value)) return value;
  if (!isWalkable(value)) return value;
  seen.add(value);
  if (Array.isArray(value)) {
    const items = value.map((item: unknown) => withoutCommandArgs(item, depth + 1, seen));
    return items.some((item, index) => item !== value[index]) ? items : value;
  }
  let copy: Record<string, unknown> | undefined;
  for (const [key, child] of Object.entries(value)) {
    const next =
      key === 'command' && isCommand(child)
        ? { name: typeof child.name === 'string' ? child.name : undefined }
        : withoutCommandArgs(child, depth + 1, seen);
    if (next === child) continue;
    // Keeps the prototype: pino's serialized error hides its `raw` (the original) behind it.
    copy ??= Object.assign(
      Object.create(Object.getPrototypeOf(value) as object | null) as Record<string, unknown>,
      value,
    );
    copy[key] = next;
  }
  return copy ?? value;
}

/**
 * pino's error serializer (type, message and stack with its causes', every other property),
 * minus the credentials of any URL its strings quote (a driver's error naming the connection
 * string it failed on, in its message or a property; a message logged as a string), and minus the
 * arguments of a Redis command the error carries.
 * ioredis puts the failed command on its errors, `{name, args}`, and for a refused AUTH (a
 * password rotation, a disabled ACL user) the arguments are the password: it reached the log
 * through an unhandled rejection's fatal line. The command's name stays, which is what an
 * operator needs to know.
 */
export function serializeError(error: unknown): unknown {
  return withoutCommandArgs(stdSerializers.err(error as Error), 0, new WeakSet());
}
