import {
  compileBlockedWordMatcher,
  type BlockedWord,
  type BlockedWordMatch,
} from '../domain/blocked-words.ts';
import type { ModerationAction } from '../domain/moderation-action.ts';

export interface RuleTest {
  rule: 'blocked-words';
  /** What the rule would decide about a post or comment with this text: `flag` on a match, else null. */
  action: Extract<ModerationAction, 'flag'> | null;
  matches: BlockedWordMatch[];
}

/**
 * The moderation rule tester (POST /admin/moderation/test): the built-in blocked-words rule, with
 * the running instance's list (MODERATION_WORDS, MODERATION_WORDS_FILE), applied to a text without
 * storing or deciding anything.
 */
export function createBlockedWordsTest(words: readonly BlockedWord[]): (text: string) => RuleTest {
  const match = compileBlockedWordMatcher(words);
  return (text) => {
    const matches = match(text);
    return { rule: 'blocked-words', action: matches.length > 0 ? 'flag' : null, matches };
  };
}
