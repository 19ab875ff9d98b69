import type { HelperOptions } from 'handlebars';

/**
 * The CLDR categories (zero, one, two, few, many, other) a locale's rules can choose, e.g.
 * ja: other; ru: one, few, many, other. `{{plural}}` must give a form for each, and no other.
 */
export function pluralCategoriesOf(locale: string): readonly string[] {
  return new Intl.PluralRules(locale).resolvedOptions().pluralCategories;
}

export type MessageHelpers = Record<'plural' | 'list', (...args: unknown[]) => string>;
export const helperNames = ['plural', 'list'] as const;

/**
 * Helpers of one catalogue, bound to that catalogue's locale (so an English fallback message keeps
 * English plural rules inside a German response).
 *
 * - `{{plural others one='# other' other='# others'}}`: the form Intl.PluralRules picks for the
 *   number, with `#` replaced by the number formatted for the locale.
 * - `{{list actor1 actor2}}`: Intl.ListFormat's conjunction, for languages whose "and" depends on the
 *   next word (Spanish "Ana e Inés", "Ana y Hugo").
 */
export function createMessageHelpers(locale: string): MessageHelpers {
  const rules = new Intl.PluralRules(locale);
  const numbers = new Intl.NumberFormat(locale);
  const lists = new Intl.ListFormat(locale, { type: 'conjunction', style: 'long' });
  // A count's plural category and its formatted digits, kept per count: choosing and formatting
  // cost a few microseconds a message, and a tray shows the same few counts again and again.
  const known = new Map<number, { category: string; digits: string }>();
  const describe = (count: number) => {
    let described = known.get(count);
    if (!described) {
      described = { category: rules.select(count), digits: numbers.format(count) };
      if (known.size < 10_000) known.set(count, described);
    }
    return described;
  };
  return {
    plural(...args) {
      const [count, options] = args as [unknown, HelperOptions];
      if (typeof count !== 'number' || !Number.isFinite(count)) {
        throw new TypeError(`{{plural}} expects a number, got ${String(count)}`);
      }
      const forms = options.hash as Record<string, string>;
      const { category, digits } = describe(count);
      const form = forms[category] ?? forms.other ?? '#';
      return form.replaceAll('#', digits);
    },
    list(...args) {
      // Handlebars passes its options object last.
      return lists.format(args.slice(0, -1).map(String));
    },
  };
}
