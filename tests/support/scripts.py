"""Scripted LLM answers for pipeline tests: replies chosen by the JSON schema a request names."""

from __future__ import annotations

import json
from collections.abc import Callable


def schema_name(request: dict) -> str:
    fmt = request.get("response_format") or {}
    return (fmt.get("json_schema") or {}).get("name", "")


def by_schema(answers: dict[str, object]) -> Callable[[dict], str]:
    """A responder: the answer for the request's schema name (a dict is sent as JSON; a
    callable gets the request). Unknown schema names get an empty JSON object."""

    def respond(request: dict) -> str:
        answer = answers.get(schema_name(request), {})
        if callable(answer):
            answer = answer(request)
        return answer if isinstance(answer, str) else json.dumps(answer)

    return respond


def calls(server, name: str) -> int:
    return sum(1 for r in server.chat_requests if schema_name(r) == name)


def extraction(entities=(), facts=(), relations=(), profiles=()) -> dict:
    return {
        "entities": [{"name": e[0], "type": e[1], "aliases": list(e[2]) if len(e) > 2 else []} for e in entities],
        "facts": [{"subject": s, "text": t, "confidence": 0.95, "action": "NEW",
                   "importance_category": c} for s, t, c in facts],
        "relations": [{"source": s, "rel_type": r, "target": t} for s, r, t in relations],
        "updated_profiles": [{"entity": e, "profile": p} for e, p in profiles],
    }


def by_message(answers: dict[str, dict]) -> Callable[[dict], dict]:
    """For by_schema: pick the answer whose key occurs in the request's message text."""

    def answer(request: dict) -> dict:
        content = request["messages"][-1]["content"]
        message = content.split("Message:", 1)[-1].split("Existing knowledge:", 1)[0]
        for needle, value in answers.items():
            if needle in message:
                return value
        return extraction()

    return answer
