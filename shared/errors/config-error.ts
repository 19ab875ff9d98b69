/** A configuration problem found at start-up. The message names every bad variable on one line. */
export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  readonly variables: readonly string[];

  constructor(problems: readonly { variable: string; message: string }[]) {
    super(`Invalid configuration: ${problems.map((p) => `${p.variable}: ${p.message}`).join('; ')}`);
    this.name = 'ConfigError';
    this.variables = problems.map((p) => p.variable);
  }
}
