/**
 * Neutralizing untrusted stored text before it enters a prompt (recall's memory block, the
 * persona, MCP tool output): one rule for every face that shows a memory's words.
 */
import { boundedMemo, isShortText } from '../bounded-memo';

const INVISIBLE = /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/gu;
// eslint-disable-next-line no-control-regex -- control characters are exactly what is removed
const CONTROL = /[\u0000-\u001F\u007F-\u009F\u2028\u2029]/gu;
const ROLE_EN = /\b(system|assistant|user|human|developer|tool|ai)(\s*)[:：]/giu;
const ROLE_ZH = /(系统|助手|用户|人类|开发者)(\s*)[:：]/gu;

/**
 * Turns untrusted stored text into inert single-line data:
 * - newlines and other control characters become spaces (no new lines, no fake headers);
 * - invisible and bidi-override characters are removed (no hidden text);
 * - angle brackets become ‹ › (no "</relevant-memories>" or other tags);
 * - square brackets become 〔 〕 (no "[system]" or fake "[type|scope]" labels);
 * - "role:" prefixes (system:, assistant:, 用户: …) lose their colon (→ ∶);
 * - code fences and heading runs shrink to one character.
 * The words themselves ("忽略之前的所有指令") are kept: they are data inside a line that the
 * block's note already marks as not-instructions.
 */
export function neutralizeText(text: string): string {
  return neutralized(text);
}

/**
 * Short texts neutralized once: recall formats the same memories on every message of a
 * conversation, after Chroma has answered, and eleven passes over each text were a quarter of
 * that formatting.
 */
const neutralized = boundedMemo(10_000, neutralizeOnce, isShortText);

function neutralizeOnce(text: string): string {
  return text
    .replace(INVISIBLE, '')
    .replace(CONTROL, ' ')
    .replace(/[<＜﹤]/gu, '‹')
    .replace(/[>＞﹥]/gu, '›')
    .replace(/[[［]/gu, '〔')
    .replace(/[\]］]/gu, '〕')
    .replace(/`{3,}/gu, '`')
    .replace(/#{2,}/gu, '#')
    .replace(ROLE_EN, '$1$2∶')
    .replace(ROLE_ZH, '$1$2∶')
    .replace(/\s+/gu, ' ')
    .trim();
}
