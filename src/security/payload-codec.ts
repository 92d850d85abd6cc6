import { METADATA_ENCODING_KEY, type Payload, type PayloadCodec } from '@temporalio/common';
// Default import: @temporalio/proto is CommonJS, and Node's ESM loader sees no named exports in it.
import proto from '@temporalio/proto';
import { CALLER_METADATA_KEY, decodeSubject, SUBJECT_METADATA_KEY } from '../../workflows/shared/payload-subject';
import { AuthenticationFailedError, open, seal } from './aes-gcm';
import { PayloadDecryptionError, type PayloadKeyStore } from './payload-keys';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA_KEY = 'encryption-key-id';
/** First byte of an encrypted payload's data: the layout (v1 = AES-256-GCM, iv ‖ ciphertext ‖ tag). */
const FORMAT_V1 = 1;

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();
const payloadAad = (keyId: string) => `jarvis-memory/payload/v1/${keyId}`;
const { Payload: PayloadProto } = proto.temporal.api.common.v1;

export function isEncrypted(payload: Payload): boolean {
  const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
  return encoding !== undefined && encoding !== null && fromUtf8.decode(encoding) === ENCRYPTED_ENCODING;
}

/**
 * The Temporal payload codec (AES-256-GCM, per-user data keys). Encode: the whole payload —
 * metadata and data — becomes the ciphertext of one encrypted payload whose clear metadata says
 * only `binary/encrypted` and the data key's id. The key is the subject's: the tag the workflow
 * sandbox's converter put on the payload, else the ambient subject of the caller (client scope,
 * activity header), else the system key — except payloads that cross to a caller of the Temporal
 * contract (marked by the sandbox converter, or encoded by a contract activity), which stay in
 * clear for the caller's default converter. Decode: payloads that are not encrypted pass through
 * unchanged (histories recorded before encryption still replay); encrypted ones are opened or the
 * decode fails — DataKeyDestroyedError for a purged user, AuthenticationFailedError-backed
 * PayloadDecryptionError for a tampered one — never with garbage.
 */
export class EncryptionCodec implements PayloadCodec {
  constructor(
    private readonly keys: Pick<PayloadKeyStore, 'encryptionKey' | 'decryptionKey'>,
    private readonly ambientSubject: () => string | undefined = () => undefined,
    /** True where the payloads being encoded cross to a caller (a contract activity's result): they stay in clear. */
    private readonly crossesToCaller: () => boolean = () => false,
  ) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map((p) => this.encodeOne(p)));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map((p) => this.decodeOne(p)));
  }

  private async encodeOne(payload: Payload): Promise<Payload> {
    if (isEncrypted(payload)) return payload;
    const { [SUBJECT_METADATA_KEY]: tag, [CALLER_METADATA_KEY]: toCaller, ...metadata } = payload.metadata ?? {};
    // What a caller's worker reads with Temporal's default converter stays in clear (src/client/temporal-contract.ts).
    if (toCaller !== undefined || this.crossesToCaller()) return { metadata, data: payload.data };
    const subject = decodeSubject(tag) ?? this.ambientSubject() ?? null;
    const { keyId, key } = await this.keys.encryptionKey(subject);
    const plaintext = PayloadProto.encode({ metadata, data: payload.data ?? new Uint8Array(0) }).finish();
    return {
      metadata: { [METADATA_ENCODING_KEY]: utf8.encode(ENCRYPTED_ENCODING), [KEY_ID_METADATA_KEY]: utf8.encode(keyId) },
      data: Buffer.concat([Buffer.of(FORMAT_V1), seal(key, plaintext, payloadAad(keyId))]),
    };
  }

  private async decodeOne(payload: Payload): Promise<Payload> {
    if (!isEncrypted(payload)) return payload;
    const keyIdBytes = payload.metadata?.[KEY_ID_METADATA_KEY];
    if (!keyIdBytes) throw new PayloadDecryptionError(`encrypted payload without "${KEY_ID_METADATA_KEY}" metadata`);
    const keyId = fromUtf8.decode(keyIdBytes);
    const data = payload.data ?? new Uint8Array(0);
    if (data[0] !== FORMAT_V1) throw new PayloadDecryptionError(`encrypted payload in an unknown format (${data[0] ?? 'empty'})`);
    const key = await this.keys.decryptionKey(keyId);
    let plaintext: Buffer;
    try {
      plaintext = open(key, data.subarray(1), payloadAad(keyId), `payload encrypted under key ${keyId}`);
    } catch (err) {
      if (err instanceof AuthenticationFailedError) throw new PayloadDecryptionError(err.message, { cause: err });
      throw err;
    }
    const inner = PayloadProto.decode(plaintext);
    // A plain object, not the protobufjs message: @temporalio/common carries its own protobufjs copy.
    return { metadata: { ...inner.metadata }, data: inner.data };
  }
}
