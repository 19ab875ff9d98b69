/* global document, location, window, URL, URLSearchParams */
// The events console's entry module: the views as tabs, addressed by the URL's fragment
// (#/events?filters, #/traffic, #/moderation, #/export?filters), so a view and its filter survive a
// reload and can be linked. Arrow keys, Home and End move between the tabs (WAI-ARIA tabs pattern).
import { byId } from './dom.js';
import { createEventDetail } from './event-detail.js';
import { createEventsView, EVENT_FILTERS } from './events-view.js';
import { createExportView } from './export-view.js';
import { pick, toQuery } from './filters.js';
import { createModerationView } from './moderation-view.js';
import { createTrafficView } from './traffic-view.js';

const VIEWS = ['events', 'traffic', 'moderation', 'export'];
/** Views whose address carries the events filter. */
const FILTERED = new Set(['events', 'export']);

const hashOf = (view, filter = {}) => {
  const query = FILTERED.has(view) ? toQuery(filter) : '';
  return `#/${view}${query ? `?${query}` : ''}`;
};

function parseHash() {
  const match = /^#\/([a-z]+)(?:\?(.*))?$/.exec(location.hash);
  const view = match && VIEWS.includes(match[1]) ? match[1] : 'events';
  return { view, params: Object.fromEntries(new URLSearchParams(match?.[2] ?? '')) };
}

let filter = {};
let current;

const detail = createEventDetail();
const openDetail = (key, opener) => detail.open(key, opener);

/** Goes to `view` with `filter`; the same address again reloads the view. */
function navigate(view, nextFilter = filter) {
  const hash = hashOf(view, nextFilter);
  if (hash === location.hash) route({ reload: true });
  else location.hash = hash;
}

const views = {
  events: createEventsView({ navigate: (params) => navigate('events', params), openDetail }),
  traffic: createTrafficView(),
  moderation: createModerationView({ openDetail }),
  export: createExportView({ currentFilter: () => filter }),
};

const tabs = VIEWS.map((view) => byId(`tab-${view}`));

function route(options = {}) {
  const { view, params } = parseHash();
  if (FILTERED.has(view)) filter = pick(params, EVENT_FILTERS);
  for (const [i, name] of VIEWS.entries()) {
    const selected = name === view;
    tabs[i].setAttribute('aria-selected', String(selected));
    tabs[i].tabIndex = selected ? 0 : -1;
    tabs[i].href = hashOf(name, filter);
    byId(`view-${name}`).hidden = !selected;
  }
  if (current !== view) views[current]?.hide?.();
  current = view;
  views[view].show(filter, options);
}

byId('tabs').addEventListener('keydown', (event) => {
  const index = tabs.indexOf(document.activeElement);
  if (index === -1) return;
  const target = {
    ArrowRight: tabs[(index + 1) % tabs.length],
    ArrowLeft: tabs[(index - 1 + tabs.length) % tabs.length],
    Home: tabs[0],
    End: tabs[tabs.length - 1],
    ' ': tabs[index],
  }[event.key];
  if (!target) return;
  event.preventDefault();
  target.focus();
  location.hash = new URL(target.href).hash;
});

window.addEventListener('hashchange', () => route());
route();
