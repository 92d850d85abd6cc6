import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../../workflows/shared/search-attributes';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const POM = `${ROOT}scripts/temporal-test-server/pom.xml`;
const DIR = `${ROOT}.stack/temporal-test-server`;
const CLASSPATH = `${DIR}/classpath.txt`;
const WRAPPER = `${DIR}/test-server.sh`;

function need(command: string, install: string): void {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
  } catch {
    throw new Error(`time-skipping tests need "${command}" (${install}); it is not on PATH`);
  }
}

/**
 * The Java time-skipping test server, resolved from Maven Central (io.temporal:temporal-test-server,
 * see scripts/temporal-test-server/pom.xml) because the SDK's own download cannot run here. Builds
 * the classpath once (cached under .stack/) and returns an executable wrapper script.
 */
export function timeSkippingServerPath(): string {
  need('java', 'Debian: apt-get install default-jre-headless');
  mkdirSync(DIR, { recursive: true });
  if (!existsSync(CLASSPATH) || statSync(CLASSPATH).mtimeMs < statSync(POM).mtimeMs) {
    need('mvn', 'Debian: apt-get install maven');
    const args = ['-q', '-f', POM, 'dependency:build-classpath', `-Dmdep.outputFile=${CLASSPATH}`];
    try {
      execFileSync('mvn', ['-o', ...args], { stdio: 'pipe' }); // offline first: the local repository usually has it
    } catch {
      execFileSync('mvn', args, { stdio: 'inherit' });
    }
  }
  const script = `#!/usr/bin/env bash\nexec java -cp "$(cat '${CLASSPATH}')" io.temporal.testserver.TestServer "$@"\n`;
  if (!existsSync(WRAPPER) || readFileSync(WRAPPER, 'utf8') !== script) {
    writeFileSync(WRAPPER, script);
    chmodSync(WRAPPER, 0o755);
  }
  return WRAPPER;
}

const SA_TYPE: Record<string, temporal.api.enums.v1.IndexedValueType> = {
  Keyword: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  KeywordList: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

/**
 * The SDK gives the test server's JVM a fixed 5 s to listen; on a loaded two-core machine a cold
 * JVM can miss that, and a second start (warm file cache) makes it.
 */
async function startWithRetries(attempts = 3): Promise<TestWorkflowEnvironment> {
  for (let i = 1; ; i++) {
    try {
      return await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: timeSkippingServerPath() } } });
    } catch (err) {
      if (i >= attempts || !/did not start within/.test(String(err))) throw err;
    }
  }
}

/** A time-skipping Temporal with the project's search attributes registered. */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const env = await startWithRetries();
  const searchAttributes = Object.fromEntries(Object.entries(SEARCH_ATTRIBUTES).map(([name, type]) => [name, SA_TYPE[type]!]));
  await env.connection.operatorService.addSearchAttributes({ namespace: env.namespace ?? 'default', searchAttributes });
  return env;
}
