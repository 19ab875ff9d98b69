/** One statement's text and its parameters, as node-postgres takes them. */
export interface SqlQuery {
  text: string;
  values: unknown[];
}

/**
 * Collects a statement's WHERE conditions with their parameters, numbering the placeholders in
 * the order the values are added, so optional filters never need hand-counted `$n`s.
 */
export class SqlConditions {
  readonly values: unknown[] = [];
  private readonly conditions: string[] = [];

  /** Adds `value` as the next parameter and returns its placeholder. */
  param(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  /** Adds a condition; `build` gets `param` to place its values. */
  and(build: (param: (value: unknown) => string) => string): this {
    this.conditions.push(build((value) => this.param(value)));
    return this;
  }

  /** `WHERE a AND b ...`, or nothing when no condition was added. */
  where(): string {
    return this.conditions.length === 0 ? '' : `WHERE ${this.conditions.join(' AND ')}`;
  }
}
