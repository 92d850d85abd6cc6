import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { listUserKeys, MAX_KEYS_PER_USER, mintUserKey, refusePastExpiry, revokeUserKey, type UserKeyView } from '../../account/user-keys';
import { userKeyOf } from '../auth';
import type { ApiDeps } from '../deps';
import { isoDate, textSchema, userIdSchema, userParams } from '../schemas';

export const MAX_KEY_LABEL_CHARS = 100;

/** Strict: a misspelt `expiresAt` must not mint a key that never expires. */
const mintBody = z.strictObject({
    label: textSchema(MAX_KEY_LABEL_CHARS).optional().describe('What the key is for ("Claude Desktop on Ana\'s laptop"); shown in the list'),
    expiresAt: isoDate.optional().describe('When the key stops working (ISO 8601 with offset, in the future); absent: until revoked'),
});

const keyView = z.object({
  id: z.string().describe('The key id: revoke the key by it'),
  label: z.string().nullable(),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
  lastUsedAt: z.string().nullable().describe('Last successful use, to the minute'),
});

const keyParams = z.object({ userId: userIdSchema, keyId: z.string().uuid() });

const TENANT_ONLY = { tenantOnly: true } as const;

const toView = (k: UserKeyView): z.infer<typeof keyView> => ({
  id: k.keyId,
  label: k.label,
  createdAt: k.createdAt.toISOString(),
  expiresAt: k.expiresAt?.toISOString() ?? null,
  lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
});

/**
 * Per-user API keys (docs/integrate.md): the credential to put in an MCP client or a chat app,
 * reaching one user only. Minted, listed and revoked with the tenant key alone — a user key can
 * neither extend itself nor see its siblings.
 */
export const userKeyRoutes =
  (deps: ApiDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/v1/users/:userId/keys',
      {
        config: {
          ...TENANT_ONLY,
          beforeRegistration: (request) => {
            const { expiresAt } = request.body as z.infer<typeof mintBody>;
            refusePastExpiry(expiresAt === undefined ? undefined : new Date(expiresAt), new Date());
          },
          takesBackRegistration: true,
        },
        // A POST without a body (Fastify reads it as null) mints a key without label or expiry.
        preValidation: async (request) => {
          request.body ??= {};
        },
        schema: {
          summary: `Mint a key bound to this user (tenant key only); the secret is in this answer only. At most ${MAX_KEYS_PER_USER} keys per user`,
          params: userParams,
          body: mintBody,
          response: { 201: z.object({ key: keyView, secret: z.string().describe('Bearer token `jmu_…` for this user; store it now, it cannot be read again') }) },
        },
      },
      async (request, reply) => {
        const body = request.body;
        const minted = await mintUserKey(deps, {
          userKey: userKeyOf(request),
          tenantId: request.tenantId!,
          label: body.label,
          expiresAt: body.expiresAt === undefined ? undefined : new Date(body.expiresAt),
          now: new Date(),
        });
        return reply.status(201).header('cache-control', 'no-store').send({ key: toView(minted.key), secret: minted.token });
      },
    );

    app.get(
      '/v1/users/:userId/keys',
      {
        config: TENANT_ONLY,
        schema: {
          summary: "The user's keys, oldest first (tenant key only): ids, labels and dates, never a secret",
          params: userParams,
          response: { 200: z.object({ keys: z.array(keyView) }) },
        },
      },
      async (request) => ({ keys: (await listUserKeys(deps, { userKey: userKeyOf(request) })).map(toView) }),
    );

    app.delete(
      '/v1/users/:userId/keys/:keyId',
      {
        config: TENANT_ONLY,
        schema: {
          summary: 'Revoke a key at once (tenant key only): 204; 404 when this user has no such key (revoked already, or never theirs)',
          params: keyParams,
          response: { 204: z.null().describe('Revoked') },
        },
      },
      async (request, reply) => {
        await revokeUserKey(deps, { userKey: userKeyOf(request), keyId: request.params.keyId });
        return reply.status(204).send(null);
      },
    );
  };
