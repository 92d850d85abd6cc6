// The worker threads' entry: piscina loads a JavaScript file, and the rules are TypeScript. tsx's
// loader is registered in each thread (the main thread's loader does not reach worker threads
// under every launcher: tsx, node --import tsx, vitest), then the TypeScript body is imported.
import { register } from 'tsx/esm/api';

register();
const { default: ruleWorker } = await import('./rule-worker.ts');

export default ruleWorker;
