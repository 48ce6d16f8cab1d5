"""Structured output that survives small and reasoning models: json_schema, repair, retry,
degrade."""

import json
import logging
import re
from typing import TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, ValidationError

from deepsift.records import Usage, usage_of

log = logging.getLogger(__name__)

Schema = TypeVar("Schema", bound=BaseModel)

ATTEMPTS = 2  # a reply that does not parse is asked for once more, with the error

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def strip_thinking(text: str) -> str:
    """Drop a reasoning model's <think> block (closed or cut off)."""
    return _THINK.sub("", text).strip()


def parse_json(text: str, schema: type[Schema]) -> Schema:
    """Validate a model's reply against `schema`, tolerating think blocks, fences and sloppy JSON.

    Raises ValueError when nothing in the text can be read as the schema.
    """
    text = strip_thinking(text)
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text, _outermost_json(text)]
    errors = []
    for candidate in filter(None, candidates):
        for attempt in (candidate, _repair(candidate)):
            try:
                return schema.model_validate(json.loads(attempt))
            # ValueError: also a number too long to convert; RecursionError: brackets nested
            # thousands deep (the repair closes them all).
            except (ValueError, ValidationError, RecursionError) as e:
                errors.append((str(e).splitlines() or [type(e).__name__])[0])
    raise ValueError(
        f"reply is not valid {schema.__name__} JSON ({errors[-1] if errors else 'empty'})"
    )


def _outermost_json(text: str) -> str:
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return ""
    start = min(starts)
    end = max(text.rfind("}"), text.rfind("]"))
    return text[start : end + 1] if end > start else text[start:]


def _repair(text: str) -> str:
    """Fix the common breakages: trailing commas, single quotes, missing closing brackets."""
    text = re.sub(r",\s*([}\]])", r"\1", text.strip())
    if "'" in text and '"' not in text:
        text = text.replace("'", '"')
    closers = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            escaped = ch == "\\" and not escaped
            if ch == '"' and not escaped:
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            closers.append("}" if ch == "{" else "]")
        elif ch in "}]" and closers:
            closers.pop()
    return text + ('"' if in_string else "") + "".join(reversed(closers))


def ask_structured(
    llm: BaseChatModel,
    messages: list[BaseMessage],
    schema: type[Schema],
    attempts: int = ATTEMPTS,
    max_tokens: int = 400,
    most: dict[str, int] | None = None,
    sampling: dict[str, float] | None = None,
    least: dict[str, int] | None = None,
) -> tuple[Schema | None, Usage]:
    """Ask for `schema` as json_schema output; (None, usage) after `attempts` bad replies.
    `most` and `least` bound the items of the schema's list fields (by field name): a server
    that enforces the schema (the embedded one) holds a small model to them; `sampling` adds
    request fields (the embedded server's repetition penalties: models.LOCAL_WRITING)."""
    json_schema = schema.model_json_schema()
    for field, items in (most or {}).items():
        json_schema["properties"][field]["maxItems"] = items
    for field, items in (least or {}).items():
        json_schema["properties"][field]["minItems"] = items
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": schema.__name__, "schema": json_schema},
    }
    # Sent as a plain request field: given `response_format` itself, langchain-openai takes the
    # SDK's parse path, which raises on a reply cut at max_tokens instead of letting us repair it.
    # max_tokens: small models can loop inside a JSON list until the context is full.
    bound = llm.bind(
        extra_body={"response_format": response_format, **(sampling or {})}, max_tokens=max_tokens
    )
    usage = Usage(llm_calls=0, prompt_tokens=0, completion_tokens=0)
    conversation = list(messages)
    for _ in range(attempts):
        reply: AIMessage = bound.invoke(conversation)
        usage = usage + usage_of(reply)
        try:
            return parse_json(str(reply.content), schema), usage
        except ValueError as e:
            log.warning("%s: %s; asking again", schema.__name__, e)
            conversation += [
                reply,
                HumanMessage(f"That reply was not valid: {e}. Answer with only the JSON object."),
            ]
    log.warning("%s: giving up after %d invalid replies", schema.__name__, attempts)
    return None, usage
