import { expect } from 'chai';
import fc from 'fast-check';
import {
  compileBlockedWords,
  parseBlockedWord,
  parseBlockedWords,
} from '../../../tray-service/domain/blocked-words.ts';

/** Any text an operator could list: every code point (astral, combining marks, lone surrogates). */
const anyText = fc.string({ unit: 'binary', minLength: 1, maxLength: 12 });
/** Punctuation and symbols a regular expression gives a meaning to, mixed with letters of several scripts. */
const tricky = fc.string({
  unit: fc.constantFrom(...'-/\\^$.*+?()[]{}|,=#_ aZé漢дع😀\u0301\u200d'.split('')),
  minLength: 1,
  maxLength: 10,
});

describe('blocked words', () => {
  it('read an entry that is only a mode marker as no word, not as a literal "*" or "="', () => {
    for (const entry of ['*', '**', '=', ' * ', '* *', '= ']) {
      expect(parseBlockedWord(entry, 'exact'), JSON.stringify(entry)).to.equal(undefined);
    }
    expect(parseBlockedWords(['*', '**', '=', 'ok'], 'exact')).to.deep.equal([{ word: 'ok', mode: 'exact' }]);
  });

  it('read an entry starting with # as a word (#nsfw), and find it in text', () => {
    expect(parseBlockedWord('#nsfw', 'exact')).to.deep.equal({ word: '#nsfw', mode: 'exact' });
    expect(compileBlockedWords(parseBlockedWords(['#nsfw'], 'exact'))('#nsfw pics')).to.deep.equal(['#nsfw']);
  });

  it('compile a word containing "-" (f-word) and find it in text', () => {
    const find = compileBlockedWords(parseBlockedWords(['f-word', '--', 'a-b-c'], 'exact'));
    expect(find('no f-word here, -- and a-b-c')).to.have.members(['f-word', '--', 'a-b-c']);
  });

  for (const mode of ['exact', 'contains'] as const) {
    it(`in ${mode} mode, any text is a word that compiles and is found standing alone in a text`, () => {
      fc.assert(
        fc.property(fc.array(fc.oneof(anyText, tricky), { minLength: 1, maxLength: 5 }), (entries) => {
          const words = parseBlockedWords(entries, mode);
          const find = compileBlockedWords(words);
          for (const { word } of words) {
            expect(find(`say ${word} now`), JSON.stringify(word)).to.include(word);
          }
        }),
        { numRuns: 500 },
      );
    });
  }
});
