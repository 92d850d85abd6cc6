/* global window, document, fetch, sessionStorage, navigator, location, history, TextDecoderStream, AbortController, URLSearchParams, setTimeout, console */
// Jarvis memory page: memories with importance and freshness bars, a memory's decision history,
// today's digest, reminders, and live toasts (fired reminders, nudges, digests) over Server-Sent
// Events read with fetch streaming, so the API key travels only in the Authorization header.
'use strict';

const I18N = {
  zh: {
    title: 'Jarvis 记忆', offline: '未连接', online: '实时', logout: '退出', loginTitle: '打开你的记忆', userId: '用户 ID',
    apiKey: 'API 密钥', open: '打开', loginHint: '密钥只保存在本标签页，不会出现在网址或服务器日志里。', digest: '今日摘要',
    digestNow: '现在生成', noDigest: '今天的摘要还没生成（每天会在你设定的时间自动生成）。', reminders: '提醒', reminderText: '提醒我……',
    add: '添加', memories: '记忆', importance: '重要性', decay: '新鲜度', history: '决策历史',
    historyHint: '点一条记忆，看它是怎么被记住、更新或遗忘的。', noMemories: '还没有记忆。', noReminders: '没有提醒。',
    later: '稍后', gotIt: '知道了', close: '关闭', min10: '10 分钟', hour1: '1 小时', tomorrow: '明天',
    snoozedUntil: '已推迟到 {t}', due: '{t} 到期', repeats: '重复', freq: '次数',
    scheduled: '待提醒', snoozed: '已推迟', fired: '已提醒', dismissed: '已完成', cancelled: '已取消', failed: '操作失败：{m}',
    fact: '事实', preference: '偏好', goal: '目标', pain_point: '痛点', event: '事件', instruction: '指令', decision: '决定', assistant_contribution: '助手建议',
  },
  en: {
    title: 'Jarvis Memory', offline: 'offline', online: 'live', logout: 'Sign out', loginTitle: 'Open your memory', userId: 'User id',
    apiKey: 'API key', open: 'Open', loginHint: 'The key stays in this tab only; it never appears in a URL or a server log.', digest: "Today's digest",
    digestNow: 'Write now', noDigest: "Today's digest has not been written yet (it comes daily at your digest time).", reminders: 'Reminders', reminderText: 'Remind me to…',
    add: 'Add', memories: 'Memories', importance: 'importance', decay: 'freshness', history: 'Decision history',
    historyHint: 'Pick a memory to see how it was learned, updated or forgotten.', noMemories: 'No memories yet.', noReminders: 'No reminders.',
    later: 'Later', gotIt: 'Got it', close: 'Close', min10: '10 min', hour1: '1 hour', tomorrow: 'Tomorrow',
    snoozedUntil: 'Snoozed until {t}', due: 'due {t}', repeats: 'repeats', freq: 'count',
    scheduled: 'scheduled', snoozed: 'snoozed', fired: 'fired', dismissed: 'done', cancelled: 'cancelled', failed: 'Failed: {m}',
    fact: 'fact', preference: 'preference', goal: 'goal', pain_point: 'pain point', event: 'event', instruction: 'instruction', decision: 'decision', assistant_contribution: 'assistant',
  },
};

const state = { user: '', key: '', lang: 'zh', lastSeq: '', abort: null, toasts: new Map(), selected: '' };

const $ = (sel) => document.querySelector(sel);
const t = (k, vars) => (I18N[state.lang][k] ?? k).replace(/\{(\w+)\}/g, (_, v) => (vars && vars[v]) ?? '');
const el = (tag, attrs, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') node.className = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) node.setAttribute(k, String(v));
  }
  for (const c of children.flat()) if (c !== undefined && c !== null) node.append(c instanceof window.Node ? c : String(c));
  return node;
};
const fmtTime = (iso) => new Date(iso).toLocaleString(state.lang === 'zh' ? 'zh-CN' : 'en-GB', { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });

async function api(method, path, body) {
  const res = await fetch(`/v1/users/${encodeURIComponent(state.user)}${path}`, {
    method,
    headers: { authorization: `Bearer ${state.key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = res.status === 204 ? {} : await res.json().catch(() => ({}));
  if (!res.ok) throw new Error((data.error && (data.error.code + ': ' + data.error.message)) || res.statusText);
  return data;
}

function applyLanguage() {
  document.documentElement.lang = state.lang === 'zh' ? 'zh-CN' : 'en';
  for (const node of document.querySelectorAll('[data-i18n]')) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll('[data-i18n-placeholder]')) node.placeholder = t(node.dataset.i18nPlaceholder);
  $('#lang').textContent = state.lang === 'zh' ? 'EN' : '中文';
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
  return [el('span', {}, label), el('span', { class: 'bar-track', title: `${pct}%` }, el('span', { class: `bar-fill ${cls}`, style: `width:${pct}%` }))];
}

async function loadMemories() {
  const { memories } = await api('GET', '/memories?status=active&limit=100');
  const list = $('#memories');
  list.replaceChildren(...(memories.length ? memories.map((m) =>
    el('li', { 'data-memory-id': m.id, class: m.id === state.selected ? 'selected' : '', onclick: () => showHistory(m.id) },
      el('span', { class: `type t-${m.type}` }, t(m.type)),
      el('div', { class: 'grow' }, m.text,
        el('div', { class: 'bars' }, ...bar(t('importance'), m.importance, 'imp'), ...bar(t('decay'), m.decayScore, 'dec')),
        el('div', { class: 'meta' }, `${m.importanceLevel} · ${t('freq')} ${m.frequencyCount} · ${fmtTime(m.updatedAt)}`)))) : [el('li', { class: 'meta' }, t('noMemories'))]));
}

async function showHistory(id) {
  state.selected = id;
  for (const li of document.querySelectorAll('#memories li')) li.classList.toggle('selected', li.dataset.memoryId === id);
  const { events } = await api('GET', `/memories/${id}/history`);
  $('#history-hint').hidden = true;
  $('#history').replaceChildren(...events.map((e) =>
    el('li', {}, el('b', {}, e.action), ' ', e.reason, el('div', { class: 'meta' }, `${fmtTime(e.createdAt)} · ${e.actor}${e.conversationId ? ' · ' + e.conversationId : ''}`))));
}

// ---------------------------------------------------------------- toasts

function closeToast(key) {
  const node = state.toasts.get(key);
  if (node) node.remove();
  state.toasts.delete(key);
}

function showError(err) {
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
    const headers = { authorization: `Bearer ${state.key}`, accept: 'text/event-stream' };
    if (state.lastSeq) headers['last-event-id'] = state.lastSeq;
    const res = await fetch(`/v1/users/${encodeURIComponent(state.user)}/events`, { headers, signal: abort.signal });
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

function readCredentials() {
  // The key may arrive in the fragment (never sent to the server); it is moved to this tab's storage.
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.get('key')) sessionStorage.setItem('jarvis.key', hash.get('key'));
  if (hash.get('user')) sessionStorage.setItem('jarvis.user', hash.get('user'));
  if (hash.get('lang')) sessionStorage.setItem('jarvis.lang', hash.get('lang'));
  if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  state.key = sessionStorage.getItem('jarvis.key') || '';
  state.user = sessionStorage.getItem('jarvis.user') || '';
  state.lang = sessionStorage.getItem('jarvis.lang') || (navigator.language.startsWith('zh') ? 'zh' : 'en');
}

async function start() {
  $('#login').hidden = true;
  $('#app').hidden = false;
  $('#who').textContent = state.user;
  applyLanguage();
  void connectEvents();
  await Promise.all([loadDigest(), loadReminders(), loadMemories()]).catch(showError);
}

function init() {
  readCredentials();
  applyLanguage();
  $('#lang').addEventListener('click', () => {
    state.lang = state.lang === 'zh' ? 'en' : 'zh';
    sessionStorage.setItem('jarvis.lang', state.lang);
    applyLanguage();
    if (state.user) void Promise.all([loadReminders(), loadMemories()]).catch(showError);
  });
  $('#logout').addEventListener('click', () => {
    sessionStorage.clear();
    location.reload();
  });
  $('#login').addEventListener('submit', (e) => {
    e.preventDefault();
    const form = new window.FormData(e.target);
    state.user = String(form.get('user')).trim();
    state.key = String(form.get('key')).trim();
    sessionStorage.setItem('jarvis.user', state.user);
    sessionStorage.setItem('jarvis.key', state.key);
    void start();
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
  if (state.user && state.key) void start();
  else $('#login').hidden = false;
}

// Exposed for the browser test and for debugging in the console.
window.jarvisPage = { state, loadReminders, loadMemories };
init();
