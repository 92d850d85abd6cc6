import { Readable, Transform } from 'node:stream';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { userTimeZone } from '../account/settings';
import { userKeyOf } from '../api/auth';
import type { ApiDeps } from '../api/deps';
import { conversationIdSchema } from '../api/schemas';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { MEMORY_USER_HEADER } from '../mcp/tools-names';
import { appendConversationMessages } from '../conversation/conversation-messages';
import { recall, type AfterRecall, type RecallResult } from '../recall/recall';
import { policyFor, policyRefusal } from './policy';
import { completionText, injectMemory, lastUserIndex, messageText, proxyConversationId, recentTexts, recordable, StreamedAnswer, turnIds, type ChatMessage } from './chat';

/** What became of recall for a proxied request (response header `X-Memory-Recall`). */
export type ProxyRecall = 'ok' | 'degraded' | 'timeout' | 'error' | 'skipped';

export const PROXY_HEADERS = {
  /** Names the user (request). */
  user: MEMORY_USER_HEADER,
  /** The conversation to record in (request, optional) and the one recorded in (response). */
  conversation: 'x-memory-conversation',
  /** ok | degraded (some recall routes failed; what the others found was injected) | timeout | error | skipped (no user message). */
  recall: 'x-memory-recall',
  /** How many memories were injected. */
  injected: 'x-memory-injected',
} as const;

/**
 * Upstream response headers handed back with a success. The rest stays here: the upstream's
 * organisation, project and rate-limit headers describe the operator's account, not the caller's.
 */
const PASSED_HEADERS = /^(content-type|x-request-id)$/;

/** Retry-After said with an upstream 429/503: the upstream's own (bounded), else this. */
const UPSTREAM_RETRY_AFTER_SECONDS = 5;

/** An upstream answer that is not a success, in our own error shape: nothing of its body or headers is passed on. */
function upstreamError(res: Response): MemoryServiceError {
  const upstreamStatus = res.status;
  if (upstreamStatus === 429 || upstreamStatus === 503) {
    const said = Number(res.headers.get('retry-after'));
    const retryAfterSeconds = Number.isFinite(said) && said >= 1 ? Math.min(Math.ceil(said), 300) : UPSTREAM_RETRY_AFTER_SECONDS;
    return new MemoryServiceError(ErrorCode.upstreamUnavailable, `the upstream chat completions API is busy (HTTP ${upstreamStatus}); retry in ${retryAfterSeconds} s`, { upstreamStatus, retryAfterSeconds });
  }
  return new MemoryServiceError(
    ErrorCode.upstreamFailed,
    upstreamStatus >= 500 ? `the upstream chat completions API failed (HTTP ${upstreamStatus})` : `the upstream chat completions API refused the request (HTTP ${upstreamStatus})`,
    { upstreamStatus },
  );
}

const chatBody = z.looseObject({
  model: z.string().min(1).max(256),
  messages: z
    .array(z.looseObject({ role: z.string().min(1).max(64), content: z.union([z.string(), z.array(z.unknown()), z.null()]).optional() }))
    .min(1, 'at least one message')
    .max(10_000),
  stream: z.boolean().optional(),
});

type ChatBody = z.infer<typeof chatBody>;

/**
 * The proxy's refusals that need nothing stored: no upstream configured, or a field the tenant's
 * policy does not let through to the upstream (which runs on the operator's key).
 */
function refuseBeforeForwarding(deps: ApiDeps, tenantId: string | undefined, body: ChatBody): { upstream: string; policy: ReturnType<typeof policyFor> } {
  const upstream = deps.config.proxy.upstreamBaseUrl;
  if (!upstream) throw new MemoryServiceError(ErrorCode.llmUnavailable, 'the memory proxy has no upstream: set UPSTREAM_BASE_URL');
  const policy = policyFor(deps.config.proxy, tenantId);
  const refusal = policyRefusal(body, policy);
  if (refusal) throw new MemoryServiceError(ErrorCode.fieldNotAllowed, refusal.reason, { field: refusal.field });
  return { upstream, policy };
}

type Outcome = { kind: 'result'; result: RecallResult } | { kind: 'timeout' } | { kind: 'error'; err: unknown };

/** Recall within the proxy's own budget: past it the request goes on without memory (recall finishes in the background). */
async function recallWithin(run: () => Promise<RecallResult>, ms: number): Promise<Outcome> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'timeout' }), ms);
  });
  const work = run().then(
    (result): Outcome => ({ kind: 'result', result }),
    (err: unknown): Outcome => ({ kind: 'error', err }),
  );
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The OpenAI-compatible memory proxy (seed 004): `POST /proxy/v1/chat/completions`.
 *
 * A chat client points its base URL at `/proxy/v1` and sends its user's key (`jmu_…`) as the API
 * key, which names the user; a server holding the tenant key names the user in `X-Memory-User`
 * (src/api/auth.ts decides both before the body is read). For each request: recall for the last user message (within
 * PROXY_RECALL_TIMEOUT_MS), inject the stable part at the end of the system message and the
 * memories before the user's text, forward to UPSTREAM_BASE_URL with UPSTREAM_API_KEY and the
 * caller's model and the options its tenant's policy lets through (src/proxy/policy.ts), hand a
 * success back unchanged (streamed or not) and an upstream error in our own shape, then record the
 * user's message and the assistant's answer through the messages write path, so idle extraction
 * follows as for POST …/messages.
 */
export const proxyRoutes =
  (
    deps: ApiDeps,
    opts: { maxMessageChars: number; maxMessagesPerConversation: number; afterRecall?: AfterRecall; onUserActive?: (userKey: string) => Promise<void> },
  ): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/proxy/v1/chat/completions',
      {
        // Refused before the user id is registered: a refused first call leaves no user behind.
        config: {
          userFromHeader: PROXY_HEADERS.user,
          beforeRegistration: (request) => {
            refuseBeforeForwarding(deps, request.tenantId, request.body as ChatBody);
          },
        },
        schema: {
          summary: 'OpenAI-compatible chat completions with memory: recall, inject, forward upstream, record both turns (X-Memory-User names the user)',
          headers: z.looseObject({ [PROXY_HEADERS.conversation]: conversationIdSchema.optional() }),
          body: chatBody,
        },
      },
      async (request, reply) => {
        const { upstream, policy } = refuseBeforeForwarding(deps, request.tenantId, request.body);
        const userKey = userKeyOf(request);
        const receivedAt = new Date();
        // A request that names no limit gets the policy's: the budget it spent assumed that much.
        const body = request.body.max_tokens == null && request.body.max_completion_tokens == null ? { ...request.body, max_tokens: policy.maxTokens } : request.body;
        const messages = body.messages as ChatMessage[];
        const userIndex = lastUserIndex(messages);
        const userText = messageText(messages[userIndex]);
        const conversationHeader = request.headers[PROXY_HEADERS.conversation];
        const timeZone = await userTimeZone(deps, userKey);
        const conversationId = proxyConversationId(typeof conversationHeader === 'string' ? conversationHeader : undefined, receivedAt, timeZone);

        let recallState: ProxyRecall = 'skipped';
        let forwarded = messages;
        let injected = 0;
        if (userIndex >= 0 && userText.trim() !== '') {
          const budget = deps.config.proxy.recallTimeoutMs;
          const outcome = await recallWithin(() => recall(deps, userKey, userText.slice(0, 20_000), { recentMessages: recentTexts(messages, userIndex), now: receivedAt, timeoutMs: budget }), budget);
          if (outcome.kind === 'result') {
            const { result } = outcome;
            forwarded = injectMemory(messages, result.context);
            injected = result.memories.length;
            recallState = result.error ? 'degraded' : 'ok';
            if (injected > 0) opts.afterRecall?.(userKey, result.memories, receivedAt);
          } else {
            recallState = outcome.kind;
            if (outcome.kind === 'error') request.log.warn({ err: outcome.err }, 'proxy recall failed; forwarding without memory');
          }
        }

        // Both turns go into the conversation once the answer is complete; a failure is logged, the
        // answer has reached the caller already.
        const record = (answer: string | undefined) => {
          if (userIndex < 0) return;
          const ids = turnIds(conversationId, messages, userIndex);
          const user = recordable(userText, opts.maxMessageChars);
          const assistant = answer === undefined ? undefined : recordable(answer, opts.maxMessageChars);
          const turns = [
            ...(user ? [{ id: ids.user, role: 'user' as const, at: receivedAt, ...user }] : []),
            ...(assistant ? [{ id: ids.assistant, role: 'assistant' as const, at: new Date(Math.max(Date.now(), receivedAt.getTime() + 1)), ...assistant }] : []),
          ];
          if (turns.length === 0) return;
          void appendConversationMessages(deps, opts, { userKey, conversationId, messages: turns })
            .then((appended) => {
              if (appended.pending) request.log.warn({ conversationId }, 'proxy turns stored, idle timer not armed: extraction left to the reconciler');
              return opts.onUserActive?.(userKey);
            })
            .catch((err: unknown) => request.log.warn({ err, conversationId }, 'proxy turns not recorded'));
        };

        const abort = new AbortController();
        reply.raw.on('close', () => {
          if (!reply.raw.writableFinished) abort.abort();
        });
        // One bound for the whole upstream call, headers to last byte (a stream is cut past it).
        const timeoutMs = deps.config.proxy.upstreamTimeoutMs;
        const deadline = AbortSignal.timeout(timeoutMs);
        let res: Response;
        try {
          res = await fetch(`${upstream}/chat/completions`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: body.stream ? 'text/event-stream' : 'application/json',
              ...(deps.config.proxy.upstreamApiKey ? { authorization: `Bearer ${deps.config.proxy.upstreamApiKey}` } : {}),
            },
            body: JSON.stringify({ ...body, messages: forwarded }),
            signal: AbortSignal.any([abort.signal, deadline]),
          });
        } catch (err) {
          if (deadline.aborted) throw new MemoryServiceError(ErrorCode.dependencyTimeout, `the upstream chat completions API did not answer within ${timeoutMs} ms`, { timeoutMs }, { cause: err });
          throw new MemoryServiceError(ErrorCode.llmUnavailable, 'the upstream chat completions API did not answer', { upstream: new URL(upstream).host }, { cause: err });
        }

        if (!res.ok) {
          await res.body?.cancel().catch(() => {});
          throw upstreamError(res);
        }
        reply.status(res.status);
        res.headers.forEach((value, name) => {
          if (PASSED_HEADERS.test(name)) reply.header(name, value);
        });
        reply.header(PROXY_HEADERS.recall, recallState).header(PROXY_HEADERS.injected, String(injected)).header(PROXY_HEADERS.conversation, conversationId);

        const streamed = body.stream === true && (res.headers.get('content-type') ?? '').includes('text/event-stream') && res.body;
        if (!streamed) {
          let text: string;
          try {
            text = await res.text();
          } catch (err) {
            if (deadline.aborted) throw new MemoryServiceError(ErrorCode.dependencyTimeout, `the upstream chat completions API did not finish within ${timeoutMs} ms`, { timeoutMs }, { cause: err });
            throw new MemoryServiceError(ErrorCode.upstreamFailed, 'the upstream chat completions API broke off its answer', {}, { cause: err });
          }
          let answer: string | undefined;
          try {
            answer = completionText(JSON.parse(text));
          } catch {
            // Not the JSON of a completion: recorded as the user's turn alone.
            answer = undefined;
          }
          record(answer);
          return reply.send(text);
        }

        // The caller gets the upstream's bytes as they come; a copy of the text is assembled on the way.
        const answer = new StreamedAnswer();
        const decoder = new TextDecoder();
        let completed = false;
        const tap = new Transform({
          transform(chunk: Buffer, _encoding, done) {
            answer.push(decoder.decode(chunk, { stream: true }));
            done(null, chunk);
          },
          flush(done) {
            answer.push(decoder.decode());
            answer.end();
            completed = true;
            done();
          },
        });
        const source = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>);
        source.on('error', (err) => tap.destroy(err));
        // Complete: the upstream ended the stream or said [DONE] (a client may hang up right after
        // it, before the stream ends). A caller gone mid-answer leaves the user's turn alone.
        tap.on('close', () => record(completed || answer.done ? answer.text : undefined));
        reply.header('cache-control', 'no-cache').header('x-accel-buffering', 'no');
        return reply.send(source.pipe(tap));
      },
    );
  };
