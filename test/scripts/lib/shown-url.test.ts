import { expect } from 'chai';
import { shownUrl } from '../../../scripts/lib/shown-url.ts';

describe('shownUrl (the URLs npm start prints)', () => {
  it('replaces the password of a URL, and leaves one without a password as it is', () => {
    expect(shownUrl('postgres://tray:s3cret@127.0.0.1:5432/tray')).to.equal(
      'postgres://tray:****@127.0.0.1:5432/tray',
    );
    expect(shownUrl('redis://127.0.0.1:6379')).to.equal('redis://127.0.0.1:6379');
  });

  it('shows no part of a password the URL parser refuses, whatever it holds', () => {
    for (const [url, shown] of [
      ['postgres://u:ab/cd@db/tray', 'postgres://****@db/tray'],
      ['redis://:ab/cd@127.0.0.1:6379', 'redis://****@127.0.0.1:6379'],
    ] as const) {
      expect(shownUrl(url), url).to.equal(shown);
    }
  });
});
