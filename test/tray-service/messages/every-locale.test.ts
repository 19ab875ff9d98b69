import { expect } from 'chai';
import { createMessageRenderer } from '../../../tray-service/messages/create-message-renderer.ts';
import { loadCatalogues } from '../../../tray-service/messages/load-catalogues.ts';
import { messageForRecord } from '../../../tray-service/messages/message-for-record.ts';
import { messageKeys } from '../../../tray-service/messages/message-keys.ts';
import { buildTrayRecord, type TrayRecordSpec } from '../../support/tray-record-builder.ts';
import { pluralFormsOf } from './catalogue-plurals.ts';

const requiredLocales = ['en', 'de', 'es', 'fr', 'ja', 'pt-BR', 'ru', 'th'];
const actorCounts = [1, 2, 3, 4, 5, 11, 21, 101];
const names = ['Ana', 'Ben', 'Cid'];

/** Every verb x feed kind (x where, for mentions) of docs/contract.md#tray-records. */
const shapes: Omit<TrayRecordSpec, 'actors'>[] = [
  ...(['post', 'comment', 'reaction', 'mentreply', 'mentreact'] as const).flatMap((verb) =>
    (['community', 'user'] as const).map((feed) => ({ verb, feed })),
  ),
  ...(['post', 'comment'] as const).flatMap((mentionIn) =>
    (['community', 'user'] as const).map((feed) => ({ verb: 'mention' as const, feed, mentionIn })),
  ),
];

describe('tray messages in every shipped locale', () => {
  const renderer = createMessageRenderer({ defaultLocale: 'en' });

  it('ships en, de, es, fr, ja, pt-BR, ru and th, each with every message of its own', () => {
    expect(renderer.locales).to.include.members(requiredLocales);
    expect(loadCatalogues({ defaultLocale: 'en' }).fallbacks).to.deep.equal([]);
  });

  it('names a deleted user in each language of its own, in English as the contract does', () => {
    const record = buildTrayRecord({ verb: 'comment', feed: 'user', actors: 1 });
    record.actors = record.actors.map((actor) => ({ ...actor, name: 'Deleted user', deleted: true }));
    const names = requiredLocales.map((locale) => [locale, renderer.render(record, locale)]);
    expect(Object.fromEntries(names)).to.deep.equal({
      en: 'Deleted user commented on your post',
      de: 'Gelöschtes Konto hat deinen Beitrag kommentiert',
      es: 'Usuario eliminado comentó tu publicación',
      fr: 'Utilisateur supprimé a commenté votre publication',
      ja: '削除されたユーザーさんがあなたの投稿にコメントしました',
      'pt-BR': 'Usuário excluído comentou na sua publicação',
      ru: 'Удалённый пользователь прокомментировал(а) ваш пост',
      th: 'ผู้ใช้ที่ถูกลบ แสดงความคิดเห็นในโพสต์ของคุณ',
    });
  });

  for (const locale of requiredLocales) {
    describe(locale, () => {
      for (const shape of shapes) {
        for (const actors of actorCounts) {
          const record = buildTrayRecord({ ...shape, actors, names, feedName: 'Hiking Club' });
          const { key } = messageForRecord(record);
          const uses = messageKeys.get(key) ?? [];
          it(`${key} with ${actors} actor(s) names everyone it must, with nothing left over`, () => {
            // Else every check below that depends on what the message uses would drop out.
            expect(messageKeys.has(key), `${key} is a known message`).to.equal(true);
            const text = renderer.render(record, locale);
            expect(text).not.to.match(/\{\{|\}\}|undefined|null|NaN|\[object/);
            expect(text).not.to.match(/^\s|\s$|\s{2}/);
            expect(text).to.include('Ana');
            if (uses.includes('actor2')) expect(text).to.include('Ben');
            if (!uses.includes('actor2')) expect(text).not.to.include('Ben');
            // A mention on a user feed names the mentioning user's feed (Ana), not the feed's name.
            const namesFeed = uses.includes('feedOwner') && record.verb !== 'mention';
            if (uses.includes('community') || namesFeed) expect(text).to.include('Hiking Club');
            if (uses.includes('feedOwner') && !namesFeed) expect(text).not.to.include('Hiking Club');
            if (uses.includes('others')) {
              const others = actors - 2;
              const category = new Intl.PluralRules(locale).select(others);
              const number = new Intl.NumberFormat(locale).format(others);
              const forms = Object.entries(pluralFormsOf(locale, key)).map(
                ([name, form]) => [name, form.replaceAll('#', number)] as const,
              );
              const chosen = forms.find(([name]) => name === category)?.[1];
              expect(chosen, `${locale}.json ${key} has a "${category}" form`).to.be.a('string');
              expect(text).to.include(chosen);
              // "1 other" is inside "1 others": the other categories' texts must be absent, not just this one present.
              for (const [, form] of forms) if (!chosen!.includes(form)) expect(text).not.to.include(form);
            }
          });
        }
      }
    });
  }
});

/** "N others" as a speaker of each language writes it, for N chosen to hit every plural category. */
const othersWording: Record<string, [number, string][]> = {
  en: [
    [1, 'Ben and 1 other commented'],
    [2, 'Ben and 2 others commented'],
  ],
  de: [
    [1, 'und 1 weitere Person haben'],
    [19, 'und 19 weitere Personen haben'],
  ],
  es: [
    [1, 'y 1 persona más comentaron'],
    [2, 'y 2 personas más'],
    [1_000_000, 'y 1.000.000 de personas más'],
  ],
  fr: [
    [1, 'et 1 autre personne ont'],
    [2, 'et 2 autres personnes ont'],
    [1_000_000, 'et 1\u202f000\u202f000 d’autres personnes'],
  ],
  'pt-BR': [
    [1, 'e mais 1 pessoa comentaram'],
    [2, 'e mais 2 pessoas'],
    [1_000_000, 'e mais 1.000.000 de pessoas'],
  ],
  ru: [
    [1, 'и ещё 1 участник прокомментировали'],
    [2, 'и ещё 2 участника'],
    [4, 'и ещё 4 участника'],
    [5, 'и ещё 5 участников'],
    [11, 'и ещё 11 участников'],
    [21, 'и ещё 21 участник прокомментировали'],
    [22, 'и ещё 22 участника'],
    [99, 'и ещё 99 участников'],
  ],
  ja: [
    [1, 'Benさんほか1人が'],
    [99, 'Benさんほか99人が'],
  ],
  th: [
    [1, 'Ben และอีก 1 คน แสดง'],
    [99, 'Ben และอีก 99 คน แสดง'],
  ],
};

describe('the "others" count of every shipped locale', () => {
  const renderer = createMessageRenderer({ defaultLocale: 'en' });
  for (const [locale, cases] of Object.entries(othersWording)) {
    for (const [others, wording] of cases) {
      const category = new Intl.PluralRules(locale).select(others);
      it(`${locale}: ${others} other(s) take the "${category}" form: "${wording}"`, () => {
        const record = buildTrayRecord({ verb: 'comment', feed: 'user', actors: others + 2, names });
        expect(renderer.render(record, locale)).to.include(wording);
      });
    }
  }
});
