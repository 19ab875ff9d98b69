import { escapeHtml } from '../../http/escape-html.ts';

/**
 * The console's Content-Security-Policy: every script, style sheet, request and image from this
 * origin only, and no inline script or style attribute, so text from an event payload that slipped
 * into the page as markup could still run nothing. uPlot sets element styles through the CSSOM
 * (`el.style.x = ...`), which this policy allows; a `style="..."` attribute it would refuse.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const option = (value: string, label: string) => `<option value="${value}">${label}</option>`;

/**
 * The console's HTML shell: landmarks, the four views' forms and empty tables, no data. The
 * scripts (assets/console.js and the modules it imports) fill it in from the admin JSON API.
 * `base` is where the admin router is mounted (/admin); `listMaxLimit` the largest page its lists
 * accept (ADMIN_LIST_MAX_LIMIT), so the scripts ask for no larger one.
 */
export function consolePage(base: string, listMaxLimit: number): string {
  const b = escapeHtml(base);
  const assets = `${b}/console/assets`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Events console</title>
<link rel="stylesheet" href="${assets}/uPlot.min.css">
<link rel="stylesheet" href="${assets}/console.css">
<script type="module" src="${assets}/console.js"></script>
</head>
<body data-admin-base="${b}" data-list-max-limit="${listMaxLimit}">
<header class="top">
  <h1>Events console</h1>
  <nav aria-label="Console views">
    <div role="tablist" aria-label="Views" id="tabs">
      <a role="tab" id="tab-events" href="#/events" aria-controls="view-events" aria-selected="true">Events</a>
      <a role="tab" id="tab-traffic" href="#/traffic" aria-controls="view-traffic" aria-selected="false" tabindex="-1">Traffic</a>
      <a role="tab" id="tab-moderation" href="#/moderation" aria-controls="view-moderation" aria-selected="false" tabindex="-1">Moderation</a>
      <a role="tab" id="tab-export" href="#/export" aria-controls="view-export" aria-selected="false" tabindex="-1">Export and replay</a>
    </div>
  </nav>
  <a class="sign-out" href="${b}/logout">Sign out</a>
</header>
<main id="main">
<section id="view-events" role="tabpanel" aria-labelledby="tab-events" tabindex="-1">
  <h2>Events</h2>
  <form id="events-filter" class="filters" role="search" aria-label="Filter events">
    <div class="field"><label for="f-event">Event name</label><input id="f-event" name="event" placeholder="post.didCreate" autocomplete="off"></div>
    <div class="field"><label for="f-webhook">Webhook</label><input id="f-webhook" name="webhook" autocomplete="off"></div>
    <div class="field"><label for="f-user">User id</label><input id="f-user" name="userId" autocomplete="off"></div>
    <div class="field"><label for="f-community">Community id</label><input id="f-community" name="communityId" autocomplete="off"></div>
    <div class="field"><label for="f-moderation">Moderation</label><select id="f-moderation" name="moderation">
      ${option('', 'Not filtered')}${option('none', 'No decision')}${option('any', 'Any decision')}${option('flag', 'Flagged, no ban request')}${option('ban-request', 'Ban requested')}
    </select></div>
    <div class="field"><label for="f-status">Status</label><select id="f-status" name="status">
      ${option('', 'Any status')}${option('applied', 'applied')}${option('stored', 'stored')}${option('unknown', 'unknown')}${option('invalid', 'invalid')}${option('foreign', 'foreign')}
    </select></div>
    <div class="field"><label for="f-since">Received from</label><input id="f-since" name="since" type="datetime-local" step="1"></div>
    <div class="field"><label for="f-until">Received before</label><input id="f-until" name="until" type="datetime-local" step="1"></div>
    <div class="actions"><button type="submit">Apply filters</button><button type="reset">Clear</button></div>
  </form>
  <div class="toolbar">
    <span class="switch"><input type="checkbox" id="tail-toggle"> <label for="tail-toggle">Live tail</label></span>
    <p id="tail-state" class="muted">Live tail off.</p>
  </div>
  <div id="tail-log" class="visually-hidden" role="log" aria-live="polite" aria-label="New events"></div>
  <p id="events-error" class="error" role="alert"></p>
  <table id="events-table" class="list">
    <caption>Stored events, newest first. Open one for its payload, recipients and decisions.</caption>
    <thead><tr><th scope="col">Received</th><th scope="col">Event</th><th scope="col">Webhook</th><th scope="col">User</th><th scope="col">Community</th><th scope="col">Status</th><th scope="col">Moderation</th><th scope="col">Key</th></tr></thead>
    <tbody id="events-rows"></tbody>
  </table>
  <p id="events-empty" class="muted" hidden>No stored event matches these filters.</p>
  <p class="pager"><button type="button" id="events-older" hidden>Older</button> <span id="events-count" class="muted" role="status"></span></p>
</section>

<section id="view-traffic" role="tabpanel" aria-labelledby="tab-traffic" tabindex="-1" hidden>
  <h2>Traffic</h2>
  <p class="muted">The last 24 hours, per minute (UTC minutes, shown in your time zone). <button type="button" id="traffic-refresh">Refresh</button></p>
  <div class="range-switch" role="group" aria-label="Time shown in the per-minute charts">
    <button type="button" data-range="hour" aria-pressed="false">Last hour</button>
    <button type="button" data-range="day" aria-pressed="true">Last 24 hours</button>
  </div>
  <p id="traffic-error" class="error" role="alert"></p>
  <figure class="chart-box" id="chart-events" aria-labelledby="chart-events-title">
    <figcaption id="chart-events-title">Events per minute, by event name</figcaption>
    <div class="chart" aria-hidden="true"></div>
    <details><summary>Data table</summary><div class="data"></div></details>
  </figure>
  <figure class="chart-box" id="chart-queue" aria-labelledby="chart-queue-title">
    <figcaption id="chart-queue-title">Queue depth and failed jobs (sampled while this page is open)</figcaption>
    <div class="chart" aria-hidden="true"></div>
    <details><summary>Data table</summary><div class="data"></div></details>
  </figure>
  <figure class="chart-box" id="chart-lag" aria-labelledby="chart-lag-title">
    <figcaption id="chart-lag-title">Lag from acknowledgement to tray, p50 and p99 per minute (ms)</figcaption>
    <p class="overall muted" id="lag-overall"></p>
    <div class="chart" aria-hidden="true"></div>
    <details><summary>Data table</summary><div class="data"></div></details>
  </figure>
</section>

<section id="view-moderation" role="tabpanel" aria-labelledby="tab-moderation" tabindex="-1" hidden>
  <h2>Moderation</h2>
  <form id="rule-tester" class="tester" aria-labelledby="rule-tester-title">
    <h3 id="rule-tester-title">Rule tester</h3>
    <label for="rule-text">Text to check against the blocklisted words</label>
    <textarea id="rule-text" name="text" rows="4" required></textarea>
    <div class="actions"><button type="submit">Test</button></div>
    <div id="rule-result" role="status"></div>
  </form>
  <h3>Decisions</h3>
  <form id="decisions-filter" class="filters" role="search" aria-label="Filter decisions">
    <div class="field"><label for="d-rule">Rule</label><input id="d-rule" name="rule" autocomplete="off"></div>
    <div class="field"><label for="d-action">Action</label><select id="d-action" name="action">
      ${option('', 'Any action')}${option('flag', 'flag')}${option('ban-request', 'ban-request')}
    </select></div>
    <div class="field"><label for="d-user">User id</label><input id="d-user" name="userId" autocomplete="off"></div>
    <div class="field"><label for="d-delivery">Delivery</label><select id="d-delivery" name="delivery">
      ${option('', 'Any delivery')}${option('off', 'off')}${option('pending', 'pending')}${option('delivered', 'delivered')}${option('failed', 'failed')}
    </select></div>
    <div class="field"><label for="d-since">Decided from</label><input id="d-since" name="since" type="datetime-local" step="1"></div>
    <div class="field"><label for="d-until">Decided before</label><input id="d-until" name="until" type="datetime-local" step="1"></div>
    <div class="actions"><button type="submit">Apply filters</button><button type="reset">Clear</button></div>
  </form>
  <p id="decisions-error" class="error" role="alert"></p>
  <table id="decisions-table" class="list">
    <caption>Moderation decisions, newest first</caption>
    <thead><tr><th scope="col">Decided</th><th scope="col">Rule</th><th scope="col">Action</th><th scope="col">Reason</th><th scope="col">Subject</th><th scope="col">User</th><th scope="col">Delivery</th><th scope="col">Event</th></tr></thead>
    <tbody id="decisions-rows"></tbody>
  </table>
  <p id="decisions-empty" class="muted" hidden>No decision matches these filters.</p>
  <p class="pager"><button type="button" id="decisions-older" hidden>Older</button></p>
</section>

<section id="view-export" role="tabpanel" aria-labelledby="tab-export" tabindex="-1" hidden>
  <h2>Export and replay</h2>
  <p>For the filters of the Events view: <span id="export-filter" class="filter-summary"></span></p>
  <h3>Export</h3>
  <ul class="links">
    <li><a id="export-ndjson" href="${b}/events/export?format=ndjson" download>Download NDJSON</a> (one event per line, as the API shows it)</li>
    <li><a id="export-csv" href="${b}/events/export?format=csv" download>Download CSV</a> (one row per event, for spreadsheets)</li>
  </ul>
  <p id="export-error" class="error" role="alert"></p>
  <h3>Replay</h3>
  <p>Applies every matching stored event to the trays again, through the worker's own apply path, in the background. An event already applied changes nothing: only what it missed (a record lost, a rule fixed since) is written.</p>
  <p><button type="button" id="replay-start">Replay matching events</button></p>
  <div id="replay-progress" hidden>
    <label for="replay-bar">Replay progress</label>
    <progress id="replay-bar" max="1" value="0"></progress>
  </div>
  <p id="replay-status" role="status"></p>
</section>
</main>

<dialog id="detail" aria-labelledby="detail-title">
  <div class="detail-head">
    <h2 id="detail-title">Event</h2>
    <button type="button" id="detail-close">Close</button>
  </div>
  <p id="detail-error" class="error" role="alert"></p>
  <dl id="detail-summary" class="summary"></dl>
  <section aria-labelledby="detail-payload-title">
    <h3 id="detail-payload-title">Payload</h3>
    <p><button type="button" id="detail-copy">Copy payload</button> <span id="detail-copy-status" role="status"></span></p>
    <pre id="detail-payload" tabindex="0" aria-labelledby="detail-payload-title"></pre>
  </section>
  <section aria-labelledby="detail-activities-title">
    <h3 id="detail-activities-title">Activities</h3>
    <table class="list"><thead><tr><th scope="col">Verb</th><th scope="col">Target</th><th scope="col">Actor</th><th scope="col">Audience</th><th scope="col">At</th></tr></thead><tbody id="detail-activities"></tbody></table>
    <ul id="detail-changes"></ul>
  </section>
  <section aria-labelledby="detail-recipients-title">
    <h3 id="detail-recipients-title">Recipients</h3>
    <p id="detail-recipients-total"></p>
    <ul id="detail-recipients" class="chips"></ul>
    <p><button type="button" id="detail-recipients-more" hidden>More recipients</button></p>
  </section>
  <section id="detail-removal" aria-labelledby="detail-removal-title" hidden>
    <h3 id="detail-removal-title">Trays this removal changed</h3>
    <p id="detail-removal-total"></p>
    <table class="list"><thead><tr><th scope="col">User</th><th scope="col">Record</th><th scope="col">Change</th><th scope="col">Before</th><th scope="col">After</th></tr></thead><tbody id="detail-removal-changes"></tbody></table>
    <p><button type="button" id="detail-removal-more" hidden>More changes</button></p>
  </section>
  <section aria-labelledby="detail-decisions-title">
    <h3 id="detail-decisions-title">Moderation decisions</h3>
    <table class="list"><thead><tr><th scope="col">Rule</th><th scope="col">Action</th><th scope="col">Reason</th><th scope="col">Subject</th><th scope="col">Delivery</th></tr></thead><tbody id="detail-decisions"></tbody></table>
  </section>
  <section aria-labelledby="detail-replay-title">
    <h3 id="detail-replay-title">Replay</h3>
    <p><button type="button" id="detail-replay">Replay this event</button> <span id="detail-replay-status" role="status"></span></p>
  </section>
</dialog>
</body>
</html>
`;
}
