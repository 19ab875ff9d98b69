import { escapeHtml } from '../http/escape-html.ts';

/**
 * The demo page's HTML; the locale list is the service's catalogues. Without the built client
 * (`clientBuilt` false) the page says how to build it instead of failing silently.
 */
export function demoPage(locales: readonly string[], defaultLocale: string, clientBuilt: boolean): string {
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
<script type="module" src="/demo/demo.js"></script>
</head>
<body>
<header>
  <h1>Notification tray <span id="badge" class="badge" title="unread">0</span> <span id="unseen" class="badge unseen" title="unseen">0</span></h1>
  <p class="hint">Paste a token for the user whose tray to watch: <code>npm run mint-token -- --user u-ana</code></p>
  <form id="connect">
    <label>Token <input id="token" type="password" autocomplete="off" required></label>
    <label>Locale <select id="locale">${options}</select></label>
    <button type="submit">Open tray</button>
    <button type="button" id="mark-all" disabled>Mark all as read</button>
    <button type="button" id="mark-seen" disabled>Mark all seen</button>
  </form>
  <p id="status" role="status">${clientBuilt ? 'Not connected.' : 'The client package is not built: run <code>npm run build:client</code> and restart the tray service.'}</p>
</header>
<main>
  <ul id="records"></ul>
</main>
</body>
</html>
`;
}
