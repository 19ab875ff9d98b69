import { escapeHtml } from '../http/escape-html.ts';

/** The demo page's HTML; the locale list is the service's catalogues. */
export function demoPage(locales: readonly string[], defaultLocale: string): string {
  const options = locales
    .map(
      (locale) =>
        `<option value="${escapeHtml(locale)}"${locale === defaultLocale ? ' selected' : ''}>${escapeHtml(locale)}</option>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tray demo</title>
<link rel="stylesheet" href="/demo/demo.css">
<script src="/demo/demo.js" defer></script>
</head>
<body>
<header>
  <h1>Notification tray <span id="badge" class="badge" title="unread">0</span></h1>
  <p class="hint">Paste a token for the user whose tray to watch: <code>npm run mint-token -- --user u-ana</code></p>
  <form id="connect">
    <label>Token <input id="token" type="password" autocomplete="off" required></label>
    <label>Locale <select id="locale">${options}</select></label>
    <button type="submit">Open tray</button>
    <button type="button" id="mark-all" disabled>Mark all as read</button>
  </form>
  <p id="status" role="status">Not connected.</p>
</header>
<main>
  <ul id="records"></ul>
</main>
</body>
</html>
`;
}
