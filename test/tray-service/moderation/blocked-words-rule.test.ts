import { expect } from 'chai';
import { compileBlockedWords, parseBlockedWords } from '../../../tray-service/domain/blocked-words.ts';
import { createBlockedWordsRule } from '../../../tray-service/moderation/blocked-words-rule.ts';
import { eventDoc } from '../admin/admin-fixtures.ts';

const post = (text: string) =>
  eventDoc({
    event: 'post.didCreate',
    data: { post: { postId: 'p-1', postedUserId: 'u-ana', text, targetType: 'community', targetId: 'c-1' } },
  });
const comment = (text: string) =>
  eventDoc({
    event: 'comment.didCreate',
    data: {
      comment: { commentId: 'cm-7', userId: 'u-cid', referenceId: 'p-1', text },
      post: { postId: 'p-1', postedUserId: 'u-ana', text: 'spam in the post' },
    },
  });

describe('blocked-words moderation rule', () => {
  describe('in exact-word mode (isMatchExactWord true)', () => {
    const find = compileBlockedWords(parseBlockedWords(['spam', 'über', 'дурак'], 'exact'));
    const cases: [string, string[]][] = [
      ['this is spam', ['spam']],
      ['SPAM!', ['spam']],
      ['(spam), spam.', ['spam']],
      ['spammer and antispam', []],
      ['spam_bot', []],
      ['Über alles', ['über']],
      ['Überall', []],
      ['ты ДУРАК?', ['дурак']],
      ['дураки', []],
      ['spam2', []],
      // A decomposed "ü" (u + combining diaeresis) is the same word once normalised.
      ['u\u0308ber', ['über']],
    ];
    for (const [text, expected] of cases) {
      it(`finds ${JSON.stringify(expected)} in ${JSON.stringify(text)}`, () => {
        expect(find(text)).to.deep.equal(expected);
      });
    }
  });

  describe('in anywhere-in-text mode (isMatchExactWord false)', () => {
    const find = compileBlockedWords(parseBlockedWords(['spam', 'über'], 'contains'));
    const cases: [string, string[]][] = [
      ['this is spam', ['spam']],
      ['spammer and antispam', ['spam']],
      ['Überall', ['über']],
      ['nothing here', []],
    ];
    for (const [text, expected] of cases) {
      it(`finds ${JSON.stringify(expected)} in ${JSON.stringify(text)}`, () => {
        expect(find(text)).to.deep.equal(expected);
      });
    }
  });

  describe('with per-word modes', () => {
    it('`*word*` matches inside text and `=word` only whole words, whatever the default', () => {
      const words = parseBlockedWords(['*scam*', '=spam', 'junk'], 'contains');
      expect(words).to.deep.equal([
        { word: 'scam', mode: 'contains' },
        { word: 'spam', mode: 'exact' },
        { word: 'junk', mode: 'contains' },
      ]);
      const find = compileBlockedWords(words);
      expect(find('scammer spammer junkyard')).to.have.members(['junk', 'scam']);
    });
    it('treats regular-expression characters literally', () => {
      const find = compileBlockedWords(parseBlockedWords(['a.b', 'c++'], 'contains'));
      expect(find('axb c+')).to.deep.equal([]);
      expect(find('a.b c++')).to.have.members(['a.b', 'c++']);
    });
    it("skips blank entries; an entry starting with # is a word (comments are the file loader's)", () => {
      expect(parseBlockedWords(['', '  ', '#nsfw', 'ok'], 'exact')).to.deep.equal([
        { word: '#nsfw', mode: 'exact' },
        { word: 'ok', mode: 'exact' },
      ]);
    });
  });

  describe('as a rule', () => {
    const rule = createBlockedWordsRule(parseBlockedWords(['spam', 'scam'], 'exact'));

    it('flags a post with its author and the words found', () => {
      expect(rule.evaluate(post('Buy spam, no scam'))).to.deep.equal([
        {
          action: 'flag',
          reason: 'blocklisted words: "spam", "scam"',
          subject: { type: 'post', id: 'p-1' },
          userId: 'u-ana',
        },
      ]);
    });
    it('flags a comment by its own text, not the quoted post', () => {
      expect(rule.evaluate(comment('more spam'))).to.deep.equal([
        {
          action: 'flag',
          reason: 'blocklisted word: "spam"',
          subject: { type: 'comment', id: 'cm-7' },
          userId: 'u-cid',
        },
      ]);
      expect(rule.evaluate(comment('all fine'))).to.deep.equal([]);
    });
    it('decides nothing about clean text, other events, or payloads without text', () => {
      expect(rule.evaluate(post('a clean post'))).to.deep.equal([]);
      expect(
        rule.evaluate(eventDoc({ event: 'reaction.didAdd', data: { post: { postId: 'p', text: 'spam' } } })),
      ).to.deep.equal([]);
      expect(rule.evaluate(eventDoc({ event: 'post.didCreate', data: { post: 'spam' } }))).to.deep.equal([]);
    });
    // Another sender's body (a foreign event) is not trusted to say who wrote it: its decision
    // named whichever user the body gave, signed and delivered to the moderation team and listed
    // under that user, as if the platform had said so.
    it('flags another sender’s (foreign) post or comment without naming a user', () => {
      expect(rule.evaluate({ ...comment('more spam'), status: 'foreign' })).to.deep.equal([
        { action: 'flag', reason: 'blocklisted word: "spam"', subject: { type: 'comment', id: 'cm-7' } },
      ]);
      expect(rule.evaluate({ ...post('spam'), status: 'foreign' })).to.deep.equal([
        { action: 'flag', reason: 'blocklisted word: "spam"', subject: { type: 'post', id: 'p-1' } },
      ]);
    });
    it('with no words configured decides nothing', () => {
      expect(createBlockedWordsRule([]).evaluate(post('spam'))).to.deep.equal([]);
    });
  });
});
