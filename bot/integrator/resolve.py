"""The integrator's model-backed resolver: asks an OpenAI-compatible chat endpoint for a file
the markdown-aware merge (bot.memfs.merge.markdown) could not merge by its rules. The answer is only a
proposal: `resolve_markdown` checks it like any other change before using it."""

from __future__ import annotations

import json
from typing import Any

import requests

from bot import llm
from bot.memfs import ResolveRequest, ResolverError
from bot.templating import render

# The model-backed resolver (resolve.py); shown after "path: ".
RESOLVE_LLM_SHAPE = "the LLM endpoint's answer has no choices[0].message.content"

SYSTEM_PROMPT = "prompts/resolve-llm-system.md.j2"

_WORDING = llm.Wording(shape=RESOLVE_LLM_SHAPE)


class LLMResolver:
    """Asks an OpenAI-compatible chat endpoint for the merged file. The answer is only a
    proposal: `resolve_markdown` checks it like any other change before using it."""

    name = "llm"

    def __init__(self, endpoint: str, model: str, key: str | None = None, *, timeout: float = 60.0,
                 session: requests.Session | None = None) -> None:
        self.chat = llm.ChatClient(endpoint, key, timeout=timeout, wording=_WORDING, error=ResolverError,
                                   session=session)
        self.url = self.chat.url
        self.model = model
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"LLMResolver(url={self.url!r}, model={self.model!r})"

    def build_request(self, request: ResolveRequest) -> dict[str, Any]:
        data = {
            "path": request.path,
            "merge_instructions": request.instructions,
            "base": request.base,
            "pull_request": request.ours,
            "main": request.theirs,
            "conflicts": list(request.conflicts),
        }
        return {
            "model": self.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": render(SYSTEM_PROMPT)},
                {"role": "user", "content": json.dumps(data, ensure_ascii=False)},
            ],
        }

    def resolve(self, request: ResolveRequest) -> str | None:
        content = self.chat.complete(self.build_request(request))
        if not isinstance(content, str) or not content.strip():
            raise ResolverError("the LLM answered with no text")
        return llm.unfenced(content)  # one outer ``` fence off, though the model was told not to fence
