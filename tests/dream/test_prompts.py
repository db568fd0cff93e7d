"""The system prompts memrepo sends to a model (the llm and anthropic dreamers', the integrator's
resolver's) are template files under templates/prompts/. The text the model receives must not
change by accident: tests/fixtures/prompts/ holds each prompt as it was sent before it
became a template, saved once when it moved (the anthropic dreamer's with its
`str.format` fields, filled here as the strategy filled them then). A wording change is made on
purpose in both the template and the fixture, and reviewed as the diff of both."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bot.config import Policy
from bot.dream.strategies.anthropic import DREAM_ANTHROPIC_NO_INSTRUCTIONS, system_text
from bot.dream.strategies.llm import build_request
from bot.integrator.resolve import LLMResolver
from bot.memfs import ResolveRequest
from bot.templating import templates_root
from tests.dream.test_dream_llm import DREAM

SAVED = Path(__file__).parents[1] / "fixtures" / "prompts"


def saved(name: str) -> str:
    return (SAVED / name).read_bytes().decode("utf-8")


def test_the_llm_dreamer_gets_the_saved_system_prompt() -> None:
    system = build_request(DREAM, "m1")["messages"][0]
    assert system == {"role": "system", "content": saved("dream-llm-system.txt")}


def test_the_resolver_gets_the_saved_system_prompt() -> None:
    request = ResolveRequest("system/human.md", "base\n", "ours\n", "theirs\n", "keep both", ("line 3",))
    system = LLMResolver("http://llm.test/v1", "m1").build_request(request)["messages"][0]
    assert system == {"role": "system", "content": saved("resolve-llm-system.txt")}


@pytest.mark.parametrize("instructions", [
    "",
    "   \n",
    "Prefer the newer statement.",
    "Keep {braces}, {{ doubled }}, {% blocks %} and {# hashes #} as written.\n\nA second paragraph.\n",
])
def test_the_anthropic_dreamer_gets_the_saved_system_prompt_with_its_fields(instructions: str) -> None:
    dream = dataclasses.replace(DREAM, policy=Policy(merge_instructions=instructions))
    expected = saved("dream-anthropic-system.txt").format(
        file_chars=dream.policy.limits.file_chars, example=dream.messages[0].message_id,
        merge_instructions=instructions.strip() or DREAM_ANTHROPIC_NO_INSTRUCTIONS)
    assert system_text(dream) == expected


def test_every_prompt_template_has_a_saved_text() -> None:
    templates = sorted(p.name.removesuffix(".md.j2") for p in (templates_root() / "prompts").glob("*.j2"))
    assert templates == sorted(p.name.removesuffix(".txt") for p in SAVED.glob("*.txt"))
