/*
 * The hang list on the page: its items, grouped by signature (the same hang again: a group's
 * line "lock · image-loader ×14, 9.2 s in all, last 2 s ago" over its newest hang, expanding to
 * all of them), "Load more", the live hangs' running times and the header's HANG badge. The
 * entries are state.js's (merged and grouped by hang-list.js); this draws them.
 * A click on an item goes to main.js (onSelect), and so does each tick of a live hang
 * (onLiveTick), for the detail pane to follow it.
 */
import { ApiError, api } from './api.js';
import { byId, el, setText, toast } from './dom.js';
import { basename, fmtDuration, fmtWall, stateLabel } from './format.js';
import { elapsedMs, groupHangs, groupLine } from './hang-list.js';
import {
  addHangPage, appPid, hangEntries, hangEvicted, hangNextOffset, hangSignatures, hangTotal, isSelectedHang,
  setSignatures,
} from './state.js';

const HANG_PAGE = 20;

/* A page of the stored hangs: the newest (reset) or the next older one. With the newest, the
 * store's counts by signature (the groups' lines count every hang, not the loaded ones). */
export async function loadHangs(reset) {
  const offset = reset ? 0 : hangNextOffset();
  const [page, signatures] = await Promise.all([
    api('/api/v1/hangs?limit=' + HANG_PAGE + '&offset=' + offset),
    reset ? api('/api/v1/signatures').catch(() => null) : null]);
  addHangPage(page, offset, reset);
  if (signatures) setSignatures(signatures);
  return page;
}

export function createHangList({ onSelect, onLiveTick }) {
  const nodes = new Map(); // an entry's key -> its item
  const groupNodes = new Map(); // a signature's group key -> { item, header, list }
  const expanded = new Set(); // the group keys the user opened
  let loadingMore = false;
  let liveTimer = 0;
  setInterval(renderGroupLines, 1000); // "last 2 s ago" moves on

  async function loadMore() {
    if (loadingMore) return;
    loadingMore = true;
    const button = byId('hang-more');
    button.disabled = true;
    button.textContent = 'Loading…';
    try {
      await loadHangs(false);
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 401)) toast('Could not load more hangs: ' + e.message);
    } finally {
      loadingMore = false;
      button.disabled = false;
      renderCount();
    }
  }

  /* The store's counts came (GET /api/v1/signatures): the groups' lines. */
  function renderSignatures() {
    placeItems();
    renderCount();
  }

  /* One entry changed (state.js's "hang" event): its item, the groups and order (an ended
   * hang's signature may put it in a group), the count. */
  function renderEntry({ entry }) {
    renderItem(entry);
    placeItems();
    renderCount();
  }

  /* "20 of 110": the hangs listed of every hang counted; the store keeps a bounded number of
   * reports, and the hangs whose reports it deleted are counted, never listed. */
  function renderCount() {
    const shown = hangEntries().size;
    const evicted = hangEvicted();
    const total = Math.max(hangTotal() + evicted, shown);
    setText('hang-count', total ? shown + (shown < total ? ' of ' + total : '') : '');
    const count = byId('hang-count');
    count.title = evicted ? evicted + ' of them without a report: the store keeps ' + hangTotal() +
      ' (config.report_max_count) and deleted the oldest' : '';
    byId('hang-empty').hidden = shown > 0;
    const more = byId('hang-more');
    more.hidden = hangNextOffset() >= hangTotal();
    if (!loadingMore) more.textContent = 'Load more (' + Math.max(0, hangTotal() - hangNextOffset()) + ' older)';
  }

  /* Puts nodes into parent in this order; a node moves only when it is out of place, so the
   * pulse of a live entry is not restarted by every update. */
  function order(parent, wanted) {
    wanted.forEach((node, i) => {
      if (parent.children[i] !== node) parent.insertBefore(node, parent.children[i] || null);
    });
    while (parent.children.length > wanted.length) parent.lastChild.remove();
  }

  /* Newest first: a hang alone as its item, two or more of one signature as a group. */
  function placeItems() {
    const items = [];
    for (const group of groupHangs(hangEntries(), hangSignatures())) {
      if (group.count < 2) {
        items.push(nodes.get(group.entries[0].key));
        continue;
      }
      const g = groupNode(group);
      order(g.list, group.entries.map((entry) => nodes.get(entry.key)));
      items.push(g.item);
    }
    order(byId('hang-list'), items);
  }

  /* A group's item: its line (a button that opens or closes it) over its hangs' items; closed,
   * only the newest shows. */
  function groupNode(group) {
    let g = groupNodes.get(group.key);
    if (!g) {
      const header = el('button', 'hang-group-line');
      header.type = 'button';
      header.dataset.testid = 'hang-group';
      header.addEventListener('click', () => {
        if (expanded.has(group.key)) expanded.delete(group.key);
        else expanded.add(group.key);
        renderGroup(g, groupOf(group.key));
      });
      const list = el('ol', 'hang-group-list');
      g = { item: el('li', 'hang-group', header, list), header, list, key: group.key };
      groupNodes.set(group.key, g);
    }
    renderGroup(g, group);
    return g;
  }

  function groupOf(key) {
    return groupHangs(hangEntries(), hangSignatures()).find((group) => group.key === key);
  }

  function renderGroup(g, group) {
    if (!group) return;
    const open = expanded.has(group.key);
    g.header.textContent = groupLine(group, Date.now(), fmtDuration);
    g.header.title = 'signature ' + group.signature + (open ? '' : ': show the ' + group.listed + ' listed');
    g.header.setAttribute('aria-expanded', String(open));
    g.item.dataset.signature = group.signature;
    g.item.dataset.count = String(group.count);
    g.item.classList.toggle('open', open);
  }

  function renderGroupLines() {
    if (groupNodes.size === 0) return;
    for (const group of groupHangs(hangEntries(), hangSignatures()))
      if (groupNodes.has(group.key) && group.count >= 2) renderGroup(groupNodes.get(group.key), group);
  }

  function renderItem(entry) {
    if (!nodes.has(entry.key)) {
      const button = el('button', 'hang-item');
      button.type = 'button';
      button.dataset.testid = 'hang-item';
      button.addEventListener('click', () => onSelect(entry.key));
      button.append(
        el('span', 'hang-state'),
        el('span', 'hang-fn'),
        el('span', 'hang-duration'),
        el('span', 'hang-meta'));
      nodes.set(entry.key, el('li', null, button));
    }
    const button = nodes.get(entry.key).firstChild;
    const [stateNode, fnNode, durationNode, metaNode] = button.children;
    button.dataset.state = entry.state;
    button.dataset.key = entry.key;
    if (entry.id) button.dataset.id = entry.id;
    button.classList.toggle('selected', isSelectedHang(entry.key));
    stateNode.textContent = stateLabel(entry.state);
    // No symbol for the innermost frame: its module says at least where it was.
    const fn = entry.label || entry.function || (entry.module ? basename(entry.module) : null);
    fnNode.textContent = fn || (entry.state === 'in_progress' ? 'sampling…' : '(unknown function)');
    fnNode.classList.toggle('unknown', !entry.label && !entry.function);
    fnNode.title = entry.label && entry.function ? entry.label + ' (in ' + entry.function + ')'
      : fn === entry.function || fn === entry.label ? fn || '' : entry.module ? entry.module + ' (no symbol)' : '';
    durationNode.textContent = fmtDuration(elapsedMs(entry, performance.now()));
    const meta = [fmtWall(entry.start_wall_ms)];
    if (entry.startup) meta.push('start-up');
    if (entry.module && entry.function) meta.push(basename(entry.module));
    if (entry.samples) meta.push(entry.samples + ' samples');
    const pid = appPid();
    const earlier = entry.pid && pid && entry.pid !== pid;
    if (earlier) meta.push('earlier launch');
    metaNode.textContent = meta.join(' · ');
    metaNode.title = earlier ? 'from an earlier launch of the app, pid ' + entry.pid : '';
  }

  /* The selection changed: the selected hang's item is marked, no other. */
  function renderSelection() {
    for (const [key, node] of nodes) node.firstChild.classList.toggle('selected', isSelectedHang(key));
  }

  /* Live hangs count up between events; this runs only while one lasts. */
  function tickLive() {
    let longest = -1;
    for (const entry of hangEntries().values()) {
      if (entry.state !== 'in_progress' || !entry.live) continue;
      const elapsed = elapsedMs(entry, performance.now());
      longest = Math.max(longest, elapsed);
      nodes.get(entry.key).querySelector('.hang-duration').textContent = fmtDuration(elapsed);
      onLiveTick(entry);
    }
    if (longest < 0) {
      clearInterval(liveTimer);
      liveTimer = 0;
    }
    showBadge(longest >= 0, longest);
  }

  function startLiveTimer() {
    if (!liveTimer) liveTimer = setInterval(tickLive, 100);
  }

  /* A hang began: the badge at once, then the running times. */
  function hangBegan(entry) {
    showBadge(true, entry.elapsedBase);
    startLiveTimer();
  }

  /* The header's badge, like the HUD's: "HANG 1.2 s" while the main thread is stuck. */
  function showBadge(on, ms) {
    const badge = byId('hang-badge');
    if (!badge) return;
    badge.hidden = !on;
    if (on) badge.textContent = 'HANG ' + (ms > 0 ? (ms / 1000).toFixed(1) + ' s' : '');
  }

  return { loadMore, renderEntry, renderCount, renderSignatures, renderSelection, tickLive, startLiveTimer, hangBegan };
}
