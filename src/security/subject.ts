import type { ServiceSecrets } from './secrets';

/**
 * Who a request is about: the tenant (from the API key) and the tenant's own id for the person.
 * The same `userId` under two tenants is two people.
 */
export interface Subject {
  tenantId: string;
  userId: string;
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

function base32(bytes: Buffer, chars: number): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < chars) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    if (out.length >= chars) break;
  }
  return out;
}

/**
 * Turns (tenant, user) into the key every store uses as `user_id`: `${tenantId}:${keyed hash}`.
 * The hash is keyed, so the user's own id (often an e-mail or a phone number) never appears in a
 * Temporal workflow id, a search attribute or a Chroma collection name, and nobody without the
 * secret can test a guess. Tenant ids contain no ":", so the key splits unambiguously; it is
 * deterministic, so every API and worker process computes it without a lookup.
 */
export class SubjectKeys {
  constructor(private readonly secrets: ServiceSecrets) {}

  userKey(subject: Subject): string {
    return `${subject.tenantId}:${base32(this.secrets.mac('user-key', `${subject.tenantId}\u0000${subject.userId}`), 26)}`;
  }

  /**
   * A short keyed reference to a client-chosen id (a conversation or request id) for use inside
   * workflow ids and search attributes, where the id itself might carry personal words.
   */
  ref(userKey: string, kind: string, id: string): string {
    return base32(this.secrets.mac('id-ref', `${userKey}\u0000${kind}\u0000${id}`), 16);
  }
}
