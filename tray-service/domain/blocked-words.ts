import { INVISIBLE_CHARACTERS } from './invisible-characters.ts';

/**
 * Blocklisted words and their matching mode (docs/operations.md#moderation, `isMatchExactWord`):
 * `exact` matches the word standing alone (Unicode word boundaries), `contains` matches it
 * anywhere inside text ("spam" in "spammer"). Both are case-insensitive by full case folding
 * (foldCase: `straße` matches `STRASSE`), which a regular expression's `i` flag does not do, and
 * blind to the two cheapest disguises: invisible format characters inside a word (`s\u200bpam`)
 * and compatibility forms of its letters (fullwidth `ｓｐａｍ`, mathematical `𝐬𝐩𝐚𝐦`).
 */
export type MatchMode = 'exact' | 'contains';

export interface BlockedWord {
  word: string;
  mode: MatchMode;
}

/**
 * Parses one configured entry: `word` takes the default mode, `*word*` always matches anywhere
 * inside text, `=word` always matches whole words only. Undefined when there is no word: a blank
 * entry, or one that is only a marker (`*`, `**`, `=`, `* *`), which is a typo rather than a word
 * (the loader refuses it). `#` means nothing here: only the words file has comments, so `#nsfw`
 * in MODERATION_WORDS is a word (tray-service/moderation/load-blocked-words.ts).
 */
export function parseBlockedWord(raw: string, defaultMode: MatchMode): BlockedWord | undefined {
  const entry = raw.trim();
  let parsed: BlockedWord;
  if (entry.startsWith('*') && entry.endsWith('*')) {
    // `*` alone starts and ends with the marker too: slice(1, -1) leaves it no word.
    parsed = { word: entry.slice(1, -1), mode: 'contains' };
  } else if (entry.startsWith('=')) {
    parsed = { word: entry.slice(1), mode: 'exact' };
  } else {
    parsed = { word: entry, mode: defaultMode };
  }
  const word = parsed.word.trim().normalize('NFC');
  // A word of invisible characters only would fold to nothing, and match between any two.
  return foldCase(word) === '' ? undefined : { word, mode: parsed.mode };
}

/** Parses configured entries (parseBlockedWord), skipping those without a word; each word once. */
export function parseBlockedWords(entries: readonly string[], defaultMode: MatchMode): BlockedWord[] {
  const words = new Map<string, BlockedWord>();
  for (const entry of entries) {
    const parsed = parseBlockedWord(entry, defaultMode);
    if (parsed) words.set(`${parsed.mode}:${foldCase(parsed.word)}`, parsed);
  }
  return [...words.values()];
}

/** A text folded (foldCase), and for each UTF-16 unit of the fold the span of `text` it came from. */
interface FoldedText {
  folded: string;
  /** Offsets into the NFC text; undefined when the fold maps unit to unit (ASCII text). */
  starts?: number[];
  ends?: number[];
  /**
   * The fold with what symbols folded to abbreviations blanked (spaces), unit for unit; undefined
   * when none did. Compatibility folding makes letters of some symbols (`™` is `tm`, `㎡` is `m2`):
   * in the fold a symbol after a word joins it, and exact mode looks for words standing alone here
   * too.
   */
  symbolsBlanked?: string;
}

/** Letters, digits, combining marks and connectors: what a "word" is made of in any script. */
const wordChar = '[\\p{L}\\p{N}\\p{M}\\p{Pc}]';
const startsWithWordChar = new RegExp(`^${wordChar}`, 'u');
const hasWordChar = new RegExp(wordChar, 'u');

/** A base character with the combining marks that follow it (or marks with no base, at the start). */
const piece = /\P{M}\p{M}*|\p{M}+/gsu;
const ascii = /^\p{ASCII}*$/u;

/**
 * Full case folding of one piece: lower, upper, then lower case turns `ß` and `ẞ` into `ss` and `ǅ`
 * into `ǆ`, as Unicode's full case folding does and the `i` flag (simple folding) does not (the
 * first lowering is for `ẞ`, whose upper case is itself). Two letters need
 * help: the capital dotted İ lowers to `i` plus a combining dot, which no listed `i` would match
 * (Unicode's Turkic folding makes it `i`, and so `i` plus that dot, the way its lower case is
 * written), and a final sigma `ς` is `σ` wherever it stands. NFC
 * again, as upper-casing can decompose (`ΐ`). Pieces keep a letter and its marks together, so NFC
 * never joins across two of them and the fold of a text is the concatenation of its pieces' folds
 * (but for compatibility forms that compose with the character before them: foldWithSpans).
 * Format characters (zero-width space and joiners, soft hyphen, bidi marks) and the other
 * default-ignorable characters (variation selectors, the combining grapheme joiner) are dropped,
 * and compatibility forms folded (NFKC), so a word cannot hide behind them.
 */
function foldPiece(text: string): string {
  return (
    text
      .replace(invisible, '')
      // First: a compatibility form may fold to a capital (black-letter `ℌ` is `H`).
      .normalize('NFKC')
      .replaceAll('\u0130', 'I')
      .replaceAll('i\u0307', 'i')
      // The dotless ı folds to itself: through the chain its upper case `I` would lower to `i`.
      .split('\u0131')
      .map((part) => part.toLowerCase().toUpperCase().toLowerCase())
      .join('\u0131')
      .replaceAll('\u03c2', '\u03c3')
      .normalize('NFC')
  );
}

// Dropped: a variation selector says how to draw a character, not which (an emoji's U+FE0F would
// otherwise read as a letter of the listed word it follows), and the invisible marks (the combining
// grapheme joiner, the Mongolian and Khmer ones) would read as letters of the word they sit in.
const invisible = new RegExp(`[${INVISIBLE_CHARACTERS}]`, 'gu');

/**
 * A fold that starts with what composes with the character before it: a combining mark that came
 * from no mark (a halfwidth sound mark, `ﾞ`, is a letter modifier that NFKC makes the combining
 * U+3099), or a Hangul vowel or final jamo (compatibility jamo `ㅏ` become conjoining ones).
 */
const composesBackwards = /^[\p{M}\u1160-\u11FF\uD7B0-\uD7FF]/u;
/** Pieces folded as one at most this long: a composition spans a few characters. */
const MAX_COMPOSED = 16;

/**
 * The Hangul fillers: default-ignorable, and dropped inside a word (`spa\u3164m` is `spam`), yet
 * most fonts draw them as a blank. Exact mode also reads them as spaces: `buy\u3164spam\u3164now`
 * shows `spam` standing alone.
 */
const hangulFiller = /[\u115F\u1160\u3164\uFFA0]/u;

function foldWithSpans(nfc: string, fillersAsSpaces = false): FoldedText {
  if (ascii.test(nfc)) return { folded: nfc.toLowerCase() };
  /** The folds, one per piece or per pieces folded together; joined once at the end. */
  const parts: string[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  /** Whether each part is a symbol's (a piece whose base is no word character) folded to an abbreviation. */
  const fromSymbol: boolean[] = [];
  /** The last piece(s) with a visible fold: their text, where they start, their first unit. */
  let previous: { text: string; start: number; unit: number } | undefined;
  for (const match of nfc.matchAll(piece)) {
    let part = fillersAsSpaces && hangulFiller.test(match[0][0] ?? '') ? ' ' : foldPiece(match[0]);
    if (part === '') continue;
    let start = match.index;
    // Folded piece by piece, a character that composes with the one before it would stay apart
    // (`ｶﾞ` gave カ and a lone sound mark, not ガ): such pieces are folded again together, in
    // place of the previous part (never a copy of the text folded so far: a long run of them
    // would take quadratic time).
    if (previous && previous.text.length < MAX_COMPOSED && composesBackwards.test(part)) {
      const text = previous.text + match[0];
      part = foldPiece(text);
      start = previous.start;
      parts.pop();
      fromSymbol.pop();
      starts.length = previous.unit;
      ends.length = previous.unit;
      previous = { text, start, unit: previous.unit };
    } else previous = { text: match[0], start, unit: starts.length };
    parts.push(part);
    // Only a symbol folded to an abbreviation of letters (`™` is `tm`, `㎡` is `m2`): one folded to a
    // single letter is that letter written as a symbol (circled `Ⓢ`), part of the word it is in.
    fromSymbol.push(
      !startsWithWordChar.test(previous.text) && hasWordChar.test(part) && [...part].length > 1,
    );
    for (let unit = 0; unit < part.length; unit++) {
      starts.push(start);
      ends.push(match.index + match[0].length);
    }
  }
  const folded = parts.join('');
  if (!fromSymbol.includes(true)) return { folded, starts, ends };
  const symbolsBlanked = parts.map((part, index) => (fromSymbol[index] ? ' '.repeat(part.length) : part));
  return { folded, starts, ends, symbolsBlanked: symbolsBlanked.join('') };
}

/** How blocklisted words and texts are compared: both are folded so, then matched exactly. */
export function foldCase(text: string): string {
  return foldWithSpans(text.normalize('NFC')).folded;
}

/**
 * Escapes exactly the characters with a meaning outside a character class. Under the `u` flag an
 * escape of anything else (`\-`, `\#`) is a syntax error, so escaping "too much" is not safe.
 */
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Folded words, longest first, so "spammer" is reported rather than "spam" when both are listed. */
function alternation(folds: readonly string[]): string {
  return [...folds]
    .sort((a, b) => b.length - a.length)
    .map(escape)
    .join('|');
}

/** One blocklisted word found in a text: as listed, and where (offsets into the NFC text, end exclusive). */
export interface BlockedWordMatch {
  word: string;
  /** JavaScript string offsets (UTF-16 code units) into the text normalised to NFC. */
  start: number;
  end: number;
}

interface ModePattern {
  pattern: RegExp;
  /** Exact mode: also run on the fold with symbols blanked (FoldedText.symbolsBlanked). */
  exact: boolean;
  /** The listed spelling of each folded word of this mode (parseBlockedWords keeps one per fold). */
  listed: Map<string, string>;
}

function modePattern(words: readonly BlockedWord[], exact: boolean): ModePattern | undefined {
  if (words.length === 0) return undefined;
  const listed = new Map(words.map((w) => [foldCase(w.word), w.word]));
  const alternatives = alternation([...listed.keys()]);
  // No `i` flag: the text is folded as the words are, so a hit is exactly one word's fold.
  const source = exact ? `(?<!${wordChar})(?:${alternatives})(?!${wordChar})` : `(?:${alternatives})`;
  return { pattern: new RegExp(source, 'gu'), exact, listed };
}

/**
 * Compiles the list once into (at most) two regular expressions; returns every match in a text, in
 * the order they occur (the rule tester shows them in place). Matching runs on the folded text;
 * each match is reported with the listed spelling and the span of the NFC text it folded from.
 */
export function compileBlockedWordMatcher(
  words: readonly BlockedWord[],
): (text: string) => BlockedWordMatch[] {
  const patterns = [
    modePattern(
      words.filter((w) => w.mode === 'exact'),
      true,
    ),
    modePattern(
      words.filter((w) => w.mode === 'contains'),
      false,
    ),
  ].filter((p): p is ModePattern => p !== undefined);
  return (text) => {
    if (patterns.length === 0) return [];
    const found = new Map<string, BlockedWordMatch>();
    const nfc = text.normalize('NFC');
    const fold = foldWithSpans(nfc);
    /** The folds exact mode searches too (symbols blanked, fillers as spaces), each with its spans. */
    const exactFolds: { searched: string; starts?: number[]; ends?: number[] }[] = [];
    if (fold.symbolsBlanked !== undefined) exactFolds.push({ ...fold, searched: fold.symbolsBlanked });
    if (patterns.some((p) => p.exact) && hangulFiller.test(nfc)) {
      const spaced = foldWithSpans(nfc, true);
      exactFolds.push({ ...spaced, searched: spaced.folded });
      if (spaced.symbolsBlanked !== undefined)
        exactFolds.push({ ...spaced, searched: spaced.symbolsBlanked });
    }
    for (const { pattern, exact, listed } of patterns) {
      // Letters written as symbols (`Ⓢⓟⓐⓜ`) are found in the fold, a word beside a symbol that
      // folds to letters (`scam™`) with that symbol blanked: each hit once.
      const texts = [{ ...fold, searched: fold.folded }, ...(exact ? exactFolds : [])];
      for (const { searched, starts, ends } of texts) {
        pattern.lastIndex = 0;
        for (let match = pattern.exec(searched); match !== null; match = pattern.exec(searched)) {
          // Words overlapping this one are matches too ("ab" and "bc" in "abc"): the search goes
          // on from the next character after this match's start, not after its end.
          pattern.lastIndex = match.index + ((searched.codePointAt(match.index) ?? 0) > 0xffff ? 2 : 1);
          const hit = match[0];
          const last = match.index + hit.length - 1;
          const one = {
            word: listed.get(hit) ?? hit,
            start: starts?.[match.index] ?? match.index,
            end: ends?.[last] ?? last + 1,
          };
          found.set(`${one.start}:${one.end}:${one.word}`, one);
        }
      }
    }
    // A word over itself ("aa" in "aaaa") is found at every start: its matches one after another.
    const lastEnds = new Map<string, number>();
    return [...found.values()]
      .sort((a, b) => a.start - b.start || b.end - a.end)
      .filter((match) => {
        if (match.start < (lastEnds.get(match.word) ?? 0)) return false;
        lastEnds.set(match.word, match.end);
        return true;
      });
  };
}

/** Compiles the list once; returns the words found in a text, each once. */
export function compileBlockedWords(words: readonly BlockedWord[]): (text: string) => string[] {
  const match = compileBlockedWordMatcher(words);
  return (text) => [...new Set(match(text).map((found) => found.word))];
}
