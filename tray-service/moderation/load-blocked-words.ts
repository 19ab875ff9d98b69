import { readFileSync } from 'node:fs';
import { ConfigError } from '../../shared/errors/config-error.ts';
import { parseBlockedWords, type BlockedWord, type MatchMode } from './blocked-words.ts';

/** Reads MODERATION_WORDS (comma list) and MODERATION_WORDS_FILE (one per line) once at start-up. */
export function loadBlockedWords(options: { words?: string; file?: string; mode: MatchMode }): BlockedWord[] {
  const entries = options.words ? options.words.split(',') : [];
  if (options.file) {
    let text: string;
    try {
      text = readFileSync(options.file, 'utf8');
    } catch (error) {
      // A ConfigError, so start-up stops with one line naming the variable (shared/config/load-or-exit.ts).
      const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new ConfigError([
        { variable: 'MODERATION_WORDS_FILE', message: `cannot read ${options.file} (${reason})` },
      ]);
    }
    entries.push(...text.split(/\r?\n/));
  }
  return parseBlockedWords(entries, options.mode);
}
