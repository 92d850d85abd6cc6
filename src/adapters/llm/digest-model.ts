import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import type { DigestModel } from '../../core/ports/proactive';

/**
 * The digest writer's model over a LangChain chat model. The model is opened per digest, inside
 * the writer's fallback: a provider that cannot be reached or loaded gives the template, not a
 * failed digest.
 */
export class LangChainDigestModel implements DigestModel {
  constructor(private readonly open: () => Promise<BaseChatModel>) {}

  async reply(system: string, data: string): Promise<string> {
    const chat = await this.open();
    const answer = await chat.invoke([new SystemMessage(system), new HumanMessage(data)]);
    return answer.text;
  }
}
