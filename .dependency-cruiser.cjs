/* global module */
/**
 * The boundaries of the house by capability (issue #21), checked by `npm run lint` (eslint, then
 * dependency-cruiser over src, workflows and activities). Type-only imports count
 * (`tsPreCompilationDeps`): a type import still ties two files together and closes a circle.
 *
 * Where today's code breaks a rule and the fix is a change of its own, the edge is listed below in
 * KNOWN_VIOLATIONS — file to file, with the reason and what removes it — never left out silently.
 * A new edge of the same kind fails lint; removing a listed edge is the work left (docs/decisions.md).
 * test/dependency-rules.test.ts runs these rules over a fixture with deliberately wrong imports.
 */

/** Capabilities (src/<cap>/, workflows/<cap>/, activities/<cap>/), lowest first: a capability imports only those before it. */
const CAPABILITIES = ['account', 'lifecycle', 'memory', 'persona', 'proactive', 'conversation', 'recall', 'privacy'];

/** The pure domain of each capability under src/core/ (folder → capability). */
const DOMAIN_OF = {
  decisions: 'memory',
  memory: 'memory',
  lifecycle: 'lifecycle',
  persona: 'persona',
  proactive: 'proactive',
  conversation: 'conversation',
  extraction: 'conversation',
  episodes: 'conversation',
  recall: 'recall',
  privacy: 'privacy',
};
const DOMAIN_FOLDERS = Object.keys(DOMAIN_OF);
/** The shared kernel: src/core's top-level files and its text, time and ports folders. */
const KERNEL = '^src/core/(?:[^/]+\\.ts$|text/|time/|ports/)';
/** Pure modules of the workflow bundle that starters and codecs may use (search attribute keys, the payload subject). */
const PURE_WORKFLOW_SHARED = '^workflows/shared/(?:search-attributes|payload-subject)\\.ts$';

/**
 * Edges that break a rule today, by rule name. `from` and `to` are exact paths.
 * Each group says why it is here and what removes it.
 */
const KNOWN_VIOLATIONS = {
  // None left: the domain types the ports named (conflict proposals, rejected candidates, sweep
  // transitions, purge counts, reminder, digest and episode shapes) live in the port files, user
  // settings and the exchange line shape in the kernel; their old modules re-export them.
  'kernel-imports-only-kernel': [],
  // None left: none may be added. An agent's direct write (memory domain) takes the conversation's
  // provenance screen (screenCandidates) as a ProvenanceScreen parameter, wired as
  // ServiceDeps.provenanceScreen in src/runtime.ts. The shared pure helpers (token budget,
  // neutralizing, decay, sentences, utterance shapes, quoting, cosine scoring, the exchange line
  // shape) are kernel now.
  'domain-imports-only-kernel-and-itself': [],
  // None left: none may be added. Done: the id helpers (the episode id among them) and the rule
  // work moved to src/shared/ (the ids hash with node:crypto, which src/core may not import; a rule
  // plan names two domains at once; the thread pool stays the adapter); the NOTIFY channel's name is
  // in the proactive port; the digest writer asks the DigestModel port (ServiceDeps.digestModel,
  // wired in src/runtime.ts); recall's LangChain retrievers (ANN, BM25, exchanges) and the
  // per-request query embeddings, which do no I/O of their own but adapt recall's ports, are
  // recall's code (src/recall/retrievers/).
  'use-cases-never-import-adapters': [],
  // None left: none may be added. The live events' LISTEN is the ProactiveEventFeed port
  // (src/core/ports/proactive.ts) over PostgresProactiveEventFeed, wired in src/runtime.ts.
  'capabilities-never-import-pg': [],
  // None left: none may be added. Each reconciler lives with the state it repairs (conversation's
  // and proactive's activities and workflows), the reliability schedules stay in lifecycle naming
  // them by the public contract; the retention sweep erases expired messages' vectors through the
  // lifecycle MessageVectorEraser port (ServiceDeps.messageVectorEraser) and a MemoryDecision's
  // erase goes through the memory MemoryEraser port, both wired in src/runtime.ts; the page
  // tokens', direct write's and reminder requests' edges went the same way.
  'capabilities-depend-one-way': [],
  // None left: the reconcilers live with the state they repair (workflows/conversation/,
  // workflows/proactive/) and the weekly reinforcement with the lifecycle sweep whose paging and
  // heartbeats it shares (workflows/lifecycle/).
  'workflows-import-only-their-own-activity-types': [],
};

const esc = (p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A rule with its known violations carved out, edge by edge: the files with exceptions are taken
 * out of the main rule and get a rule of their own that allows only their listed targets.
 */
function withKnown(rule) {
  const known = KNOWN_VIOLATIONS[rule.name] ?? [];
  // Only the exceptions this rule's `from` covers (a rule name may be spread over several rules).
  const covers = (file) => rule.from.path === undefined || new RegExp(rule.from.path).test(file);
  const sources = [...new Set(known.map(([from]) => from))].filter(covers);
  const carve = (part, more) => ({ ...part, pathNot: [...[].concat(part.pathNot ?? []), ...more] });
  const main = { ...rule, from: carve(rule.from, sources.map((s) => `^${esc(s)}$`)) };
  const per = sources.map((source) => ({
    ...rule,
    from: { ...rule.from, path: `^${esc(source)}$`, pathNot: undefined },
    to: carve(rule.to, known.filter(([from]) => from === source).map(([, to]) => `^${esc(to)}$`)),
  }));
  for (const r of per) if (r.from.pathNot === undefined) delete r.from.pathNot;
  return [main, ...per];
}

const capabilityFiles = (caps) => `^(?:src|workflows|activities)/(?:${caps.join('|')})/`;
const domainFiles = (caps) => `^src/core/(?:${DOMAIN_FOLDERS.filter((f) => caps.includes(DOMAIN_OF[f])).join('|')})/`;

/** One rule per capability: it may not import the capabilities above it (their use cases, workflows, activities or domain). */
const oneWay = CAPABILITIES.slice(0, -1).map((cap, i) => {
  const above = CAPABILITIES.slice(i + 1);
  const own = [cap];
  const fromDomain = DOMAIN_FOLDERS.filter((f) => DOMAIN_OF[f] === cap);
  return {
    name: 'capabilities-depend-one-way',
    comment: `${cap} imports only ${CAPABILITIES.slice(0, i).join(', ') || 'the kernel'} (order: ${CAPABILITIES.join(' < ')})`,
    severity: 'error',
    from: { path: fromDomain.length ? `(?:${capabilityFiles(own)}|^src/core/(?:${fromDomain.join('|')})/)` : capabilityFiles(own) },
    to: { path: `(?:${capabilityFiles(above)}|${domainFiles(above)})` },
  };
});

const rules = [
  {
    name: 'no-circular',
    comment: 'No import circle, type-only imports included: each one is a file doing two jobs.',
    severity: 'error',
    from: {},
    to: { circular: true },
  },
  {
    name: 'kernel-imports-only-kernel',
    comment: 'The shared kernel (src/core top level, text, time, ports) imports nothing outside itself (no known violations: none may be added).',
    severity: 'error',
    from: { path: KERNEL },
    to: { path: '^(?:src|workflows|activities)/', pathNot: KERNEL },
  },
  {
    name: 'core-is-pure',
    comment: 'src/core (kernel and domains) imports no code outside src/core.',
    severity: 'error',
    from: { path: '^src/core/' },
    to: { path: '^(?:src|workflows|activities)/', pathNot: '^src/core/' },
  },
  ...DOMAIN_FOLDERS.map((folder) => ({
    name: 'domain-imports-only-kernel-and-itself',
    comment: `src/core/${folder} (the ${DOMAIN_OF[folder]} domain) imports only the kernel and its capability's domain (no known violations: none may be added)`,
    severity: 'error',
    from: { path: `^src/core/${folder}/` },
    to: { path: '^src/core/[^/]+/', pathNot: [KERNEL, domainFiles([DOMAIN_OF[folder]])] },
  })),
  {
    name: 'capabilities-segment-through-the-port',
    comment: 'Capability code reaches word segmentation through the Segmenter port and the index tokenizer of src/shared/segmentation.ts, never src/adapters/text/ (no known violations: none may be added).',
    severity: 'error',
    from: { path: capabilityFiles(CAPABILITIES) },
    to: { path: '^src/adapters/text/' },
  },
  {
    name: 'capabilities-never-import-pg',
    comment: 'Use cases reach PostgreSQL through their ports (the adapters in src/adapters/postgres/ hold every pg import), so src/<capability>/ imports no pg, not even its types (no known violations: none may be added).',
    severity: 'error',
    from: { path: capabilityFiles(CAPABILITIES).replace('(?:src|workflows|activities)', 'src') },
    // Resolved into node_modules (pg or its types), or the bare name where it is not installed.
    to: { path: '(?:^pg$|(?:^|/)node_modules/(?:@types/)?pg/)' },
  },
  {
    name: 'use-cases-never-import-adapters',
    comment: 'Use cases take their adapters as ports; only src/runtime.ts wires them (no known violations: none may be added).',
    severity: 'error',
    from: { path: capabilityFiles(CAPABILITIES).replace('(?:src|workflows|activities)', 'src') },
    to: { path: '^src/(?:(?:adapters|api|mcp|proxy|cli|stack)/|runtime\\.ts$)' },
  },
  ...oneWay,
  {
    name: 'starters-import-only-contracts',
    comment: 'What starts or signals a workflow imports its capability\'s contract.ts and starts it by name, never workflow code.',
    severity: 'error',
    from: { path: '^(?:src|activities)/' },
    to: { path: '^workflows/', pathNot: PURE_WORKFLOW_SHARED },
  },
  {
    name: 'workflows-import-only-domain-contracts-and-activity-types',
    comment: 'Workflow code stays deterministic: its own tree, the pure domain, contracts, and activities as types only.',
    severity: 'error',
    from: { path: '^workflows/' },
    to: {
      path: '^(?:src|activities)/',
      pathNot: ['^src/core/', '^src/[^/]+/contract\\.ts$', '^src/client/temporal-contract\\.ts$', '^activities/'],
    },
  },
  {
    name: 'workflows-import-activities-as-types',
    comment: 'Activities run on the worker, never in the workflow sandbox: a workflow imports them as types only.',
    severity: 'error',
    from: { path: '^workflows/' },
    to: { path: '^activities/', dependencyTypesNot: ['type-only'] },
  },
  {
    name: 'workflows-never-import-the-activity-barrel',
    comment: 'No workflow file (its capability\'s, shared or the bundle index) types the whole activity factory, activities/index.ts: it names the factories of the capabilities it calls (no known violations: none may be added).',
    severity: 'error',
    from: { path: '^workflows/' },
    to: { path: '^activities/index\\.ts$' },
  },
  ...CAPABILITIES.map((cap) => ({
    name: 'workflows-import-only-their-own-activity-types',
    comment: `workflows/${cap} types its own capability's activities (activities/${cap}/), not the whole factory`,
    severity: 'error',
    from: { path: `^workflows/${cap}/` },
    to: { path: '^activities/', pathNot: [`^activities/${cap}/`, '^activities/shared/'] },
  })),
];

module.exports = {
  forbidden: rules.flatMap(withKnown),
  options: {
    // Packages stay in the graph, unfollowed, so a rule can name one (capabilities-never-import-pg);
    // only built output is left out.
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/client/dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] },
  },
};

// Read by test/dependency-rules.test.ts (each listed edge must still exist, every src/core folder is
// kernel or a listed domain); not part of the cruiser's schema.
Object.defineProperty(module.exports, 'knownViolations', { value: KNOWN_VIOLATIONS, enumerable: false });
Object.defineProperty(module.exports, 'domainOf', { value: DOMAIN_OF, enumerable: false });
