import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Thrown when a ciphertext fails GCM authentication: tampered with, truncated, or sealed under another key. */
export class AuthenticationFailedError extends Error {
  constructor(what: string) {
    super(`${what} failed authentication: tampered with, or encrypted under another key`);
    this.name = 'AuthenticationFailedError';
  }
}

/** AES-256-GCM with a fresh random 96-bit IV: returns iv ‖ ciphertext ‖ tag. `aad` binds the ciphertext to its context. */
export function seal(key: Buffer, plaintext: Uint8Array, aad: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]);
}

/** Opens what `seal` produced with the same key and `aad`, or throws AuthenticationFailedError. */
export function open(key: Buffer, sealed: Uint8Array, aad: string, what = 'ciphertext'): Buffer {
  if (sealed.length < IV_BYTES + TAG_BYTES) throw new AuthenticationFailedError(what);
  const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
  } catch (err) {
    // final() throws "Unsupported state or unable to authenticate data" for any mismatch.
    throw Object.assign(new AuthenticationFailedError(what), { cause: err });
  }
}
