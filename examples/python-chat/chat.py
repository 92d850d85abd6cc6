"""A Python chat service calling jarvis-memory over Temporal (docs/integrate-temporal.md).

The Python twin of examples/chat-workflow/: the caller's own worker and task queue, Temporal's
default data converter (the contract's payloads cross in clear, so no codec and no data key), and
only the contract's names: the `recall` activity and the `ExtractMemories` workflow on the memory
task queue. In a real service `handle_message` is what the FastAPI router calls per message.

Run: python chat.py USER_ID CONVERSATION_ID TEXT   (prints the turn as JSON)
Env: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, MEMORY_TASK_QUEUE, CHAT_TASK_QUEUE, MEMORY_TENANT.
"""

import asyncio
import json
import os
import sys
import uuid
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.client import Client
from temporalio.common import RetryPolicy
from temporalio.worker import Worker

# The contract's names (src/client/temporal-contract.ts), version 1.
RECALL_ACTIVITY = "recall"
EXTRACT_MEMORIES_WORKFLOW = "ExtractMemories"
MEMORY_TASK_QUEUE = "jarvis-memory"


def extract_memories_workflow_id(tenant_id: str, caller_ref: str) -> str:
    """extractMemoriesWorkflowId: one ExtractMemories per caller turn, so a retried turn is not run twice."""
    return f"{EXTRACT_MEMORIES_WORKFLOW}:{tenant_id}:{caller_ref}"


def build_prompt(recall: dict[str, Any], text: str) -> list[dict[str, str]]:
    """The messages for the chat model: recall's system block, and its prefix before the user's text."""
    context = recall["context"]
    return [
        {"role": "system", "content": context["system"]},
        {"role": "user", "content": context["userPrefix"] + text},
    ]


@workflow.defn(name="pythonChatTurn")
class ChatTurnWorkflow:
    @workflow.run
    async def run(self, turn: dict[str, Any]) -> dict[str, Any]:
        memory_queue = turn.get("memoryTaskQueue") or MEMORY_TASK_QUEUE
        # 1. Recall before answering: an activity on the memory task queue, with a tight timeout
        #    (recall degrades a slow route rather than time the activity out).
        recall = await workflow.execute_activity(
            RECALL_ACTIVITY,
            {"tenantId": turn["tenantId"], "userId": turn["userId"], "query": turn["text"]},
            task_queue=memory_queue,
            start_to_close_timeout=timedelta(seconds=2),
            retry_policy=RetryPolicy(maximum_attempts=3),
            result_type=dict,
        )
        prompt = build_prompt(recall, turn["text"])
        # ... the chat service's own LLM activity answers here, with `prompt` ...
        reply = turn.get("reply") or "好的。"

        # 2. Hand the turn to memory: ExtractMemories stores and extracts it (a child on the memory
        #    task queue; ABANDON lets it finish even if this turn ends first).
        turn_id = workflow.info().workflow_id
        extraction = await workflow.execute_child_workflow(
            EXTRACT_MEMORIES_WORKFLOW,
            {
                "tenantId": turn["tenantId"],
                "userId": turn["userId"],
                "conversationId": turn["conversationId"],
                "messages": [
                    {"id": f"{turn_id}:user", "role": "user", "content": turn["text"]},
                    {"id": f"{turn_id}:assistant", "role": "assistant", "content": reply},
                ],
            },
            id=extract_memories_workflow_id(turn["tenantId"], turn_id),
            task_queue=memory_queue,
            parent_close_policy=workflow.ParentClosePolicy.ABANDON,
            result_type=dict,
        )
        return {"recall": recall, "prompt": prompt, "reply": reply, "extraction": extraction}


async def handle_message(client: Client, user_id: str, conversation_id: str, text: str) -> dict[str, Any]:
    """One chat message: recall, prompt, reply, and the turn handed to memory, as one workflow run."""
    return await client.execute_workflow(
        ChatTurnWorkflow.run,
        {
            "tenantId": os.environ.get("MEMORY_TENANT", "tenant-a"),
            "userId": user_id,
            "conversationId": conversation_id,
            "text": text,
            "memoryTaskQueue": os.environ.get("MEMORY_TASK_QUEUE", MEMORY_TASK_QUEUE),
        },
        id=f"python-chat-turn-{uuid.uuid4()}",
        task_queue=os.environ.get("CHAT_TASK_QUEUE", "python-chat"),
    )


async def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: chat.py USER_ID CONVERSATION_ID TEXT", file=sys.stderr)
        return 2
    client = await Client.connect(
        os.environ.get("TEMPORAL_ADDRESS", "127.0.0.1:7233"),
        namespace=os.environ.get("TEMPORAL_NAMESPACE", "jarvis-memory"),
    )
    # The caller's own worker, with Temporal's defaults: nothing of the memory service's.
    async with Worker(client, task_queue=os.environ.get("CHAT_TASK_QUEUE", "python-chat"), workflows=[ChatTurnWorkflow]):
        turn = await handle_message(client, *argv)
    print(json.dumps(turn, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    code = asyncio.run(main(sys.argv[1:]))
    # The answer is printed: leave without interpreter finalization. grpc's extension (imported
    # through the SDK's generated services) can still hold a thread at exit, and finalizing then
    # sometimes aborts with "PyGILState_Release … finalizing", turning a finished turn into a crash.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
