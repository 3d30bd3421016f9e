"""Hand the registry's tools to model APIs, and their tool calls back to the registry.

No SDK of either vendor is imported: definitions, calls and results are the plain JSON
dicts the HTTP APIs take, so this works with the official clients, with raw HTTP and
with scripted models alike.

`OpenAIAdapter` (Chat Completions, or the Responses API with ``api="responses"``) shows
the conversation's view each turn and returns found tools as JSON text. `AnthropicAdapter`
(Messages API) lists every tool, deferred ones with ``defer_loading``, and answers
``tool_search`` with ``tool_reference`` blocks. Each module says more.

Errors: a registry failure (unknown tool, timeout, crash, server not running, result too
large, upstream JSON-RPC error) becomes an error result whose text names the server and
the tool, so the model sees it and can recover; malformed arguments from the model do
too. Content: text stays text; images are images where the API takes them (Anthropic)
and a short placeholder elsewhere; embedded text resources become text; links become
their URI; a result with only structured content is sent as its JSON.

Modules: ``_content`` (what both share), ``_openai``, ``_anthropic``.
"""

from mcpmount.adapters._anthropic import AnthropicAdapter, AnthropicSearch
from mcpmount.adapters._content import MAX_TOOL_NAME_LENGTH, JSONObject
from mcpmount.adapters._openai import OpenAIAdapter, OpenAIApi

__all__ = [
    "MAX_TOOL_NAME_LENGTH",
    "AnthropicAdapter",
    "AnthropicSearch",
    "JSONObject",
    "OpenAIAdapter",
    "OpenAIApi",
]
