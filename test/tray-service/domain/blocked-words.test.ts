import { expect } from 'chai';
import fc from 'fast-check';
import {
  type BlockedWord,
  compileBlockedWordMatcher,
  compileBlockedWords,
  foldCase,
  parseBlockedWord,
  parseBlockedWords,
} from '../../../tray-service/domain/blocked-words.ts';

/**
 * Generated cases per property and mode. Each exact-mode case compiles new regular expressions
 * whose word boundaries are large Unicode classes (about a millisecond each): 500 of them took 5 s
 * here and passed the 20 s test limit on a loaded CI machine. Folding, the part any text can
 * break, runs on every case of both modes, so contains mode keeps the many cases.
 */
const runs = (mode: 'exact' | 'contains', contains: number) => (mode === 'exact' ? 150 : contains);

/** Any text an operator could list: every code point (astral, combining marks, lone surrogates). */
const anyText = fc.string({ unit: 'binary', minLength: 1, maxLength: 12 });
/** Punctuation and symbols a regular expression gives a meaning to, mixed with letters of several scripts. */
const tricky = fc.string({
  unit: fc.constantFrom(...'-/\\^$.*+?()[]{}|,=#_ aZé漢дع😀\u0301\u200d'.split('')),
  minLength: 1,
  maxLength: 10,
});

/**
 * Whether `word`, written as `written` in `say ${written} now`, is found there: on its own (a list of
 * that word only), and among the whole list as itself or as another listed word over some of it
 * (matches do not overlap: with ` $` listed too, `say $- now` reports ` $` rather than `$-`).
 */
function foundIn(words: readonly BlockedWord[], word: string, written: string): boolean {
  const text = `say ${written} now`;
  const alone = compileBlockedWordMatcher(words.filter((listed) => listed.word === word))(text);
  const start = 'say '.length;
  const end = start + written.normalize('NFC').length;
  const among = compileBlockedWordMatcher(words)(text);
  return (
    alone.some((match) => match.word === word) &&
    among.some((match) => match.word === word || (match.start < end && match.end > start))
  );
}

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
          for (const { word } of words)
            expect(foundIn(words, word, word), JSON.stringify(word)).to.equal(true);
        }),
        { numRuns: runs(mode, 500) },
      );
    });
  }

  describe('match case-insensitively by full case folding, reporting the listed spelling', () => {
    const find = (listed: string[], text: string, mode: 'exact' | 'contains' = 'exact') =>
      compileBlockedWords(parseBlockedWords(listed, mode))(text);

    it('straße matches STRASSE, Strasse and STRAẞE, as straße', () => {
      for (const text of ['STRASSE', 'Strasse', 'STRAẞE', 'die strasse.']) {
        expect(find(['straße'], text), text).to.deep.equal(['straße']);
      }
      expect(find(['STRASSE'], 'straße')).to.deep.equal(['STRASSE']);
    });

    // `i̇` (i and a combining dot above) is how İ is written in lower case.
    it('İ matches i̇, its lower case, as it matches i', () => {
      expect(find(['İ'], 'say i\u0307 now')).to.deep.equal(['İ']);
      expect(find(['i\u0307'], 'say İ and i now')).to.deep.equal(['i\u0307']);
    });

    it('istanbul matches İSTANBUL and ISTANBUL', () => {
      expect(find(['istanbul'], 'İSTANBUL')).to.deep.equal(['istanbul']);
      expect(find(['istanbul'], 'ISTANBUL')).to.deep.equal(['istanbul']);
    });

    // The variation selector U+FE0F (emoji presentation) is a mark: after a listed emoji it read
    // as a letter of the same word, so a listed ❤ missed the usual "I ❤️ u", and a listed ❤️ missed
    // a plain ❤. It says how to draw the character, not which: dropped, as format characters are.
    it('matches an emoji with or without its variation selector, either way round', () => {
      expect(find(['❤'], 'I ❤\uFE0F u')).to.deep.equal(['❤']);
      expect(find(['❤\uFE0F'], 'I ❤ u')).to.deep.equal(['❤\uFE0F']);
      expect(find(['❤'], 'I\u00A0❤\uFE0F\uD83D\uDE00')).to.deep.equal(['❤']);
      expect(find(['❤'], 'I ❤\u0301 u')).to.deep.equal([]);
    });

    // The lower-upper-lower chain turned the dotless ı into i (its upper case is I), which
    // Unicode's folding keeps as it is: the everyday Turkish "sık" (often) was flagged for "sik".
    it('keeps the dotless ı apart from i, as Unicode case folding does', () => {
      expect(find(['sik'], 'sık sık gelir')).to.deep.equal([]);
      expect(find(['sık'], 'sik')).to.deep.equal([]);
      expect(find(['sık'], 'SıK')).to.deep.equal(['sık']);
      expect(find(['sik'], 'SIK')).to.deep.equal(['sik']);
    });

    it('ΣΟΦΟΣ matches σοφοσ and σοφος, reported as listed', () => {
      expect(find(['ΣΟΦΟΣ'], 'σοφοσ')).to.deep.equal(['ΣΟΦΟΣ']);
      expect(find(['ΣΟΦΟΣ'], 'ο σοφος είπε')).to.deep.equal(['ΣΟΦΟΣ']);
      expect(find(['σοφος'], 'ΣΟΦΟΣ')).to.deep.equal(['σοφος']);
      expect(find(['σοφοσ'], 'σοφοσμ', 'contains')).to.deep.equal(['σοφοσ']);
    });

    it('keeps Unicode word boundaries in exact mode', () => {
      expect(find(['straße'], 'STRASSENBAHN')).to.deep.equal([]);
      expect(find(['über'], 'Überall ÜBER')).to.deep.equal(['über']);
      expect(find(['дурак'], 'дураки')).to.deep.equal([]);
    });

    // Compatibility folding makes letters of some symbols (™ is "tm", ㎡ "m2"): a symbol after a
    // word joined it, and `scam™` was not the word `scam` standing alone.
    it('takes a symbol beside a word as a boundary, whatever letters it folds to', () => {
      expect(find(['scam'], 'scam™')).to.deep.equal(['scam']);
      expect(find(['scam'], 'a Scam℠ here')).to.deep.equal(['scam']);
      expect(find(['spam'], 'spam㎡')).to.deep.equal(['spam']);
      expect(compileBlockedWordMatcher(parseBlockedWords(['scam'], 'exact'))('scam™')).to.deep.equal([
        { word: 'scam', start: 0, end: 4 },
      ]);
      // Letters still join it, whatever their form; and letters written as symbols still match.
      expect(find(['scam'], 'scamtm')).to.deep.equal([]);
      expect(find(['scam'], 'scamｔｍ')).to.deep.equal([]);
      expect(find(['spam'], 'buy Ⓢⓟⓐⓜ now')).to.deep.equal(['spam']);
      expect(find(['spam'], 'buy spⓐm now')).to.deep.equal(['spam']);
      // A letter written as a symbol is a letter of the word it is in, not a boundary.
      expect(find(['hell'], 'Ⓢhell')).to.deep.equal([]);
      expect(find(['spam'], 'spamⓜer')).to.deep.equal([]);
    });

    // A search went on after each match's end, so a listed word overlapping the one found before
    // it was never reported: the decision's reason and the rule tester named only the first.
    it('reports every listed word in the text, also one overlapping another', () => {
      const contains = compileBlockedWordMatcher(parseBlockedWords(['*ab*', '*bc*'], 'exact'));
      expect(contains('abc')).to.deep.equal([
        { word: 'ab', start: 0, end: 2 },
        { word: 'bc', start: 1, end: 3 },
      ]);
      const exact = compileBlockedWordMatcher(parseBlockedWords(['new york', 'york city'], 'exact'));
      expect(exact('in New York City')).to.deep.equal([
        { word: 'new york', start: 3, end: 11 },
        { word: 'york city', start: 7, end: 16 },
      ]);
      // Past a character outside the BMP (two code units), the search goes on from a whole one.
      expect(contains('😀abc')).to.deep.equal([
        { word: 'ab', start: 2, end: 4 },
        { word: 'bc', start: 3, end: 5 },
      ]);
      // A word overlapping itself is reported one match after another, as before.
      expect(compileBlockedWordMatcher(parseBlockedWords(['*aa*'], 'exact'))('aaaaa')).to.deep.equal([
        { word: 'aa', start: 0, end: 2 },
        { word: 'aa', start: 2, end: 4 },
      ]);
      // At one place, the longest listed word only: "spammer", not the "spam" it starts with.
      const longest = compileBlockedWordMatcher(parseBlockedWords(['*spam*', '*spammer*'], 'exact'));
      expect(longest('spammers')).to.deep.equal([{ word: 'spammer', start: 0, end: 7 }]);
    });

    it('gives offsets into the NFC text, spanning the characters that folded into the match', () => {
      const match = compileBlockedWordMatcher(parseBlockedWords(['straße', '*ss*', 'istanbul'], 'exact'));
      expect(match('Die STRASSE, İSTANBUL')).to.deep.equal([
        { word: 'straße', start: 4, end: 11 },
        { word: 'ss', start: 8, end: 10 },
        { word: 'istanbul', start: 13, end: 21 },
      ]);
      // ß folds to "ss": a match of its fold covers ß itself.
      expect(compileBlockedWordMatcher(parseBlockedWords(['*ss*'], 'exact'))('Maß')).to.deep.equal([
        { word: 'ss', start: 2, end: 3 },
      ]);
    });

    // The cheapest disguises: a word broken by an invisible character, or written in look-alike
    // compatibility forms of its own letters.
    it('sees through format characters inside a word and compatibility forms of its letters', () => {
      for (const mode of ['exact', 'contains'] as const) {
        for (const text of [
          's\u200bpam',
          'sp\u00adam',
          's\u2060p\u200da\u200cm',
          'ｓｐａｍ',
          'ＳＰＡＭ',
          '𝐬𝐩𝐚𝐦',
          'ｓ\u200bｐam',
        ]) {
          expect(find(['spam'], `buy ${text} now`, mode), `${mode}: ${JSON.stringify(text)}`).to.deep.equal([
            'spam',
          ]);
        }
      }
      // Listed in such a form, a word matches its plain spelling too; a black-letter capital folds
      // to its letter's case-folded form.
      expect(find(['ｓｐａｍ'], 'SPAM')).to.deep.equal(['ｓｐａｍ']);
      expect(find(['hello'], 'ℌello')).to.deep.equal(['hello']);
      // Still whole words in exact mode, and the span covers the hidden characters.
      expect(find(['spam'], 'spam\u200bmer')).to.deep.equal([]);
      expect(compileBlockedWordMatcher(parseBlockedWords(['spam'], 'exact'))('a s\u200bpam')).to.deep.equal([
        { word: 'spam', start: 2, end: 7 },
      ]);
      // A word of invisible characters only is no word.
      expect(parseBlockedWord('\u200b\u200d', 'exact')).to.equal(undefined);
    });

    // Halfwidth katakana write a voiced letter as the letter and a sound mark that is no combining
    // mark (ｶﾞ for ガ), and compatibility jamo spell a Hangul syllable letter by letter (ㄱㅏ for
    // 가): each composes with the character before it only when the text is normalised as a whole.
    it('sees through compatibility forms that compose with the character before them', () => {
      expect(find(['*ガス*'], 'このｶﾞｽは')).to.deep.equal(['ガス']);
      expect(find(['*パス*'], 'ﾊﾟｽﾜｰﾄﾞ')).to.deep.equal(['パス']);
      expect(find(['*가나*'], 'ㄱㅏㄴㅏ다')).to.deep.equal(['가나']);
      expect(find(['*ガス*'], 'ｶ\u200bﾞｽ'), 'an invisible character between the two').to.deep.equal(['ガス']);
      expect(compileBlockedWordMatcher(parseBlockedWords(['*ガス*'], 'exact'))('このｶﾞｽは')).to.deep.equal([
        { word: 'ガス', start: 2, end: 5 },
      ]);
      // A sound mark alone, or after a letter it does not voice, stays as it is.
      expect(foldCase('ﾞ')).to.equal('\u3099');
      expect(find(['*ガス*'], 'ｶｽ')).to.deep.equal([]);
    });

    // Not only format characters draw nothing: the combining grapheme joiner, the Mongolian and
    // Khmer invisible marks and the Hangul fillers are default-ignorable too, and (the first
    // three being marks) read as letters of the word they sit in.
    it('sees through every default-ignorable character inside a word, marks included', () => {
      for (const mode of ['exact', 'contains'] as const) {
        for (const text of [
          's\u034fpam',
          's\u180bpam',
          'sp\u17b4am',
          'spa\u3164m',
          'spam\u034f',
          's\u115fpam',
        ]) {
          expect(find(['spam'], `buy ${text} now`, mode), `${mode}: ${JSON.stringify(text)}`).to.deep.equal([
            'spam',
          ]);
        }
      }
      expect(compileBlockedWordMatcher(parseBlockedWords(['spam'], 'exact'))('a s\u034fpam')).to.deep.equal([
        { word: 'spam', start: 2, end: 7 },
      ]);
      expect(parseBlockedWord('\u034f\u3164', 'exact')).to.equal(undefined);
    });

    // Most fonts draw the Hangul fillers as a blank: dropped, the ones a sender put for spaces
    // joined the words around a listed one, which exact mode then never found standing alone.
    it('reads Hangul fillers between words as spaces in exact mode', () => {
      for (const filler of ['\u3164', '\uffa0', '\u115f', '\u1160'])
        expect(
          compileBlockedWordMatcher(parseBlockedWords(['=spam'], 'exact'))(`buy${filler}spam${filler}now`),
          JSON.stringify(filler),
        ).to.deep.equal([{ word: 'spam', start: 4, end: 8 }]);
      expect(find(['spam'], 'buy\u3164spamnow', 'exact')).to.deep.equal([]);
      expect(find(['spam'], 'buy\u3164spamnow', 'contains')).to.deep.equal(['spam']);
    });

    it('lists a word once whatever its case: STRASSE and straße are one word', () => {
      expect(parseBlockedWords(['straße', 'STRASSE'], 'exact')).to.have.lengthOf(1);
    });

    // Where two listed words overlap, the longer is reported (one match per place, for the rule
    // tester to show in place): "spammer" rather than "spam" in "spammers".
    it('reports the longer of two listed words found at one place', () => {
      const find = compileBlockedWords(parseBlockedWords(['spam', 'spammer'], 'contains'));
      expect(find('no spammers here')).to.deep.equal(['spammer']);
      expect(find('spam, not spamer')).to.deep.equal(['spam']);
    });

    for (const mode of ['exact', 'contains'] as const) {
      it(`in ${mode} mode, finds any listed word written in upper or lower case`, () => {
        fc.assert(
          fc.property(fc.array(fc.oneof(anyText, tricky), { minLength: 1, maxLength: 5 }), (entries) => {
            const words = parseBlockedWords(entries, mode);
            for (const { word } of words) {
              // The dotless ı is kept apart from i, and its upper case is I, i's as well.
              const forms = word.includes('ı')
                ? [word.toLowerCase()]
                : [word.toUpperCase(), word.toLowerCase()];
              for (const written of forms) {
                expect(foundIn(words, word, written), JSON.stringify([word, written])).to.equal(true);
              }
            }
          }),
          { numRuns: runs(mode, 300) },
        );
      });
    }
  });
});
