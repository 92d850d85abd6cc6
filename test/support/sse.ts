/** A Server-Sent-Events reader over fetch (the way the page reads /events), for tests. */
export interface SseEvent {
  event: string;
  id?: string;
  data: any;
}

export interface SseStream {
  events: SseEvent[];
  /** Resolves with the first event (already received or future) that matches. */
  next(match: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  close(): void;
  /** Resolves when the server ends the stream (or close() aborts it). */
  ended: Promise<void>;
}

/** `key` undefined: no Authorization header (the credential is in `headers`, e.g. a page session cookie). */
export async function openSse(url: string, key: string | undefined, headers: Record<string, string> = {}): Promise<SseStream> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { ...(key !== undefined ? { authorization: `Bearer ${key}` } : {}), accept: 'text/event-stream', ...headers }, signal: abort.signal });
  if (res.status !== 200 || !res.body) throw new Error(`SSE ${url}: HTTP ${res.status} ${await res.text()}`);
  const events: SseEvent[] = [];
  const waiters: { match: (e: SseEvent) => boolean; resolve: (e: SseEvent) => void }[] = [];
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const ended = (async () => {
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const e: SseEvent = { event: 'message', data: undefined };
          let data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith('event:')) e.event = line.slice(6).trim();
            else if (line.startsWith('id:')) e.id = line.slice(3).trim();
            else if (line.startsWith('data:')) data += line.slice(5).trim();
          }
          if (!data) continue;
          e.data = JSON.parse(data);
          events.push(e);
          for (const w of [...waiters]) {
            if (w.match(e)) {
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve(e);
            }
          }
        }
      }
    } catch {
      // Aborted by close(): the stream simply ends.
    }
  })();
  return {
    events,
    next(match, timeoutMs = 20_000) {
      const seen = events.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching SSE event within ${timeoutMs} ms; got ${JSON.stringify(events.map((x) => x.event))}`)), timeoutMs);
        waiters.push({ match, resolve: (e) => (clearTimeout(timer), resolve(e)) });
      });
    },
    close: () => abort.abort(),
    ended,
  };
}
