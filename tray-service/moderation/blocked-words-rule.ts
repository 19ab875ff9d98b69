import type { StoredEvent } from '../domain/stored-event.ts';
import { compileBlockedWords, type BlockedWord } from '../domain/blocked-words.ts';
import type { ModerationDecision, ModerationRule } from '../domain/moderation-rule.ts';

interface TextContent {
  type: 'post' | 'comment';
  id: string;
  text: string;
  userId?: string;
}

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * The text an event carries (docs/contract.md#event-catalogue): a post's text in `post.*` events, a comment's in
 * `comment.*` events. Other events quote content only as references, so judging them would flag
 * the same post again for every reaction to it. Another sender's (`foreign`) body is judged too,
 * but not trusted to say who wrote it: its author is left out, as the stored event leaves it.
 */
export function contentOf(event: StoredEvent): TextContent[] {
  const [resource] = event.event.split('.');
  const author = (value: unknown) => (event.status === 'foreign' ? undefined : text(value));
  if (resource === 'post') {
    const post = record(event.data.post);
    const id = text(post?.postId);
    const body = text(post?.text);
    if (id && body) return [{ type: 'post', id, text: body, userId: author(post?.postedUserId) }];
  }
  if (resource === 'comment') {
    const comment = record(event.data.comment);
    const id = text(comment?.commentId);
    const body = text(comment?.text);
    if (id && body) return [{ type: 'comment', id, text: body, userId: author(comment?.userId) }];
  }
  return [];
}

/** Built-in rule: flags posts and comments containing blocklisted words. */
export function createBlockedWordsRule(words: readonly BlockedWord[]): ModerationRule {
  const find = compileBlockedWords(words);
  return {
    name: 'blocked-words',
    evaluate(event) {
      if (words.length === 0) return [];
      const decisions: ModerationDecision[] = [];
      for (const content of contentOf(event)) {
        const found = find(content.text);
        if (found.length === 0) continue;
        decisions.push({
          action: 'flag',
          reason: `blocklisted ${found.length === 1 ? 'word' : 'words'}: ${found.map((w) => `"${w}"`).join(', ')}`,
          subject: { type: content.type, id: content.id },
          ...(content.userId === undefined ? {} : { userId: content.userId }),
        });
      }
      return decisions;
    },
  };
}
