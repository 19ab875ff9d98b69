/* global document, getSelection, navigator */
// The event detail: a modal dialog over the current view (Escape or Close shuts it and focus
// returns to what opened it) with the payload, its activities, recipients, decisions and a replay.
import { getJson, pageLimit, postJson } from './api.js';
import { byId, h, showError, timeOf } from './dom.js';
import { createTrayChanges } from './tray-changes.js';

const RECIPIENTS_PAGE = 100;
const path = (key) => `/events/${encodeURIComponent(key)}`;

const cell = (value) => h('td', {}, value ?? '—');
const emptyRow = (columns, text) => h('tr', {}, h('td', { colspan: columns, className: 'muted' }, text));

function activityRow(activity) {
  const audience = activity.audience
    ? activity.audience.kind === 'community'
      ? `community ${activity.audience.communityId}`
      : `user ${activity.audience.userId}`
    : undefined;
  const target = [activity.targetType, activity.targetId].filter(Boolean).join(' ');
  const actor = activity.actor ? `${activity.actor.name ?? ''} (${activity.actor.userId})`.trim() : undefined;
  const at = typeof activity.at === 'number' ? new Date(activity.at).toISOString() : activity.at;
  return h('tr', {}, cell(activity.verb), cell(target), cell(actor), cell(audience), h('td', {}, timeOf(at)));
}

/** The event's other effects on the tray: memberships, profiles and global bans, as sentences. */
function changeItems(view) {
  const when = (at) => ` (${new Date(at).toLocaleString()})`;
  return [
    ...(view.memberships ?? []).map(
      (m) => `${m.userId} ${m.active ? 'joined' : 'left'} community ${m.communityId}${when(m.at)}`,
    ),
    ...(view.profiles ?? []).map(
      (p) => `${p.userId}: profile ${p.deleted ? 'deleted' : `now “${p.displayName}”`}${when(p.at)}`,
    ),
    ...(view.bans ?? []).map((b) => `${b.userId} ${b.banned ? 'banned' : 'unbanned'} globally${when(b.at)}`),
  ].map((text) => h('li', {}, text));
}

function decisionRow(decision) {
  return h(
    'tr',
    {},
    cell(decision.rule),
    h('td', {}, h('span', { className: `badge action-${decision.action}` }, decision.action)),
    cell(decision.reason),
    cell(decision.subject ? `${decision.subject.type} ${decision.subject.id}` : undefined),
    cell(decision.delivery),
  );
}

/** Copies text; the Clipboard API where the browser grants it, else the selection. */
async function copyText(text, pre) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const range = document.createRange();
    range.selectNodeContents(pre);
    const selection = getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    return document.execCommand('copy');
  }
}

export function createEventDetail() {
  const dialog = byId('detail');
  const title = byId('detail-title');
  const error = byId('detail-error');
  const summary = byId('detail-summary');
  const payload = byId('detail-payload');
  const copyStatus = byId('detail-copy-status');
  const activities = byId('detail-activities');
  const changes = byId('detail-changes');
  const recipientsTotal = byId('detail-recipients-total');
  const recipients = byId('detail-recipients');
  const more = byId('detail-recipients-more');
  const decisions = byId('detail-decisions');
  const replay = byId('detail-replay');
  const replayStatus = byId('detail-replay-status');
  const trayChanges = createTrayChanges(path, error);
  let key;
  let opener;
  /** The next recipients page's cursor; `start`: the list so far came with the event, not paged. */
  let recipientsCursor;
  /** Counts the events shown: a page asked for an earlier one is dropped when it arrives. */
  let shown = 0;

  function clear() {
    shown += 1;
    title.textContent = 'Loading event…';
    for (const element of [
      summary,
      payload,
      copyStatus,
      activities,
      changes,
      recipientsTotal,
      recipients,
      decisions,
      replayStatus,
    ]) {
      element.replaceChildren();
    }
    showError(error);
    more.hidden = true;
    trayChanges.clear();
  }

  function fill(view) {
    title.textContent = `${view.event} event`;
    const facts = [
      ['Key', h('span', { className: 'mono' }, view.key)],
      ['Webhook', view.webhook],
      ['Status', view.status],
      ...(view.userId ? [['User', view.userId]] : []),
      ...(view.communityId ? [['Community', view.communityId]] : []),
      ...(view.moderation ? [['Moderation', view.moderation]] : []),
      ...(view.error ? [['Error', view.error]] : []),
      ['Received', timeOf(view.receivedAt)],
      ['Stored', timeOf(view.storedAt)],
      ...(view.appliedAt ? [['Applied to the tray', timeOf(view.appliedAt)]] : []),
      ['Expires', timeOf(view.expiresAt)],
    ];
    summary.replaceChildren(...facts.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]));
    payload.textContent = JSON.stringify(view.data, null, 2);
    const acts = view.activities ?? [];
    const others = changeItems(view);
    const none = others.length ? 'None.' : 'None: this event changes no tray.';
    activities.replaceChildren(...(acts.length ? acts.map(activityRow) : [emptyRow(5, none)]));
    changes.replaceChildren(...others);
    const decided = view.decisions ?? [];
    decisions.replaceChildren(...(decided.length ? decided.map(decisionRow) : [emptyRow(5, 'None.')]));
    const r = view.recipients ?? { users: [], total: 0 };
    const community = r.community
      ? ` Community ${r.community.communityId}: every member at ${new Date(r.community.at).toLocaleString()}.`
      : '';
    recipientsTotal.textContent = `${r.total} user${r.total === 1 ? '' : 's'} whose tray this event changed.${community}`;
    recipients.replaceChildren(...r.users.map((user) => h('li', {}, user)));
    recipientsCursor = r.nextCursor ?? (r.total > r.users.length ? 'start' : null);
    more.hidden = !recipientsCursor;
    trayChanges.fill(view.key, view.trayChanges);
  }

  async function moreRecipients() {
    more.disabled = true;
    // The detail may show another event (or the same one anew) by the time the page arrives.
    const asked = shown;
    try {
      const fromStart = recipientsCursor === 'start';
      const page = await getJson(`${path(key)}/recipients`, {
        limit: pageLimit(RECIPIENTS_PAGE),
        cursor: fromStart ? undefined : recipientsCursor,
      });
      if (asked !== shown) return;
      const items = page.items.map((user) => h('li', {}, user));
      if (fromStart) recipients.replaceChildren(...items);
      else recipients.append(...items);
      recipientsCursor = page.nextCursor;
      more.hidden = !recipientsCursor;
    } catch (failure) {
      if (asked === shown) showError(error, failure);
    } finally {
      more.disabled = false;
    }
  }

  byId('detail-close').addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    key = undefined;
    opener?.focus();
  });
  byId('detail-copy').addEventListener('click', async () => {
    const copied = await copyText(payload.textContent, payload);
    copyStatus.textContent = copied ? 'Payload copied.' : 'Copy refused: select the payload and copy it.';
  });
  more.addEventListener('click', moreRecipients);
  replay.addEventListener('click', async () => {
    replay.disabled = true;
    replayStatus.textContent = 'Replaying…';
    try {
      const result = await postJson(`${path(key)}/replay`);
      replayStatus.textContent = `Replayed: ${result.status ?? 'queued'}.`;
    } catch (failure) {
      replayStatus.textContent = `Replay failed: ${failure.message}`;
    } finally {
      replay.disabled = false;
    }
  });

  return {
    /** Opens the dialog for the event `eventKey`; `from` gets the focus back when it closes. */
    async open(eventKey, from) {
      key = eventKey;
      opener = from;
      clear();
      if (!dialog.open) dialog.showModal();
      try {
        const view = await getJson(path(eventKey));
        if (key === eventKey) fill(view);
      } catch (failure) {
        title.textContent = 'Event';
        showError(error, failure);
      }
    },
  };
}
