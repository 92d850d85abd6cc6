/* global window, document, fetch, sessionStorage, navigator, location, history, TextDecoderStream, AbortController, URLSearchParams, setTimeout, clearTimeout, console */
// Jarvis memory page: memories with importance and freshness bars, a memory's decision history,
// today's digest, reminders, and live toasts (fired reminders, nudges, digests) over Server-Sent
// Events read with fetch streaming.
// Sign-in: the page opens from a link `/app#code=…` holding a one-time code for one user. The code
// leaves the address bar at once and is exchanged (POST /app/session) for an HttpOnly session
// cookie that only that user's API paths receive; this script never sees a key or the session.
'use strict';

// The page's words (web/words.json) and the names of the memory types (src/core/memory-types.ts),
// both from the server (/app/words.json): the page keeps no copy of either.
const I18N = { zh: {}, en: {} };

const state = { user: '', expiresAt: '', lang: 'zh', lastSeq: '', abort: null, expiryTimer: null, toasts: new Map(), selected: '' };

const $ = (sel) => document.querySelector(sel);
const t = (k, vars) => (I18N[state.lang][k] ?? k).replace(/\{(\w+)\}/g, (_, v) => (vars && vars[v]) ?? '');
const el = (tag, attrs, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') node.className = v;
    // Through CSSOM: the page's CSP allows no inline style attributes.
    else if (k === 'style') Object.assign(node.style, v);
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) node.setAttribute(k, String(v));
  }
  for (const c of children.flat()) if (c !== undefined && c !== null) node.append(c instanceof window.Node ? c : String(c));
  return node;
};
const fmtTime = (iso) => new Date(iso).toLocaleString(state.lang === 'zh' ? 'zh-CN' : 'en-GB', { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });

class SignedOut extends Error {}

// Every call carries the page session cookie (same origin only); a 401 means the session is over.
async function api(method, path, body) {
  const res = await fetch(`/v1/users/${encodeURIComponent(state.user)}${path}`, {
    method,
    credentials: 'same-origin',
    // The server refuses a state-changing page call without it (CSRF, src/api/page-session.ts).
    headers: { 'x-memory-page': '1', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = res.status === 204 ? {} : await res.json().catch(() => ({}));
  if (res.status === 401) {
    signedOut(data.error && data.error.details && data.error.details.reason === 'signed_out' ? 'signed_out' : 'expired');
    throw new SignedOut('signed out');
  }
  if (!res.ok) throw new Error((data.error && (data.error.code + ': ' + data.error.message)) || res.statusText);
  return data;
}

function applyLanguage() {
  document.documentElement.lang = state.lang === 'zh' ? 'zh-CN' : 'en';
  for (const node of document.querySelectorAll('[data-i18n]')) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll('[data-i18n-placeholder]')) node.placeholder = t(node.dataset.i18nPlaceholder);
  $('#lang').textContent = state.lang === 'zh' ? 'EN' : '中文';
  $('#signed-out-text').textContent = t($('#signed-out-text').dataset.reason);
  setLive($('#live').dataset.state === 'on');
}

function setLive(on) {
  const live = $('#live');
  live.dataset.state = on ? 'on' : 'off';
  live.lastChild.textContent = t(on ? 'online' : 'offline');
}

// ---------------------------------------------------------------- data views

async function loadDigest() {
  const { digests } = await api('GET', '/digests?days=1');
  $('#digest-text').textContent = digests[0] ? digests[0].text : t('noDigest');
}

function reminderRow(r) {
  const when = r.status === 'snoozed' && r.snoozedUntil ? t('snoozedUntil', { t: fmtTime(r.snoozedUntil) }) : t('due', { t: fmtTime(r.dueAt) });
  const open = r.status !== 'dismissed' && r.status !== 'cancelled';
  return el('li', { 'data-reminder-id': r.id, 'data-status': r.status },
    el('span', { class: `status ${r.status}` }, t(r.status)),
    el('span', { class: 'grow' }, r.text, el('div', { class: 'meta' }, when, r.rrule ? ` · ${t('repeats')} ${r.rrule}` : '')),
    open ? el('button', { class: 'quiet', type: 'button', 'data-action': 'dismiss', onclick: () => dismiss(r.id) }, t('gotIt')) : null);
}

// Each reminder event reloads the list; two reloads in flight may answer out of order, and only
// the answer to the latest request may be drawn (an older one would put back an older status).
let remindersAsked = 0;

async function loadReminders() {
  const asked = ++remindersAsked;
  const { reminders } = await api('GET', '/reminders?limit=50');
  if (asked !== remindersAsked) return;
  const list = $('#reminders');
  list.replaceChildren(...(reminders.length ? reminders.map(reminderRow) : [el('li', { class: 'meta' }, t('noReminders'))]));
  // A reminder that fired while the page was closed still offers its buttons.
  for (const r of reminders) if (r.status === 'fired' && !state.toasts.has(r.id)) reminderToast({ reminderId: r.id, title: '⏰', body: r.text });
}

function bar(label, value, cls) {
  const pct = Math.round(Math.max(0, Math.min(1, value)) * 100);
  return [el('span', {}, label), el('span', { class: 'bar-track', title: `${pct}%` }, el('span', { class: `bar-fill ${cls}`, style: { width: `${pct}%` } }))];
}

// A memory an app or an agent wrote shows where it came from; an instruction it wrote waits for
// the user's confirm before the assistant treats it as the user's own.
async function confirmMemory(id) {
  try {
    // 202: the server's wait ran out before the confirm was applied; it still will be.
    const answer = await api('POST', `/memories/${id}/confirm`);
    infoToast({ title: '✓', body: t(answer.pending ? 'stillWorking' : 'confirmed') }, 3000);
    await loadMemories();
  } catch (err) {
    showError(err);
  }
}

function memoryRow(m) {
  const via = m.via || 'extraction';
  return el('li', { 'data-memory-id': m.id, 'data-via': via, 'data-pending': String(Boolean(m.pending)), class: m.id === state.selected ? 'selected' : '', onclick: () => showHistory(m.id) },
    el('span', { class: `type t-${m.type}` }, t(m.type)),
    el('div', { class: 'grow' }, m.text,
      m.pending ? el('div', { class: 'pending-note' }, t('pendingNote', { via: t(`via_${via}`) })) : null,
      el('div', { class: 'bars' }, ...bar(t('importance'), m.importance, 'imp'), ...bar(t('decay'), m.decayScore, 'dec')),
      el('div', { class: 'meta' }, el('span', { class: `via v-${via}` }, t(`via_${via}`)), ` · ${m.importanceLevel} · ${t('freq')} ${m.frequencyCount} · ${fmtTime(m.updatedAt)}`)),
    m.pending ? el('button', { class: 'quiet', type: 'button', 'data-action': 'confirm', onclick: (e) => { e.stopPropagation(); confirmMemory(m.id); } }, t('confirm')) : null);
}

async function loadMemories() {
  const { memories } = await api('GET', '/memories?status=active&limit=100');
  const list = $('#memories');
  list.replaceChildren(...(memories.length ? memories.map(memoryRow) : [el('li', { class: 'meta' }, t('noMemories'))]));
}

async function showHistory(id) {
  state.selected = id;
  for (const li of document.querySelectorAll('#memories li')) li.classList.toggle('selected', li.dataset.memoryId === id);
  const { events } = await api('GET', `/memories/${id}/history`);
  $('#history-hint').hidden = true;
  $('#history').replaceChildren(...events.map((e) =>
    el('li', {}, el('b', {}, e.action), ' ', e.reason, el('div', { class: 'meta' }, `${fmtTime(e.createdAt)} · ${e.actor}${e.via ? ' · ' + t(`via_${e.via}`) : ''}${e.conversationId ? ' · ' + e.conversationId : ''}`))));
}

// ---------------------------------------------------------------- toasts

function closeToast(key) {
  const node = state.toasts.get(key);
  if (node) node.remove();
  state.toasts.delete(key);
}

function showError(err) {
  if (err instanceof SignedOut) return;
  infoToast({ title: '⚠️', body: t('failed', { m: err.message }) }, 6000);
}

function infoToast(n, ms) {
  const key = `info-${Math.random()}`;
  const node = el('div', { class: 'toast', 'data-testid': 'toast', 'data-kind': n.kind || 'info' },
    el('h3', {}, n.title), el('p', {}, n.body),
    el('div', { class: 'actions' }, el('button', { class: 'quiet', type: 'button', onclick: () => closeToast(key) }, t('close'))));
  state.toasts.set(key, node);
  $('#toasts').append(node);
  if (ms) setTimeout(() => closeToast(key), ms);
}

function secondsUntilTomorrowMorning() {
  const now = new Date();
  const next = new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1, 9, 0, 0);
  return Math.round((next.getTime() - now.getTime()) / 1000);
}

async function snooze(id, seconds, toast) {
  try {
    await api('POST', `/reminders/${id}/snooze`, { seconds });
    if (toast) {
      toast.querySelector('.note').textContent = t('snoozedUntil', { t: fmtTime(new Date(Date.now() + seconds * 1000).toISOString()) });
      toast.querySelector('.menu').hidden = true;
      toast.dataset.state = 'snoozed';
    }
  } catch (err) {
    showError(err);
  }
}

async function dismiss(id) {
  try {
    await api('POST', `/reminders/${id}/dismiss`, {});
    closeToast(id);
  } catch (err) {
    showError(err);
  }
}

function reminderToast(n) {
  const id = n.reminderId;
  closeToast(id);
  const menu = el('div', { class: 'menu', hidden: true },
    el('button', { type: 'button', 'data-snooze': 600, onclick: () => snooze(id, 600, node) }, t('min10')),
    el('button', { type: 'button', 'data-snooze': 3600, onclick: () => snooze(id, 3600, node) }, t('hour1')),
    el('button', { type: 'button', 'data-snooze': 'tomorrow', onclick: () => snooze(id, secondsUntilTomorrowMorning(), node) }, t('tomorrow')));
  const node = el('div', { class: 'toast', 'data-testid': 'toast', 'data-kind': 'reminder', 'data-reminder-id': id },
    el('h3', {}, n.title), el('p', {}, n.body), el('div', { class: 'note' }),
    el('div', { class: 'actions' },
      el('button', { class: 'quiet', type: 'button', 'data-action': 'later', onclick: () => { menu.hidden = !menu.hidden; } }, `${t('later')} ▾`),
      el('button', { type: 'button', 'data-action': 'dismiss', onclick: () => dismiss(id) }, t('gotIt')),
      menu));
  state.toasts.set(id, node);
  $('#toasts').append(node);
}

// ---------------------------------------------------------------- live events (SSE over fetch)

function handleEvent(type, data) {
  if (type === 'notification') {
    if (data.kind === 'reminder' && data.reminderId) reminderToast(data);
    else infoToast(data, data.kind === 'digest' ? 0 : 20000);
    if (data.kind === 'digest') void loadDigest().catch(showError);
  } else if (type === 'reminder') {
    if (data.status === 'dismissed' || data.status === 'cancelled') closeToast(data.id);
    void loadReminders().catch(showError);
  }
}

async function connectEvents() {
  if (state.abort) state.abort.abort();
  const abort = new AbortController();
  state.abort = abort;
  let retryMs = 3000;
  try {
    const headers = { accept: 'text/event-stream' };
    if (state.lastSeq) headers['last-event-id'] = state.lastSeq;
    const res = await fetch(`/v1/users/${encodeURIComponent(state.user)}/events`, { headers, credentials: 'same-origin', signal: abort.signal });
    if (res.status === 401) {
      signedOut('expired');
      return;
    }
    if (!res.ok || !res.body) throw new Error(`events: HTTP ${res.status}`);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let type = 'message';
        let data = '';
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) type = line.slice(6).trim();
          else if (line.startsWith('data:')) data += line.slice(5).trim();
          else if (line.startsWith('id:')) state.lastSeq = line.slice(3).trim();
          else if (line.startsWith('retry:')) retryMs = Number(line.slice(6)) || retryMs;
        }
        if (type === 'ready') setLive(true);
        else if (data) handleEvent(type, JSON.parse(data));
      }
    }
  } catch (err) {
    if (abort.signal.aborted) return;
    console.warn('event stream interrupted', err);
  }
  setLive(false);
  if (!abort.signal.aborted) setTimeout(connectEvents, retryMs);
}

// ---------------------------------------------------------------- start

function forget() {
  sessionStorage.removeItem('jarvis.user');
  sessionStorage.removeItem('jarvis.expiresAt');
  // Earlier versions of the page kept the tenant's API key here.
  sessionStorage.removeItem('jarvis.key');
}

// The code is removed from the address bar before anything else, then traded for the session cookie.
async function signIn() {
  const hash = new URLSearchParams(location.hash.slice(1));
  const code = hash.get('code');
  if (hash.get('lang')) sessionStorage.setItem('jarvis.lang', hash.get('lang'));
  if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  state.lang = sessionStorage.getItem('jarvis.lang') || (navigator.language.startsWith('zh') ? 'zh' : 'en');
  if (code) {
    forget();
    showSignedOut('signingIn');
    const res = await fetch('/app/session', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code }),
    }).catch(() => undefined);
    const data = res ? await res.json().catch(() => ({})) : {};
    if (!res || !res.ok) {
      const reason = data.error && data.error.details && data.error.details.reason;
      return reason === 'used' || reason === 'expired' ? reason : 'invalid';
    }
    sessionStorage.setItem('jarvis.user', data.userId);
    sessionStorage.setItem('jarvis.expiresAt', data.expiresAt);
  }
  state.user = sessionStorage.getItem('jarvis.user') || '';
  state.expiresAt = sessionStorage.getItem('jarvis.expiresAt') || '';
  if (!state.user) return 'none';
  if (!(Date.parse(state.expiresAt) > Date.now())) return 'expired';
  return '';
}

function showSignedOut(reason) {
  $('#app').hidden = true;
  $('#logout').hidden = true;
  $('#signed-out').hidden = false;
  const text = $('#signed-out-text');
  text.dataset.reason = reason;
  text.textContent = t(reason);
}

// The session ended (expired, signed out, refused): stop everything and say what to do.
function signedOut(reason) {
  if (state.abort) state.abort.abort();
  state.abort = null;
  if (state.expiryTimer) clearTimeout(state.expiryTimer);
  state.expiryTimer = null;
  forget();
  state.user = '';
  $('#who').textContent = '';
  setLive(false);
  for (const key of [...state.toasts.keys()]) closeToast(key);
  showSignedOut(reason);
}

// Loaded before anything is shown; if they cannot be, the page shows each word's key.
async function loadWords() {
  try {
    const res = await fetch('/app/words.json', { credentials: 'omit' });
    if (!res.ok) return;
    const { words } = await res.json();
    for (const lang of Object.keys(I18N)) Object.assign(I18N[lang], words[lang]);
  } catch (err) {
    console.warn('page words unavailable', err);
  }
}

async function start() {
  $('#signed-out').hidden = true;
  $('#app').hidden = false;
  $('#logout').hidden = false;
  $('#who').textContent = state.user;
  applyLanguage();
  // The page says so the moment the session ends, not at the next click.
  state.expiryTimer = setTimeout(() => signedOut('expired'), Math.max(0, Date.parse(state.expiresAt) - Date.now()));
  void connectEvents();
  await Promise.all([loadDigest(), loadReminders(), loadMemories()]).catch(showError);
}

async function init() {
  await loadWords();
  applyLanguage();
  $('#lang').addEventListener('click', () => {
    state.lang = state.lang === 'zh' ? 'en' : 'zh';
    sessionStorage.setItem('jarvis.lang', state.lang);
    applyLanguage();
    if (state.user) void Promise.all([loadReminders(), loadMemories()]).catch(showError);
  });
  $('#logout').addEventListener('click', async () => {
    const user = state.user;
    signedOut('signed_out');
    // Ends the session on the server too, so the cookie is worthless even if it survived somewhere.
    await fetch(`/v1/users/${encodeURIComponent(user)}/page-session`, { method: 'DELETE', credentials: 'same-origin', headers: { 'x-memory-page': '1' } }).catch(() => undefined);
  });
  $('#digest-now').addEventListener('click', async () => {
    try {
      const d = await api('POST', '/digests');
      $('#digest-text').textContent = d.pending ? t('stillWorking') : d.text;
    } catch (err) {
      showError(err);
    }
  });
  $('#new-reminder').addEventListener('submit', async (e) => {
    e.preventDefault();
    const form = new window.FormData(e.target);
    try {
      const due = new Date(String(form.get('due')));
      await api('POST', '/reminders', { text: String(form.get('text')), dueAt: due.toISOString(), timezone: Intl.DateTimeFormat().resolvedOptions().timeZone });
      e.target.reset();
      await loadReminders();
    } catch (err) {
      showError(err);
    }
  });
  sessionStorage.removeItem('jarvis.key');
  const problem = await signIn();
  applyLanguage();
  if (problem) {
    forget();
    showSignedOut(problem);
  } else void start();
}

// Exposed for the browser test and for debugging in the console.
window.jarvisPage = { state, loadReminders, loadMemories };
void init();
