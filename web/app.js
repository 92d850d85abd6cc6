/* global window, document, fetch, sessionStorage, navigator, location, history, TextDecoderStream, AbortController, URLSearchParams, setTimeout, clearTimeout, console */
// Jarvis memory page: memories with importance and freshness bars, a memory's decision history,
// today's digest, reminders, and live toasts (fired reminders, nudges, digests) over Server-Sent
// Events read with fetch streaming.
// Sign-in: the page opens from a link `/app#code=…` holding a one-time code for one user. The code
// leaves the address bar at once and is exchanged (POST /app/session) for an HttpOnly session
// cookie that only that user's API paths receive; this script never sees a key or the session.
'use strict';

const I18N = {
  zh: {
    title: 'Jarvis 记忆', offline: '未连接', online: '实时', logout: '退出', loginTitle: '打开你的记忆',
    none: '请通过助手发给你的链接打开这个页面。', signingIn: '正在登录……',
    expired: '登录已过期。请让助手给你一个新链接。', used: '这个链接已经用过了（每个链接只能用一次）。请让助手给你一个新链接。',
    invalid: '这个链接无效或已过期。请让助手给你一个新链接。', signed_out: '你已退出。要再次打开，请让助手给你一个新链接。', digest: '今日摘要',
    digestNow: '现在生成', noDigest: '今天的摘要还没生成（每天会在你设定的时间自动生成）。', reminders: '提醒', reminderText: '提醒我……',
    add: '添加', memories: '记忆', importance: '重要性', decay: '新鲜度', history: '决策历史',
    historyHint: '点一条记忆，看它是怎么被记住、更新或遗忘的。', noMemories: '还没有记忆。', noReminders: '没有提醒。',
    later: '稍后', gotIt: '知道了', close: '关闭', min10: '10 分钟', hour1: '1 小时', tomorrow: '明天',
    snoozedUntil: '已推迟到 {t}', due: '{t} 到期', repeats: '重复', freq: '次数',
    scheduled: '待提醒', snoozed: '已推迟', fired: '已提醒', dismissed: '已完成', cancelled: '已取消', failed: '操作失败：{m}',
    via_extraction: '来自对话', via_api: '由应用写入', via_mcp: '由助手工具写入',
    pendingNote: '待确认：这条指令不是你说的，而是{via}。确认前助手不会把它当作你的长期指令。', confirm: '确认', confirmed: '已确认',
  },
  en: {
    title: 'Jarvis Memory', offline: 'offline', online: 'live', logout: 'Sign out', loginTitle: 'Open your memory',
    none: 'Open this page through the link your assistant gives you.', signingIn: 'Signing in…',
    expired: 'Your session has expired. Ask your assistant for a new link.', used: 'This link has already been used (each link works once). Ask your assistant for a new link.',
    invalid: 'This link is not valid or has expired. Ask your assistant for a new link.', signed_out: 'You have signed out. Ask your assistant for a new link to come back.', digest: "Today's digest",
    digestNow: 'Write now', noDigest: "Today's digest has not been written yet (it comes daily at your digest time).", reminders: 'Reminders', reminderText: 'Remind me to…',
    add: 'Add', memories: 'Memories', importance: 'importance', decay: 'freshness', history: 'Decision history',
    historyHint: 'Pick a memory to see how it was learned, updated or forgotten.', noMemories: 'No memories yet.', noReminders: 'No reminders.',
    later: 'Later', gotIt: 'Got it', close: 'Close', min10: '10 min', hour1: '1 hour', tomorrow: 'Tomorrow',
    snoozedUntil: 'Snoozed until {t}', due: 'due {t}', repeats: 'repeats', freq: 'count',
    scheduled: 'scheduled', snoozed: 'snoozed', fired: 'fired', dismissed: 'done', cancelled: 'cancelled', failed: 'Failed: {m}',
    via_extraction: 'from a conversation', via_api: 'written by an app', via_mcp: 'written by an assistant tool',
    pendingNote: 'Waiting for you: you did not say this, it was {via}. Until you confirm it, the assistant does not treat it as your standing instruction.', confirm: 'Confirm', confirmed: 'Confirmed',
  },
};

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
    await api('POST', `/memories/${id}/confirm`);
    infoToast({ title: '✓', body: t('confirmed') }, 3000);
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

// The names of the memory types come from the server's one definition of the types; until they
// arrive (or if they cannot), a memory shows its type's key.
async function loadTypeNames() {
  try {
    const res = await fetch('/app/memory-types.json', { credentials: 'omit' });
    if (!res.ok) return;
    const { labels } = await res.json();
    for (const lang of Object.keys(I18N)) Object.assign(I18N[lang], labels[lang]);
  } catch (err) {
    console.warn('memory type names unavailable', err);
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
  await Promise.all([loadDigest(), loadReminders(), loadTypeNames().then(loadMemories)]).catch(showError);
}

async function init() {
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
      $('#digest-text').textContent = d.text;
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
