import { createHmac, hkdfSync } from 'node:crypto';

/**
 * Every keyed operation of the service (pseudonymous user keys, page tokens, the codec server's
 * own MAC) derives its key from one operator secret, `SECRET_KEY`, with a distinct HKDF label, so
 * a key leaked from one purpose says nothing about another. The payload master key is separate:
 * it may rotate, while the pseudonym key must never change (it names every user's rows).
 */
export class ServiceSecrets {
  private readonly derived = new Map<string, Buffer>();

  constructor(private readonly secret: Buffer) {
    if (secret.length < 32) throw new Error('SECRET_KEY must be at least 32 bytes');
  }

  /** A 32-byte subkey for one purpose ("user-key", "page-token", …). */
  key(purpose: string): Buffer {
    let k = this.derived.get(purpose);
    if (!k) {
      k = Buffer.from(hkdfSync('sha256', this.secret, Buffer.alloc(0), `jarvis-memory/${purpose}`, 32));
      this.derived.set(purpose, k);
    }
    return k;
  }

  mac(purpose: string, data: string): Buffer {
    return createHmac('sha256', this.key(purpose)).update(data, 'utf8').digest();
  }
}
