import { expect } from 'chai';
import { negotiateLocale, parseAcceptLanguage } from '../../../tray-service/messages/negotiate-locale.ts';

const shipped = ['de', 'en', 'es', 'fr', 'ja', 'pt-BR', 'ru', 'th'];
const negotiate = (query: string | undefined, acceptLanguage: string | undefined) =>
  negotiateLocale(shipped, 'en', query, acceptLanguage);

describe('locale negotiation', () => {
  describe('with ?locale=', () => {
    it('uses a shipped locale, whatever the header says', () => {
      expect(negotiate('ru', 'fr-CA,fr;q=0.9')).to.equal('ru');
    });
    it('matches case-insensitively and answers the canonical tag', () => {
      expect(negotiate('pt-br', undefined)).to.equal('pt-BR');
      expect(negotiate('PT_br', undefined)).to.equal('pt-BR');
      expect(negotiate('JA', undefined)).to.equal('ja');
    });
    it('falls back to the language of a regional tag (fr-CA -> fr)', () => {
      expect(negotiate('fr-CA', undefined)).to.equal('fr');
      expect(negotiate('de-Latn-AT', undefined)).to.equal('de');
    });
    it('takes another region of the same language before giving up (pt, pt-PT -> pt-BR)', () => {
      expect(negotiate('pt', undefined)).to.equal('pt-BR');
      expect(negotiate('pt-PT', 'de')).to.equal('pt-BR');
    });
    it('passes an unknown locale on to Accept-Language', () => {
      expect(negotiate('xx', 'de')).to.equal('de');
      expect(negotiate('not a locale!', 'ja')).to.equal('ja');
    });
    // CLDR's likely subtags make `und` (no language) English: it named a catalogue it never asked for.
    it('takes "und" (no language named) and its regional tags as naming no catalogue', () => {
      expect(negotiate('und', 'fr')).to.equal('fr');
      expect(negotiateLocale(shipped, 'de', 'und', undefined)).to.equal('de');
      expect(negotiate('und-BR', 'fr')).to.equal('fr');
      expect(negotiateLocale(shipped, 'de', undefined, 'und, fr;q=0.9')).to.equal('fr');
    });
    it('reads "*" as no locale tag, passed on to Accept-Language ("*" is a header range only)', () => {
      expect(negotiate('*', 'de')).to.equal('de');
      expect(negotiate(' * ', 'ja')).to.equal('ja');
      expect(negotiate('*', undefined)).to.equal('en');
      expect(negotiateLocale(shipped, 'de', '*', undefined)).to.equal('de');
    });
  });

  describe('with Accept-Language only', () => {
    it('picks fr from "fr-CA,fr;q=0.9,en;q=0.5"', () => {
      expect(negotiate(undefined, 'fr-CA,fr;q=0.9,en;q=0.5')).to.equal('fr');
    });
    it('orders by q-value, not by position', () => {
      expect(negotiate(undefined, 'en;q=0.2, ru;q=0.8, de;q=0.5')).to.equal('ru');
    });
    it('skips ranges with q=0 and unknown languages', () => {
      expect(negotiate(undefined, 'ru;q=0, xx, de;q=0.1')).to.equal('de');
    });
    it('never chooses a range refused with q=0, even when it is the only one', () => {
      expect(negotiate(undefined, 'ru;q=0')).to.equal('en');
      expect(negotiate(undefined, 'ru;q=0.000')).to.equal('en');
      expect(negotiate(undefined, 'de;q=0, pt-PT;q=0')).to.equal('en');
      expect(negotiate('xx', 'fr;q=0')).to.equal('en');
    });
    it('never shortens a longer tag into a refused range (fr-CA, fr;q=0)', () => {
      expect(negotiate(undefined, 'fr-CA, fr;q=0')).to.equal('en');
      expect(negotiate(undefined, 'fr-CA, fr;q=0, de;q=0.5')).to.equal('de');
      expect(negotiate(undefined, 'fr-CA, FR;q=0')).to.equal('en');
    });
    it('takes a bare language range as naming every region of it, in its place by q (pt-PT,pt;q=0.9,en;q=0.8)', () => {
      // What a browser set to Portuguese (Portugal) sends: pt-BR, not the English ranked below pt.
      expect(negotiate(undefined, 'pt-PT,pt;q=0.9,en;q=0.8')).to.equal('pt-BR');
      expect(negotiate(undefined, 'pt, de;q=0.5')).to.equal('pt-BR');
      // A range with a region leads to another region only once every range has found nothing.
      expect(negotiate(undefined, 'pt-PT, es;q=0.8')).to.equal('es');
    });
    it('never takes another region that was refused (pt, pt-BR;q=0)', () => {
      expect(negotiate(undefined, 'pt, pt-BR;q=0')).to.equal('en');
      expect(negotiate(undefined, 'pt-PT, pt_br;q=0, de;q=0.1')).to.equal('de');
    });
    it('refuses the longer tags of a refused range too (fr;q=0 refuses fr-CA)', () => {
      const canadian = ['de', 'en', 'fr-CA'];
      expect(negotiateLocale(canadian, 'en', undefined, 'fr-FR, fr;q=0')).to.equal('en');
      expect(negotiateLocale(canadian, 'en', undefined, 'fr, fr;q=0')).to.equal('en');
    });
    it('lets the longest range naming a locale decide (pt;q=0, pt-BR)', () => {
      expect(negotiate(undefined, 'pt;q=0, pt-BR')).to.equal('pt-BR');
      expect(negotiate(undefined, 'pt-BR;q=0, pt')).to.equal('en');
    });
    it('reads "*;q=0" as refusing only languages the header does not name', () => {
      expect(negotiate(undefined, 'fr-CA, *;q=0')).to.equal('fr');
      expect(negotiate(undefined, 'pt-PT, *;q=0')).to.equal('pt-BR');
    });
    it('answers the default as the last resort even when it was refused', () => {
      expect(negotiate(undefined, 'en;q=0')).to.equal('en');
      expect(negotiate(undefined, 'xx, en;q=0')).to.equal('en');
      expect(negotiate(undefined, 'de, en;q=0')).to.equal('de');
    });
    // `*` accepts every language the header does not name: it answered the refused default, the one
    // language the client ruled out, though the other shipped locales were all acceptable.
    it('lets "*" give the first locale, in tag order, the header neither names nor refuses', () => {
      expect(negotiate(undefined, 'en;q=0, *')).to.equal('de');
      expect(negotiate(undefined, 'en;q=0, de;q=0, *')).to.equal('es');
      expect(negotiate(undefined, 'en;q=0, de-AT;q=0, *')).to.equal('es');
      // de is named, so it has its own weight, below the `*` that stands for es.
      expect(negotiate(undefined, 'en;q=0, *, de;q=0.5')).to.equal('es');
      expect(negotiate(undefined, 'en;q=0, *;q=0.5, de')).to.equal('de');
      // A longer tag, another region or a shorter tag names a locale as it would reach it.
      expect(negotiate(undefined, 'en;q=0, de-AT;q=0, es-MX;q=0, fr-CA;q=0, pt-PT;q=0, *')).to.equal('ja');
      expect(negotiateLocale(shipped, 'de', undefined, 'de;q=0, *')).to.equal('en');
    });
    it('answers the refused default for "*" only when the header names every other locale', () => {
      const allNamed = 'de;q=0, es;q=0, fr;q=0, ja;q=0, pt;q=0, ru;q=0, th;q=0';
      expect(negotiate(undefined, `en;q=0, ${allNamed}, *`)).to.equal('en');
    });
    it("applies the header's refusals to the header only: ?locale= still wins", () => {
      expect(negotiate('pt', 'pt-BR;q=0')).to.equal('pt-BR');
    });
    it('prefers a lower-weighted exact language over another region of a higher one', () => {
      expect(negotiate(undefined, 'pt-PT, es;q=0.8')).to.equal('es');
      expect(negotiate(undefined, 'pt-PT')).to.equal('pt-BR');
    });
    it('answers the default for "*"', () => {
      expect(negotiate(undefined, 'xx, *;q=0.5, de;q=0.1')).to.equal('en');
    });
    // `*` stands for the languages the header does not name: a default it names keeps its own weight.
    it('does not let "*" give a default the header ranked lower itself', () => {
      expect(negotiate(undefined, 'en;q=0.1, ru;q=0.8, *;q=0.9')).to.equal('ru');
      expect(negotiate(undefined, 'uk, en;q=0.1, *;q=0.5')).to.equal('en');
      expect(negotiate(undefined, 'en-US;q=0.1, de;q=0.5, *;q=0.9')).to.equal('de');
    });
    // A default with a region (pt-BR) was named only by a range it shortens to: `pt` or `pt-PT`,
    // which name it too (a language range names all its regions, another region counts as the
    // range's), let `*` give it above the ranges the header ranked over it.
    it('counts a default with a region as named by its language or another of its regions', () => {
      for (const header of ['pt;q=0.1, ru;q=0.8, *;q=0.9', 'pt-PT;q=0.1, ru;q=0.8, *;q=0.9'])
        expect(negotiateLocale(shipped, 'pt-BR', undefined, header), header).to.equal('ru');
      expect(negotiateLocale(shipped, 'pt-BR', undefined, 'de;q=0.1, ru;q=0.8, *;q=0.9')).to.equal('pt-BR');
    });
  });

  describe('with nothing usable', () => {
    it('answers DEFAULT_LOCALE for no query and no header', () => {
      expect(negotiate(undefined, undefined)).to.equal('en');
      expect(negotiateLocale(shipped, 'de', '', '')).to.equal('de');
    });
    it('answers the default for an unknown locale', () => {
      expect(negotiate('tlh', 'x-klingon')).to.equal('en');
    });
    for (const garbage of [
      ';;;,,,',
      'q=1',
      'de;q=banana',
      'de;q=2',
      '\u0000\u00ff\ud800',
      '*;q=0',
      `${'a-'.repeat(5000)}de`,
      'en-US-'.repeat(1000),
    ]) {
      it(`survives Accept-Language ${JSON.stringify(garbage.slice(0, 24))}`, () => {
        expect(negotiate(undefined, garbage)).to.equal('en');
      });
    }
  });

  describe('parseAcceptLanguage', () => {
    it('keeps the client order between equal weights and ignores malformed ranges', () => {
      expect(
        parseAcceptLanguage('da, en-GB;q=0.8, en;q=0.8, x y;q=0.9, de;q=0.9;level=1').accepted,
      ).to.deep.equal(['da', 'de', 'en-GB', 'en']);
    });
    it('keeps the ranges refused with q=0 apart', () => {
      expect(parseAcceptLanguage('fr-CA, fr;q=0, de;q=0.5, *;q=0.000, x y;q=0')).to.deep.equal({
        accepted: ['fr-CA', 'de'],
        refused: ['fr', '*'],
      });
    });
  });

  describe('q-values and parameters', () => {
    it('reads q=1, q=1.000 and three decimals as weights', () => {
      expect(negotiate(undefined, 'fr;q=1')).to.equal('fr');
      expect(negotiate(undefined, 'fr;q=1.000')).to.equal('fr');
      expect(negotiate(undefined, 'de;q=0.25, fr;q=0.125')).to.equal('de');
    });
    it('allows spaces around "=" in q', () => {
      expect(negotiate(undefined, 'de;q = 0.5')).to.equal('de');
      expect(negotiate(undefined, 'fr;q = 0')).to.equal('en');
    });
    it('skips a range whose q-value has anything after the number', () => {
      expect(negotiate(undefined, 'fr;q=0.5x')).to.equal('en');
    });
    it('reads a parameter that merely ends in "q" as no weight', () => {
      expect(negotiate(undefined, 'fr;xq=0')).to.equal('fr');
    });
  });

  describe('bounded work on hostile headers', () => {
    it('reads only the first 32 ranges', () => {
      expect(negotiate(undefined, `${Array.from({ length: 32 }, () => 'xx').join(',')},fr`)).to.equal('en');
      expect(negotiate(undefined, `${Array.from({ length: 31 }, () => 'xx').join(',')},fr`)).to.equal('fr');
    });
    it('reads only the first 4096 characters', () => {
      expect(negotiate(undefined, `${' '.repeat(4096)},fr`)).to.equal('en');
      expect(negotiate(undefined, `${' '.repeat(4092)},fr`)).to.equal('fr');
    });
    it('uses a ?locale= of up to 64 characters, trimmed, and ignores a longer one', () => {
      const tag = (last: string) =>
        `fr-x-${[...Array.from({ length: 6 }, () => 'abcdefgh'), last].join('-')}`;
      expect(tag('abcde')).to.have.lengthOf(64);
      expect(negotiate(tag('abcde'), 'de')).to.equal('fr');
      expect(negotiate(tag('abcdef'), 'de')).to.equal('de');
      expect(negotiate(' fr ', 'de')).to.equal('fr');
    });
  });

  describe('regional matches', () => {
    const regional = ['en', 'pt-BR', 'pt-PT'];
    it('matches a regional tag exactly before another region of its language', () => {
      expect(negotiateLocale(regional, 'en', undefined, 'pt-PT')).to.equal('pt-PT');
      expect(negotiateLocale(regional, 'en', 'pt-pt', undefined)).to.equal('pt-PT');
    });
    it('tries another region for each range in turn, after exact matches for all of them', () => {
      expect(negotiate(undefined, 'xx, pt-PT')).to.equal('pt-BR');
    });
    // Another region, not another script: a Taiwan reader (zh-TW: Traditional) got the Simplified
    // catalogue, the first zh-* in order, though a Traditional one was there.
    it('takes another region of the same script only (zh-TW -> zh-Hant, never zh-Hans)', () => {
      const chinese = ['en', 'zh-Hans', 'zh-Hant'];
      expect(negotiateLocale(chinese, 'en', undefined, 'zh-TW')).to.equal('zh-Hant');
      expect(negotiateLocale(chinese, 'en', 'zh-HK', undefined)).to.equal('zh-Hant');
      expect(negotiateLocale(chinese, 'en', undefined, 'zh-CN')).to.equal('zh-Hans');
      expect(negotiateLocale(['en', 'zh-Hans'], 'en', undefined, 'zh-Hant-TW')).to.equal('en');
      expect(negotiateLocale(['en', 'sr-Latn'], 'en', undefined, 'sr-RS')).to.equal('en');
      // A bare language names its usual script: zh is Simplified Chinese.
      expect(negotiateLocale(chinese, 'en', undefined, 'zh')).to.equal('zh-Hans');
    });
  });
});
