import { ConfigError } from '../errors/config-error.ts';

/**
 * Runs a config loader at start-up. A bad value ends the process with one line naming the
 * variable, instead of a stack trace an operator has to read.
 */
export function loadOrExit<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}
