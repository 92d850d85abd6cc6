// The example chat service's worker: its own task queue, Temporal's defaults — no data converter,
// no codec, no interceptors. `npx tsx examples/chat-workflow/worker.ts` runs it against
// TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE (default: a local `npm run dev` stack).
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';

export const CHAT_TASK_QUEUE = 'chat-example';

export async function createChatWorker(options: { address: string; namespace: string; taskQueue?: string }): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = await NativeConnection.connect({ address: options.address });
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue ?? CHAT_TASK_QUEUE,
    workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
  });
  return { worker, connection };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { worker, connection } = await createChatWorker({
    address: process.env.TEMPORAL_ADDRESS || '127.0.0.1:7233',
    namespace: process.env.TEMPORAL_NAMESPACE || 'jarvis-memory',
  });
  try {
    await worker.run();
  } finally {
    await connection.close();
  }
}
