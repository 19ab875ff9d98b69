import { join } from 'node:path';
import Handlebars from 'handlebars';
import type { CatalogueProblem } from '../../shared/errors/catalogue-error.ts';
import { checkTemplate } from './check-template.ts';
import { compileMessage } from './compile-message.ts';
import { createMessageHelpers } from './message-helpers.ts';
import type { MessageValues } from './message-for-record.ts';
import { showsNothing } from '../domain/display-name.ts';
import { DELETED_USER_KEY, messageKeys } from './message-keys.ts';
import { displayPath, readCatalogueDir, type CatalogueFile } from './read-catalogue-dir.ts';

/** The catalogues shipped with the product (one `<locale>.json` per locale). */
export const shippedCataloguesDir = join(import.meta.dirname, 'locales');

export type RenderMessage = (values: MessageValues) => string;

export interface LoadedCatalogues {
  /** Locale -> key -> compiled message; every locale has every key (missing ones are the default's). */
  messages: ReadonlyMap<string, ReadonlyMap<string, RenderMessage>>;
  problems: CatalogueProblem[];
  /** Messages a non-default locale lacks, shown by the default locale's text instead. */
  fallbacks: { locale: string; key: string }[];
}

export interface LoadCataloguesOptions {
  defaultLocale: string;
  /** TRAY_MESSAGES_DIR: adds locales, or overrides single messages of shipped ones. */
  overrideDir?: string | undefined;
  shippedDir?: string;
}

interface MessageSource {
  template: string;
  file: string;
  variable?: string;
}

interface LocaleSources {
  /** The locale's files in reading order, with the variable that brought each in (none: shipped). */
  files: { file: string; variable?: string | undefined }[];
  entries: Map<string, MessageSource>;
}

const sampleValues: MessageValues = { actor1: 'A', actor2: 'B', others: 3, community: 'C', feedOwner: 'D' };

/** Values the plain function of a message must render exactly as Handlebars does before it replaces it. */
const crossCheckValues: readonly MessageValues[] = [
  sampleValues,
  { actor1: 'Ana', actor2: 'Ben', others: 0, community: 'Hiking Club', feedOwner: 'Cid' },
  { actor1: '<b>Ana</b>', actor2: '{{x}}', others: 1, community: '&', feedOwner: '"' },
  { actor1: '', actor2: '', others: 21, community: '', feedOwner: '' },
  { actor1: 'Ana', actor2: 'Ben', others: 1234567, community: 'C', feedOwner: 'D' },
];

function compileLocale(locale: string, entries: Map<string, MessageSource>, problems: CatalogueProblem[]) {
  const handlebars = Handlebars.create();
  const helpers = createMessageHelpers(locale);
  handlebars.registerHelper(helpers);
  const compiled = new Map<string, RenderMessage>();
  for (const [key, { template, file, variable }] of entries) {
    const where = { file, key, ...(variable ? { variable } : {}) };
    const checked = checkTemplate(template, messageKeys.get(key) ?? [], locale);
    problems.push(...checked.problems.map((message) => ({ ...where, message })));
    if (!checked.ast) continue;
    const render = handlebars.compile<MessageValues>(checked.ast, {
      strict: true,
      knownHelpersOnly: true,
      knownHelpers: { plural: true, list: true },
      // Plain text: names are inserted as typed, `<b>Ana</b>` stays literal.
      noEscape: true,
    });
    try {
      render(sampleValues); // Handlebars compiles lazily; do it now, at start-up.
      // The same message as a plain function (compileMessage), used only when it renders every
      // cross-check exactly as Handlebars does.
      const plain = compileMessage(checked.ast, helpers);
      const same = plain && crossCheckValues.every((values) => plain(values) === render(values));
      // It stands in for a name, and no name that would show as nothing reaches a message.
      if (key === DELETED_USER_KEY && showsNothing(render(sampleValues)))
        problems.push({ ...where, message: "shows nothing; write this locale's name for a deleted user" });
      compiled.set(key, same ? plain : render);
    } catch (error) {
      problems.push({ ...where, message: `cannot render: ${(error as Error).message}` });
    }
  }
  return compiled;
}

/**
 * Reads, checks and compiles every catalogue once. Problems are collected, not
 * thrown, so `npm run messages:check` can list them all; `createMessageRenderer` throws them.
 */
export function loadCatalogues(options: LoadCataloguesOptions): LoadedCatalogues {
  const shipped = readCatalogueDir(options.shippedDir ?? shippedCataloguesDir);
  const override = options.overrideDir
    ? readCatalogueDir(options.overrideDir, 'TRAY_MESSAGES_DIR')
    : undefined;
  const problems = [...shipped.problems, ...(override?.problems ?? [])];
  const files: CatalogueFile[] = [...shipped.catalogues, ...(override?.catalogues ?? [])];

  // An override file replaces only the messages it has (later files win, key by key).
  const byLocale = new Map<string, LocaleSources>();
  for (const catalogue of files) {
    const locale: LocaleSources = byLocale.get(catalogue.locale) ?? { files: [], entries: new Map() };
    locale.files.push({ file: catalogue.file, variable: catalogue.variable });
    for (const [key, template] of catalogue.messages)
      locale.entries.set(key, { template, file: catalogue.file, variable: catalogue.variable });
    byLocale.set(catalogue.locale, locale);
  }

  const compiled = new Map<string, Map<string, RenderMessage>>();
  for (const [locale, { entries }] of byLocale)
    compiled.set(locale, compileLocale(locale, entries, problems));

  const defaults = byLocale.get(options.defaultLocale);
  if (!defaults) {
    problems.push({
      file: displayPath(options.overrideDir ?? options.shippedDir ?? shippedCataloguesDir),
      message: `no catalogue for the default locale ${options.defaultLocale} (add ${options.defaultLocale}.json)`,
      variable: 'DEFAULT_LOCALE',
    });
  }
  const fallbacks: LoadedCatalogues['fallbacks'] = [];
  for (const key of messageKeys.keys()) {
    for (const [locale, { entries, files: localeFiles }] of byLocale) {
      if (entries.has(key)) continue;
      if (locale !== options.defaultLocale) fallbacks.push({ locale, key });
      else {
        const first = localeFiles[0];
        problems.push({
          file: first?.file ?? '',
          key,
          message: `missing; every message is required in the default locale ${locale}`,
          ...(first?.variable ? { variable: first.variable } : {}),
        });
      }
    }
  }

  const defaultMessages = compiled.get(options.defaultLocale) ?? new Map<string, RenderMessage>();
  const messages = new Map<string, ReadonlyMap<string, RenderMessage>>();
  for (const [locale, own] of compiled) {
    messages.set(locale, new Map([...defaultMessages, ...own]));
  }
  return { messages, problems, fallbacks };
}
