import { readFileSync } from 'node:fs';
import { ConfigError } from '../../shared/errors/config-error.ts';
import {
  compileBlockedWords,
  parseBlockedWord,
  parseBlockedWords,
  type BlockedWord,
  type MatchMode,
} from '../domain/blocked-words.ts';

const refuse = (variable: string, message: string): never => {
  // A ConfigError, so start-up stops with one line naming the variable (shared/config/load-or-exit.ts).
  throw new ConfigError([{ variable, message }]);
};

/**
 * Checks MODERATION_WORDS entry by entry: an empty one (`spam,,eggs`, a trailing comma) or one that
 * is only a mode marker (`*`, `**`, `=`, `* *`) is a typo, not a word, and is refused rather than
 * silently dropped or taken literally. The list has no comments: `#nsfw` is a word.
 */
function checkListEntries(entries: readonly string[], mode: MatchMode): void {
  entries.forEach((entry, index) => {
    if (entry.trim() === '') refuse('MODERATION_WORDS', `entry ${index + 1} is empty (two commas in a row?)`);
    if (parseBlockedWord(entry, mode) === undefined) {
      refuse(
        'MODERATION_WORDS',
        `entry ${index + 1} has no word (only a * or = marker, or invisible characters)`,
      );
    }
  });
}

/**
 * The entries of MODERATION_WORDS_FILE: blank lines and lines starting with `#` are layout; a line
 * that is only a mode marker is refused, naming file and line, as in the list.
 */
function fileEntries(file: string, text: string, mode: MatchMode): string[] {
  const entries: string[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    const entry = line.trim();
    if (entry === '' || entry.startsWith('#')) return;
    if (parseBlockedWord(entry, mode) === undefined) {
      refuse(
        'MODERATION_WORDS_FILE',
        `${file}:${index + 1}: no word (only a * or = marker, or invisible characters)`,
      );
    }
    entries.push(entry);
  });
  return entries;
}

/**
 * Reads MODERATION_WORDS (comma list) and MODERATION_WORDS_FILE (one per line; blank lines and `#`
 * comments are layout) once at start-up, and compiles them here, before anything connects, so a
 * list that cannot be used stops start-up with one line instead of failing later.
 */
export function loadBlockedWords(options: { words?: string; file?: string; mode: MatchMode }): BlockedWord[] {
  const entries = options.words === undefined ? [] : options.words.split(',');
  checkListEntries(entries, options.mode);
  if (options.file) {
    let text = '';
    try {
      text = readFileSync(options.file, 'utf8');
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      refuse('MODERATION_WORDS_FILE', `cannot read ${options.file} (${reason})`);
    }
    entries.push(...fileEntries(options.file, text, options.mode));
  }
  const words = parseBlockedWords(entries, options.mode);
  try {
    compileBlockedWords(words);
  } catch (error) {
    // Every text is a valid word (blocked-words.ts escapes it); kept as a last line of defence.
    refuse(options.file ? 'MODERATION_WORDS_FILE' : 'MODERATION_WORDS', (error as Error).message);
  }
  return words;
}
