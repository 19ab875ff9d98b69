import { readFileSync } from 'node:fs';
import { parseBlockedWords, type BlockedWord, type MatchMode } from './blocked-words.ts';

/** Reads MODERATION_WORDS (comma list) and MODERATION_WORDS_FILE (one per line) once at start-up. */
export function loadBlockedWords(options: { words?: string; file?: string; mode: MatchMode }): BlockedWord[] {
  const entries = options.words ? options.words.split(',') : [];
  if (options.file) {
    let text: string;
    try {
      text = readFileSync(options.file, 'utf8');
    } catch (error) {
      throw new Error(`MODERATION_WORDS_FILE: cannot read ${options.file}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    entries.push(...text.split(/\r?\n/));
  }
  return parseBlockedWords(entries, options.mode);
}
