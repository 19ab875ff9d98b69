/**
 * Blocklisted words and their matching mode (docs/operations.md#moderation, `isMatchExactWord`):
 * `exact` matches the word standing alone (Unicode word boundaries), `contains` matches it
 * anywhere inside text ("spam" in "spammer"). Both are case-insensitive.
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
  return word === '' ? undefined : { word, mode: parsed.mode };
}

/** Parses configured entries (parseBlockedWord), skipping those without a word; each word once. */
export function parseBlockedWords(entries: readonly string[], defaultMode: MatchMode): BlockedWord[] {
  const words = new Map<string, BlockedWord>();
  for (const entry of entries) {
    const parsed = parseBlockedWord(entry, defaultMode);
    if (parsed) words.set(`${parsed.mode}:${parsed.word.toLowerCase()}`, parsed);
  }
  return [...words.values()];
}

/**
 * Escapes exactly the characters with a meaning outside a character class. Under the `u` flag an
 * escape of anything else (`\-`, `\#`) is a syntax error, so escaping "too much" is not safe.
 */
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
/** Letters, digits, combining marks and connectors: what a "word" is made of in any script. */
const wordChar = '[\\p{L}\\p{N}\\p{M}\\p{Pc}]';

function alternation(words: readonly BlockedWord[]): string {
  // Longest first, so "spammer" is reported rather than "spam" when both are listed.
  const sorted = [...words].sort((a, b) => b.word.length - a.word.length);
  return sorted.map((w) => escape(w.word)).join('|');
}

/** One blocklisted word found in a text: as listed, and where (offsets into the NFC text, end exclusive). */
export interface BlockedWordMatch {
  word: string;
  /** JavaScript string offsets (UTF-16 code units) into the text normalised to NFC. */
  start: number;
  end: number;
}

/**
 * Compiles the list once into (at most) two regular expressions; returns every match in a text, in
 * the order they occur (the rule tester shows them in place).
 */
export function compileBlockedWordMatcher(
  words: readonly BlockedWord[],
): (text: string) => BlockedWordMatch[] {
  const patterns: RegExp[] = [];
  const exact = words.filter((w) => w.mode === 'exact');
  const contains = words.filter((w) => w.mode === 'contains');
  if (exact.length > 0) {
    patterns.push(new RegExp(`(?<!${wordChar})(?:${alternation(exact)})(?!${wordChar})`, 'giu'));
  }
  if (contains.length > 0) patterns.push(new RegExp(`(?:${alternation(contains)})`, 'giu'));
  // The listed spelling of a match: itself when listed so, else its lowercase (two words such as
  // "K" and the Kelvin sign share one lowercase, and each must still be reported as listed).
  const listed = new Set(words.map((w) => w.word));
  const canonical = new Map(words.map((w) => [w.word.toLowerCase(), w.word]));
  return (text) => {
    const found: BlockedWordMatch[] = [];
    const normalized = text.normalize('NFC');
    for (const pattern of patterns) {
      for (const match of normalized.matchAll(pattern)) {
        const hit = match[0];
        const word = listed.has(hit) ? hit : (canonical.get(hit.toLowerCase()) ?? hit);
        found.push({ word, start: match.index, end: match.index + hit.length });
      }
    }
    return found.sort((a, b) => a.start - b.start || b.end - a.end);
  };
}

/** Compiles the list once; returns the words found in a text, each once. */
export function compileBlockedWords(words: readonly BlockedWord[]): (text: string) => string[] {
  const match = compileBlockedWordMatcher(words);
  return (text) => [...new Set(match(text).map((found) => found.word))];
}
