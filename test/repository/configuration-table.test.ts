import { expect } from 'chai';
import { isDeepStrictEqual } from 'node:util';
import type { z } from 'zod';
import { receiverShape } from '../../receiver/receiver-config.ts';
import { defaultSignatureHeader } from '../../receiver/signature/parse-webhook-secrets.ts';
import { LOOPBACK } from '../../shared/config/listen-config.ts';
import { trayShape } from '../../shared/config/tray-config.ts';
import { proseLines, tableRows } from '../support/markdown.ts';
import { readRepositoryFile } from '../support/repository-files.ts';

/**
 * docs/configuration.md's table of variables against the zod shapes the services parse their
 * environment with: every variable either side is on the other, the services named in "Used by"
 * read it, and the default written is the one the schema gives an unset variable.
 */

const page = 'docs/configuration.md';
const shapes: Readonly<Record<'receiver' | 'tray', Readonly<Record<string, z.ZodType>>>> = {
  receiver: receiverShape,
  tray: trayShape,
};
const usedByNames = { receiver: ['receiver'], tray: ['tray'], both: ['receiver', 'tray'] } as const;

/**
 * Variables the schema leaves unset and the service fills in after parsing, with the value it
 * takes then (from the constant the code takes it from).
 */
const defaultedAfterParsing: Readonly<Record<string, string>> = {
  HOST: LOOPBACK,
  WEBHOOK_SIGNATURE_HEADER: defaultSignatureHeader,
  WEBHOOK_SIGNATURE_SCHEME: 'platform',
};

interface DocumentedVariable {
  name: string;
  usedBy: string;
  defaultCell: string;
  description: string;
  number: number;
}

function documentedVariables(): DocumentedVariable[] {
  return tableRows(proseLines(readRepositoryFile(page)))
    .filter((row) => /^`[A-Z][A-Z0-9_]*`$/.test(row.cells[0] ?? ''))
    .map(({ cells, number }) => ({
      name: (cells[0] ?? '').slice(1, -1),
      usedBy: cells[1] ?? '',
      defaultCell: cells[2] ?? '',
      description: cells[3] ?? '',
      number,
    }));
}

/** What the schema makes of `input`: its value, or `required` when it refuses it. */
function parsed(schema: z.ZodType, input: string | undefined): { value: unknown } | 'refused' {
  const result = schema.safeParse(input);
  return result.success ? { value: result.data } : 'refused';
}

const show = (outcome: { value: unknown } | 'refused') =>
  outcome === 'refused' ? 'required (no default)' : (JSON.stringify(outcome.value) ?? 'unset');

/** Why `documented`'s default cell disagrees with one service's schema, or undefined. */
function defaultMismatch(
  documented: DocumentedVariable,
  schema: z.ZodType,
  documentedNames: ReadonlySet<string>,
): string | undefined {
  const unset = parsed(schema, undefined);
  const cell = documented.defaultCell;
  const literal = /^`([^`]+)`$/.exec(cell)?.[1];
  if (cell === '(required)')
    return unset === 'refused' ? undefined : `documented as required, but ${show(unset)}`;
  if (literal === undefined || documentedNames.has(literal) || documented.name in defaultedAfterParsing) {
    // No value of its own: prose ("none", "from the key"), another variable's, or filled in later.
    const after = defaultedAfterParsing[documented.name];
    if (after !== undefined && literal !== after)
      return `documented default ${cell}, but the service fills in \`${after}\``;
    const none = unset !== 'refused' && (unset.value === undefined || isDeepStrictEqual(unset.value, []));
    if (!none)
      return `documented default ${cell} (no value of its own), but the schema's default is ${show(unset)}`;
    return undefined;
  }
  const written = parsed(schema, literal);
  if (written === 'refused') return `documented default ${cell} is refused by the schema`;
  if (unset === 'refused' || !isDeepStrictEqual(unset.value, written.value))
    return `documented default ${cell} parses to ${show(written)}, but the schema's default is ${show(unset)}`;
  return undefined;
}

/** Whether `schema` takes `value` as a number (a whole-number variable). */
const takesNumber = (schema: z.ZodType, value: number) => {
  const outcome = parsed(schema, String(value));
  return outcome !== 'refused' && typeof outcome.value === 'number';
};

/**
 * Why the row's "at most N" disagrees with a whole-number variable's schema, or undefined: N must be
 * taken, and neither N + 1 nor N + 1000 (a variable of whole seconds in ms refuses N + 1 anyway).
 * A variable that takes no small number is not a whole-number one and needs no bound.
 */
function boundMismatch(documented: DocumentedVariable, schema: z.ZodType): string | undefined {
  if (![0, 1, 1_000].some((value) => takesNumber(schema, value))) return undefined;
  const written = /at most `?([\d,]+)/.exec(documented.description)?.[1];
  if (written === undefined) return 'a whole number, but the row states no "at most" bound';
  const bound = Number(written.replaceAll(',', ''));
  if (!takesNumber(schema, bound)) return `documented at most ${written}, which the schema refuses`;
  if (takesNumber(schema, bound + 1) || takesNumber(schema, bound + 1_000))
    return `documented at most ${written}, but the schema takes more`;
  return undefined;
}

describe(`${page}: the table of variables matches the configuration schemas`, () => {
  const documented = documentedVariables();
  const documentedNames = new Set(documented.map((variable) => variable.name));

  it('reads the table', () => {
    expect(documented.length, 'variables found in the table').to.be.greaterThan(50);
  });

  it('documents every variable the receiver and the tray service parse', () => {
    const missing = Object.entries(shapes).flatMap(([service, shape]) =>
      Object.keys(shape)
        .filter((name) => !documentedNames.has(name))
        .map((name) => `${page}: ${name} (parsed by the ${service}) is not in the table`),
    );
    expect(missing).to.deep.equal([]);
  });

  it('documents only variables a service parses, each by the services its "Used by" names', () => {
    const wrong: string[] = [];
    for (const { name, usedBy, number } of documented) {
      const services = usedByNames[usedBy as keyof typeof usedByNames];
      if (!services) {
        wrong.push(`${page}:${number}: ${name}: "Used by" is "${usedBy}", not receiver, tray or both`);
        continue;
      }
      for (const service of services)
        if (!(name in shapes[service]))
          wrong.push(
            `${page}:${number}: ${name}: documented as used by the ${service}, which does not parse it`,
          );
    }
    expect(wrong).to.deep.equal([]);
  });

  it('gives each variable the default the schema gives it when unset', () => {
    const wrong: string[] = [];
    for (const variable of documented) {
      for (const [service, shape] of Object.entries(shapes)) {
        const schema = shape[variable.name];
        if (!schema) continue;
        const why = defaultMismatch(variable, schema, documentedNames);
        if (why) wrong.push(`${page}:${variable.number}: ${variable.name} (${service}): ${why}`);
      }
    }
    expect(wrong).to.deep.equal([]);
  });

  it('states the largest value of every whole-number variable (but ports), as the schema takes it', () => {
    const wrong: string[] = [];
    for (const variable of documented) {
      if (variable.name.endsWith('_PORT')) continue;
      for (const [service, shape] of Object.entries(shapes)) {
        const schema = shape[variable.name];
        if (!schema) continue;
        const why = boundMismatch(variable, schema);
        if (why) wrong.push(`${page}:${variable.number}: ${variable.name} (${service}): ${why}`);
      }
    }
    expect(wrong).to.deep.equal([]);
  });

  it('would notice a wrong default', () => {
    const port = { name: 'RECEIVER_PORT', usedBy: 'receiver', description: '', number: 0 };
    expect(defaultMismatch({ ...port, defaultCell: '`8080`' }, receiverShape.RECEIVER_PORT, documentedNames))
      .to.be.undefined;
    expect(
      defaultMismatch({ ...port, defaultCell: '`8081`' }, receiverShape.RECEIVER_PORT, documentedNames),
    ).to.equal("documented default `8081` parses to 8081, but the schema's default is 8080");
    expect(
      defaultMismatch({ ...port, defaultCell: 'none' }, receiverShape.RECEIVER_PORT, documentedNames),
    ).to.match(/no value of its own/);
  });
});
