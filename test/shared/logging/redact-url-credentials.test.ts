import { expect } from 'chai';
import { redactUrlCredentials } from '../../../shared/logging/redact-url-credentials.ts';

describe('redactUrlCredentials', () => {
  const cases: [string, string][] = [
    [
      'Request cannot be constructed from a URL that includes credentials: http://hook:S3cretPass@127.0.0.1:9/d',
      'Request cannot be constructed from a URL that includes credentials: http://***@127.0.0.1:9/d',
    ],
    [
      'https://user@example.com/x and https://a:b@c@example.org/',
      'https://***@example.com/x and https://***@example.org/',
    ],
    ['https://example.com/a@b?c=d@e', 'https://example.com/a@b?c=d@e'],
    ['moderation webhook answered HTTP 500', 'moderation webhook answered HTTP 500'],
    ['mailto:someone@example.com', 'mailto:someone@example.com'],
  ];
  for (const [text, redacted] of cases) {
    it(`redacts ${JSON.stringify(text.slice(0, 50))}`, () => {
      expect(redactUrlCredentials(text)).to.equal(redacted);
    });
  }
});
