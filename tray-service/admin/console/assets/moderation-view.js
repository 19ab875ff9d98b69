// The Moderation view: the rule tester (what the blocklisted-words rule would decide about a text)
// and the stored decisions, newest first, with filters and keyset paging.
import { getJson, pageLimit, postJson } from './api.js';
import { byId, h, showError, timeOf } from './dom.js';
import { fillForm, readForm } from './filters.js';

const PAGE_SIZE = 25;

/** The text with each match marked, as a list of nodes; overlapping matches ("ab", "bc") share one mark. */
function marked(text, matches) {
  const spans = [];
  for (const { start, end } of [...matches].sort((a, b) => a.start - b.start)) {
    const last = spans.at(-1);
    if (last && start < last.end) last.end = Math.max(last.end, end);
    else spans.push({ start, end });
  }
  const nodes = [];
  let at = 0;
  for (const span of spans) {
    nodes.push(text.slice(at, span.start), h('mark', {}, text.slice(span.start, span.end)));
    at = span.end;
  }
  nodes.push(text.slice(at));
  return nodes;
}

function testResult(text, result) {
  if (result.matches.length === 0) {
    return [
      h('p', { className: 'verdict', dataset: { action: 'none' } }, 'No match: the rule decides nothing.'),
    ];
  }
  return [
    h(
      'p',
      { className: 'verdict', dataset: { action: result.action } },
      'Action: ',
      h('strong', {}, result.action),
      result.rule ? ` (rule ${result.rule})` : '',
    ),
    h(
      'ul',
      { className: 'matches' },
      result.matches.map((m) =>
        h(
          'li',
          { dataset: { word: m.word, start: String(m.start), end: String(m.end) } },
          `“${m.word}” at ${m.start}–${m.end}`,
        ),
      ),
    ),
    h('p', { className: 'marked' }, marked(text, result.matches)),
  ];
}

/** `openDetail(key, opener)` shows the decision's event. */
export function createModerationView({ openDetail }) {
  const tester = byId('rule-tester');
  const text = byId('rule-text');
  const result = byId('rule-result');
  const form = byId('decisions-filter');
  const rows = byId('decisions-rows');
  const older = byId('decisions-older');
  const empty = byId('decisions-empty');
  const error = byId('decisions-error');
  let filter;
  let cursor = null;
  let loads = 0;

  const row = (d) =>
    h(
      'tr',
      { dataset: { id: d.id } },
      h('td', {}, timeOf(d.decidedAt)),
      h('td', {}, d.rule),
      h('td', {}, h('span', { className: `badge action-${d.action}` }, d.action)),
      h('td', {}, d.reason),
      h('td', {}, `${d.subject.type} ${d.subject.id}`),
      h('td', {}, d.userId ?? '—'),
      h('td', {}, d.delivery),
      h('td', {}, h('button', { type: 'button', className: 'link', dataset: { key: d.eventKey } }, d.event)),
    );

  async function load(reset) {
    const ticket = ++loads;
    older.disabled = true;
    showError(error);
    try {
      const page = await getJson('/moderation/decisions', {
        ...filter,
        limit: pageLimit(PAGE_SIZE),
        cursor: reset ? undefined : cursor,
      });
      if (ticket !== loads) return;
      if (reset) rows.replaceChildren();
      rows.append(...page.items.map(row));
      cursor = page.nextCursor;
      older.hidden = !cursor;
      empty.hidden = rows.childElementCount > 0;
    } catch (failure) {
      showError(error, failure);
    } finally {
      older.disabled = false;
    }
  }

  tester.addEventListener('submit', async (event) => {
    event.preventDefault();
    // The API's offsets are into the text normalised to NFC: mark that same text.
    const value = text.value.normalize('NFC');
    result.replaceChildren(h('p', {}, 'Testing…'));
    try {
      result.replaceChildren(...testResult(value, await postJson('/moderation/test', { text: value })));
    } catch (failure) {
      result.replaceChildren(h('p', { className: 'error' }, `Test failed: ${failure.message}`));
    }
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    filter = readForm(form);
    load(true);
  });
  form.addEventListener('reset', (event) => {
    event.preventDefault();
    fillForm(form, {});
    filter = {};
    load(true);
  });
  older.addEventListener('click', () => load(false));
  rows.addEventListener('click', (event) => {
    const button = event.target.closest('button[data-key]');
    if (button) openDetail(button.dataset.key, button);
  });

  return {
    show() {
      if (filter === undefined) {
        filter = {};
        load(true);
      }
    },
  };
}
