import asyncio
from collections.abc import Callable

from agents import (
    Agent,
    HostedMCPTool,
    MCPToolApprovalFunctionResult,
    MCPToolApprovalRequest,
    ModelBehaviorError,
    OpenAIResponsesModel,
    Runner,
    set_tracing_disabled,
)
from openai import AsyncOpenAI


def ask_a_person(
    answer: str,
) -> Callable[[MCPToolApprovalRequest], MCPToolApprovalFunctionResult]:
    def decide(request: MCPToolApprovalRequest) -> MCPToolApprovalFunctionResult:
        print(f"approve {request.data.name} {request.data.arguments}? {answer}")
        if answer == "yes":
            return {"approve": True}
        return {"approve": False, "reason": "Order 7 is not eligible."}

    return decide


async def main(base_url: str = "http://127.0.0.1:8000/v1") -> None:
    set_tracing_disabled(True)  # otherwise the SDK uploads traces to OpenAI
    async with AsyncOpenAI(base_url=base_url, api_key="unused") as client:
        for answer in ("yes", "no"):
            approvals = HostedMCPTool(
                tool_config={
                    "type": "mcp",
                    "server_label": "lgos",
                    "require_approval": "always",
                },
                on_approval_request=ask_a_person(answer),
            )
            agent = Agent(
                name="refunds",
                model=OpenAIResponsesModel(model="refunds", openai_client=client),
                tools=[approvals],
            )
            try:
                result = await Runner.run(
                    agent, "Refund order 7", auto_previous_response_id=True
                )
                print(result.final_output)
            except ModelBehaviorError as error:
                # The failed turn's error carries code interrupt_rejected.
                print(f"not refunded ({type(error).__name__})")


if __name__ == "__main__":
    asyncio.run(main())
