import { ConfigError } from './config-error.ts';

/** One problem of a catalogue file, named so a translator can find it. */
export interface CatalogueProblem {
  file: string;
  /** The message key, when the problem is in one message. */
  key?: string;
  message: string;
  /** The environment variable that brought the file in (TRAY_MESSAGES_DIR, DEFAULT_LOCALE). */
  variable?: string;
}

export function formatProblem(problem: CatalogueProblem): string {
  return [problem.file, problem.key, problem.message].filter((part) => part !== undefined).join(': ');
}

/**
 * Catalogues that cannot be used: start-up stops. A ConfigError because
 * catalogues are deployment configuration, so `loadOrExit` prints it as one line and exits 1.
 */
export class CatalogueError extends ConfigError {
  readonly problems: readonly CatalogueProblem[];
  /** File and key of the first problem. */
  readonly file: string;
  readonly key: string | undefined;

  constructor(problems: readonly CatalogueProblem[]) {
    const variables = [...new Set(problems.flatMap((p) => (p.variable ? [p.variable] : [])))];
    super(variables.map((variable) => ({ variable, message: 'see the catalogue problems' })));
    this.name = 'CatalogueError';
    // Each problem led by the variable that brought its file in, as every configuration error is.
    const named = problems.map((p) => (p.variable ? `${p.variable}: ${formatProblem(p)}` : formatProblem(p)));
    this.message = `Invalid tray message catalogues: ${named.join('; ')}`;
    this.problems = problems;
    this.file = problems[0]?.file ?? '';
    this.key = problems[0]?.key;
  }
}
