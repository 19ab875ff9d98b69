// The event detail's "Trays this removal changed": what a removal event did to each tray record,
// as the worker recorded it when it applied the removal (counts of every change, the first
// changes listed and paged). Shown for removal events only.
import { getJson, pageLimit } from './api.js';
import { byId, h, showError } from './dom.js';

const CHANGES_PAGE = 100;
const s = (n, one, many) => `${n} ${n === 1 ? one : many}`;

/** "2 actors (u-ben, u-cy), names c-9": a record's counts on one side of the removal. */
function countsText(counts) {
  if (!counts) return '—';
  const actors = counts.actorIds.length ? ` (${counts.actorIds.join(', ')})` : '';
  return `${s(counts.actorsCount, 'actor', 'actors')}${actors}, names ${counts.lastActionId}`;
}

const CHANGE_TEXT = {
  shrunk: 'shrank',
  replaced: 'action it names replaced',
  removed: 'removed',
};

function changeRow(change) {
  return h(
    'tr',
    { dataset: { change: change.change } },
    h('td', {}, change.userId),
    h('td', { className: 'mono' }, change.key),
    h('td', {}, CHANGE_TEXT[change.change] ?? change.change),
    h('td', {}, countsText(change.before)),
    h('td', {}, change.after ? countsText(change.after) : 'gone'),
  );
}

/** The sentence over the table: how many trays changed and how, or why none did. */
function totalText(view) {
  if (view === null)
    return 'Not recorded: the worker has not applied this removal yet, or applied it before this was recorded.';
  const changed = view.shrunk + view.replaced + view.removed;
  if (changed === 0)
    return view.voided === 0
      ? 'Changed no tray: the action it removes had not arrived (it waits for it and drops it when it does), or had expired.'
      : `Changed no tray: it took out ${s(view.voided, 'action', 'actions')} that no unexpired record counted.`;
  const listed = view.listed < changed ? ` The first ${view.listed} are listed.` : '';
  return `Changed ${s(changed, 'tray record', 'tray records')}: ${view.shrunk} shrank, ${view.replaced} named another action, ${view.removed} removed (${s(view.voided, 'action', 'actions')} taken out).${listed}`;
}

/** `path(key)`: the event's API path. */
export function createTrayChanges(path, error) {
  const section = byId('detail-removal');
  const total = byId('detail-removal-total');
  const rows = byId('detail-removal-changes');
  const more = byId('detail-removal-more');
  let key;
  let cursor = null;
  /** Counts the events shown: a page asked for an earlier one is dropped when it arrives. */
  let shown = 0;

  more.addEventListener('click', async () => {
    more.disabled = true;
    const asked = shown;
    try {
      const page = await getJson(`${path(key)}/tray-changes`, { limit: pageLimit(CHANGES_PAGE), cursor });
      if (asked !== shown) return;
      rows.append(...page.items.map(changeRow));
      cursor = page.nextCursor;
      more.hidden = !cursor;
    } catch (failure) {
      if (asked === shown) showError(error, failure);
    } finally {
      more.disabled = false;
    }
  });

  return {
    clear() {
      shown += 1;
      section.hidden = true;
      total.replaceChildren();
      rows.replaceChildren();
      more.hidden = true;
    },
    /** Shows the event's `trayChanges` (absent: not a removal event, the section stays hidden). */
    fill(eventKey, view) {
      key = eventKey;
      if (view === undefined) return;
      section.hidden = false;
      total.textContent = totalText(view);
      rows.replaceChildren(...(view?.items ?? []).map(changeRow));
      cursor = view?.nextCursor ?? null;
      more.hidden = !cursor;
    },
  };
}
