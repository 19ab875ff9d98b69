import { repeatedJsonKeys } from './repeated-json-keys.ts';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import type { CatalogueProblem } from '../../shared/errors/catalogue-error.ts';
import { messageKeys } from './message-keys.ts';

/** One `<locale>.json` file: message key -> Handlebars template. */
export interface CatalogueFile {
  locale: string;
  file: string;
  messages: ReadonlyMap<string, string>;
  /** TRAY_MESSAGES_DIR for an override file, so errors name the variable that brought it in. */
  variable?: string;
}

/** A path as an operator would type it: relative to the working directory when inside it. */
export function displayPath(path: string): string {
  const inside = relative(process.cwd(), path);
  return inside && !inside.startsWith('..') && !isAbsolute(inside) ? inside : path;
}

function localeOfFileName(name: string): string | undefined {
  try {
    return Intl.getCanonicalLocales(name.slice(0, -'.json'.length))[0];
  } catch {
    return undefined;
  }
}

/**
 * Reads every `<locale>.json` of a directory. Keys starting with `_` are notes for translators and
 * are ignored; any other unknown key is reported, since it is most likely a typo of a real one.
 */
export function readCatalogueDir(
  dir: string,
  variable?: string,
): { catalogues: CatalogueFile[]; problems: CatalogueProblem[] } {
  const problems: CatalogueProblem[] = [];
  const catalogues: CatalogueFile[] = [];
  const problem = (file: string, message: string, key?: string) =>
    problems.push({
      file,
      message,
      ...(key === undefined ? {} : { key }),
      ...(variable ? { variable } : {}),
    });

  let names: string[];
  try {
    if (!statSync(dir).isDirectory()) throw new Error('not a directory');
    names = readdirSync(dir)
      .filter((name) => name.endsWith('.json') && !name.startsWith('.'))
      .sort();
  } catch (error) {
    problem(displayPath(dir), `cannot read the catalogue directory (${(error as Error).message})`);
    return { catalogues, problems };
  }
  for (const name of names) {
    const file = displayPath(join(dir, name));
    const locale = localeOfFileName(name);
    if (!locale) {
      problem(file, 'the file name must be a BCP 47 locale, e.g. fr.json or pt-BR.json');
      continue;
    }
    const twin = catalogues.find((catalogue) => catalogue.locale === locale);
    if (twin) {
      problem(file, `a second catalogue of ${locale} (the first is ${twin.file})`);
      continue;
    }
    // A directory named like a catalogue, a broken link or an unreadable file is a problem of that
    // file, reported with the others rather than thrown bare with no file or variable.
    let text: string;
    try {
      text = readFileSync(join(dir, name), 'utf8');
    } catch (error) {
      problem(file, `cannot read the file (${(error as Error).message})`);
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      problem(file, `not valid JSON: ${(error as Error).message}`);
      continue;
    }
    for (const key of repeatedJsonKeys(text))
      problem(file, 'given more than once: only the last is used (remove the other copies)', key);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      problem(file, 'expected a JSON object of "message key": "template"');
      continue;
    }
    const messages = new Map<string, string>();
    for (const [key, template] of Object.entries(parsed)) {
      if (key.startsWith('_')) continue;
      if (!messageKeys.has(key))
        problem(file, 'unknown message key (docs/messages.md#catalogue-format lists them)', key);
      else if (typeof template !== 'string') problem(file, 'expected a text template', key);
      else messages.set(key, template);
    }
    catalogues.push({ locale, file, messages, ...(variable ? { variable } : {}) });
  }
  return { catalogues, problems };
}
