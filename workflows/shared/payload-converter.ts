import { DefaultPayloadConverter, type ConverterHint, type Payload, type PayloadConverter, type SerializationContext } from '@temporalio/common';
import { CALLER_METADATA_KEY, encodeSubject, SUBJECT_METADATA_KEY, workflowCrossesToCaller, workflowSubject } from './payload-subject';

const CALLER_MARK = new TextEncoder().encode('1');

/**
 * The workflow sandbox's payload converter (bundled through `payloadConverterPath`): the SDK's
 * default JSON/binary conversion, plus a metadata entry naming the running workflow's user on
 * everything the workflow sends out — activity inputs, child workflow arguments, results, query
 * answers, continue-as-new arguments. The encryption codec, which runs outside the sandbox and
 * sees no workflow state, reads that entry to pick the user's data key, then drops it. A workflow
 * whose payloads cross to a caller (CALLER_WORKFLOW_TYPES) marks them for the codec to leave in clear.
 * Outside a workflow (client, activities) the converter adds nothing; the codec finds the subject
 * there itself (src/security/payload-subject.ts).
 */
class SubjectTaggingPayloadConverter implements PayloadConverter {
  private readonly inner = new DefaultPayloadConverter();

  toPayload<T>(value: T, context?: SerializationContext, hint?: ConverterHint<T>): Payload {
    const payload = this.inner.toPayload(value, context, hint);
    if (workflowCrossesToCaller()) return { ...payload, metadata: { ...payload.metadata, [CALLER_METADATA_KEY]: CALLER_MARK } };
    const subject = workflowSubject();
    if (!subject) return payload;
    return { ...payload, metadata: { ...payload.metadata, [SUBJECT_METADATA_KEY]: encodeSubject(subject) } };
  }

  fromPayload<T>(payload: Payload, context?: SerializationContext, hint?: ConverterHint<T>): T {
    return this.inner.fromPayload(payload, context, hint);
  }
}

export const payloadConverter: PayloadConverter = new SubjectTaggingPayloadConverter();
