"""Injected LLM client used by the extraction pipeline.

Code that needs an LLM asks for an ``LLMClient`` (normally via ``get_llm_client()``) and calls
``complete_json``, which returns schema-validated JSON plus token usage. The OpenAI-compatible
implementation negotiates the structured-output mode the server supports and remembers, per
server, the strongest that works (see ``MODES`` and ``_ServerModes``).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

import jsonschema
import openai

from memories.turns import turn_given_up

MODES = ("json_schema", "json_object+schema", "json_object", "text")
"""Structured-output modes, most constrained first: ``json_schema`` (OpenAI's own form),
``json_object+schema`` (``{"type": "json_object", "schema": ...}``: llama.cpp's Python server and
others constrain the reply with a grammar built from it), ``json_object`` (any JSON), ``text`` (no
``response_format``). Every mode but ``json_schema`` also puts the schema in the system prompt."""

# A 500 to these forms may be the server rejecting the form (llama.cpp answers a form it does not
# take, or a schema its grammar converter cannot handle, with a 500), or a passing fault: the next
# form is tried, and the 500 counts against the form only if that one answers (see _ServerModes).
_FORMS_A_500_MAY_REJECT = frozenset({"json_schema", "json_object+schema"})
_500S_IN_A_ROW_TO_DROP = 2


@dataclass
class _ServerModes:
    """What the process learned about one server's modes. Calls start at ``first``, the strongest
    mode not dropped. A 400 or 422 drops a mode at once; a 500 to a schema form drops it when it
    happens on two calls in a row that a weaker form then answered (llama.cpp, which answers
    json_schema with a 500 every time, is on its working form from the third call), so one passing
    fault of a server that takes json_schema does not move it to a weaker form. The 500s of a
    call that no form answered (an outage) count against no form. Once ``first`` answers a call
    the server is settled: a later fallback does not move it."""

    first: int = 0
    settled: bool = False
    rejections: dict[int, int] = field(default_factory=dict)  # by mode: 500s in a row (400/422: enough)

    def learn(self, *, rejected: list[tuple[int, bool]], answered: int) -> None:
        """A call was answered in mode ``answered`` after the server rejected ``rejected``
        ((mode, definitive: a 400/422) pairs)."""
        if self.settled:
            return
        for index, definitive in rejected:
            self.rejections[index] = _500S_IN_A_ROW_TO_DROP if definitive else self.rejections.get(index, 0) + 1
        self.rejections.pop(answered, None)
        while self.first < answered and self.rejections.get(self.first, 0) >= _500S_IN_A_ROW_TO_DROP:
            self.first += 1
        self.settled = self.first == answered


# What each server taught, by (base URL, model), for the whole process: a client rebuilt for the
# same server (new settings, a reset) starts from what was learned.
_learned_modes: dict[tuple[str, str], _ServerModes] = {}
_learned_lock = threading.Lock()


def forget_learned_modes() -> None:
    """Forget which mode every server accepted (the next call to each starts from json_schema)."""
    with _learned_lock:
        _learned_modes.clear()


@dataclass
class TokenUsage:
    """Tokens spent on one or more LLM calls."""

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens)

    def as_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
        }


@dataclass
class LLMReply:
    """A parsed, schema-valid reply: ``data`` is the JSON value, ``raw`` the text the model sent."""

    data: Any
    usage: TokenUsage
    mode: str
    raw: str


class LLMError(Exception):
    """Base LLM failure; ``usage`` holds the tokens already spent before the failure."""

    def __init__(self, message: str, *, usage: TokenUsage | None = None):
        super().__init__(message)
        self.usage = usage if usage is not None else TokenUsage()


class LLMUnavailable(LLMError):
    """No LLM is configured, or the server cannot be reached."""


class LLMBudgetReached(LLMUnavailable):
    """The agent's LLM token budget is spent: the call was not made (memories/budgets.py)."""


class LLMTimeout(LLMError):
    """The LLM did not answer within the timeout."""


class LLMInvalidReply(LLMError):
    """The reply was not parseable JSON, or the JSON did not match the schema."""


class _ModeRejected(Exception):
    """The server rejected a mode (another is left to try); ``definitive`` for a 400 or 422."""

    def __init__(self, *, definitive: bool):
        super().__init__()
        self.definitive = definitive


class LLMClient(Protocol):
    """What callers depend on: an ``enabled`` flag and ``complete_json``."""

    enabled: bool

    def complete_json(
        self, *, system: str, user: str, schema: dict, schema_name: str, timeout: float | None = None
    ) -> LLMReply: ...


class NoLLM:
    """Placeholder client used when no LLM is configured; every call raises ``LLMUnavailable``."""

    enabled = False

    def complete_json(
        self, *, system: str, user: str, schema: dict, schema_name: str, timeout: float | None = None
    ) -> LLMReply:
        raise LLMUnavailable("no LLM configured")


_FENCE_RE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def parse_json_text(text: str) -> Any:
    """Extract JSON from a reply: plain JSON, a ```json fenced block, or the first {...} object in prose."""
    stripped = (text or "").strip()
    if not stripped:
        raise LLMInvalidReply("reply is not valid JSON: empty reply")
    # strict=False: a raw newline inside a string is taken as one (llama.cpp's grammars allow it)
    try:
        return json.loads(stripped, strict=False)
    except ValueError:
        pass
    for block in _FENCE_RE.findall(stripped):
        try:
            return json.loads(block.strip(), strict=False)
        except ValueError:
            continue
    decoder = json.JSONDecoder(strict=False)
    for match in re.finditer(r"\{", stripped):
        try:
            value, _ = decoder.raw_decode(stripped, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise LLMInvalidReply(f"reply is not valid JSON: {stripped[:200]!r}")


def validate_against_schema(data: Any, schema: dict) -> None:
    """Raise ``LLMInvalidReply`` naming the failing path if ``data`` does not match ``schema``."""
    validator_cls = jsonschema.validators.validator_for(schema)
    errors = sorted(
        validator_cls(schema).iter_errors(data), key=lambda e: (len(e.path), list(map(str, e.path)))
    )
    if errors:
        error = errors[0]
        raise LLMInvalidReply(f"reply does not match schema at {error.json_path}: {error.message}")


class OpenAICompatibleLLM:
    """Client for any server speaking the OpenAI chat-completions API (OpenAI, vLLM, llama.cpp, Ollama...).

    Each call tries the ``MODES`` in order from the one learned for this server (base URL and
    model), moving on when the server rejects a mode (a 400 or 422, or a 500 to a form llama.cpp
    may not take); what the rejections teach is kept for every client of the process that talks
    to the same server (``_ServerModes``)."""

    enabled = True

    def __init__(self, *, base_url: str, model: str, api_key: str = "", timeout: float = 30.0):
        self.base_url = base_url
        self.model = model
        self.timeout = timeout
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=0
        )
        self._server = (base_url.rstrip("/"), model)

    def _mode_index(self) -> int:
        with _learned_lock:
            learned = _learned_modes.get(self._server)
            return learned.first if learned is not None else 0

    @property
    def mode(self) -> str:
        """The structured-output mode the next call to this server will try first."""
        return MODES[self._mode_index()]

    def _learn(self, *, rejected: list[tuple[int, bool]], answered: int) -> None:
        with _learned_lock:
            _learned_modes.setdefault(self._server, _ServerModes()).learn(rejected=rejected, answered=answered)

    def _remember_mode(self, index: int) -> None:
        """Settle this server on mode ``index`` (as if every stronger mode had been refused)."""
        with _learned_lock:
            _learned_modes[self._server] = _ServerModes(first=index, settled=True)

    @staticmethod
    def _request_args(mode: str, system: str, schema: dict, schema_name: str) -> tuple[str, dict]:
        if mode == "json_schema":
            fmt = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": False},
            }
            return system, {"response_format": fmt}
        # also in the prompt: a server may accept json_object+schema and ignore the schema
        hint = (
            "\n\nReply with a single JSON object only (no prose, no code fences) matching this JSON schema:\n"
            + json.dumps(schema, separators=(",", ":"))
        )
        if mode == "json_object+schema":
            return system + hint, {"response_format": {"type": "json_object", "schema": schema}}
        if mode == "json_object":
            return system + hint, {"response_format": {"type": "json_object"}}
        return system + hint, {}

    def _send(self, mode: str, *, system: str, user: str, schema: dict, schema_name: str,
              timeout: float | None, usage: TokenUsage, last: bool):
        """One request in ``mode``: the response; ``_ModeRejected`` when the server rejects the
        mode and another is left to try."""
        system_text, extra = self._request_args(mode, system, schema, schema_name)
        try:
            with turn_given_up():  # in a web request, its turn goes to the next one while the model answers
                return self._client.chat.completions.create(
                    model=self.model,
                    messages=[{"role": "system", "content": system_text}, {"role": "user", "content": user}],
                    temperature=0,
                    timeout=timeout if timeout is not None else self.timeout,
                    **extra,
                )
        except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
            if not last:
                raise _ModeRejected(definitive=True) from exc
            raise LLMError(f"LLM rejected the request: {exc}", usage=usage) from exc
        except openai.InternalServerError as exc:
            if mode in _FORMS_A_500_MAY_REJECT and exc.status_code == 500:
                raise _ModeRejected(definitive=False) from exc
            raise LLMError(f"LLM request failed: {exc}", usage=usage) from exc
        except openai.APITimeoutError as exc:
            raise LLMTimeout(f"LLM timed out: {exc}", usage=usage) from exc
        except openai.APIConnectionError as exc:
            raise LLMUnavailable(f"LLM unreachable at {self.base_url}: {exc}", usage=usage) from exc
        except openai.APIError as exc:
            raise LLMError(f"LLM request failed: {exc}", usage=usage) from exc

    def complete_json(
        self, *, system: str, user: str, schema: dict, schema_name: str, timeout: float | None = None
    ) -> LLMReply:
        usage = TokenUsage()
        rejected: list[tuple[int, bool]] = []
        for index in range(self._mode_index(), len(MODES)):
            mode = MODES[index]
            try:
                response = self._send(mode, system=system, user=user, schema=schema, schema_name=schema_name,
                                      timeout=timeout, usage=usage, last=index + 1 == len(MODES))
            except _ModeRejected as rejection:
                rejected.append((index, rejection.definitive))
                continue
            self._learn(rejected=rejected, answered=index)
            if response.usage is not None:
                usage = usage + TokenUsage(
                    response.usage.prompt_tokens or 0, response.usage.completion_tokens or 0
                )
            raw = (response.choices[0].message.content or "") if response.choices else ""
            try:
                data = parse_json_text(raw)
                validate_against_schema(data, schema)
            except LLMInvalidReply as exc:
                exc.usage = usage
                raise
            return LLMReply(data=data, usage=usage, mode=mode, raw=raw)
        raise LLMError("no structured-output mode available", usage=usage)  # pragma: no cover


def build_llm_client(*, provider: str, base_url: str, model: str, api_key: str, timeout: float) -> LLMClient:
    """Build a client for ``provider`` ("none" or "openai")."""
    provider = (provider or "none").strip().lower()
    if provider == "none":
        return NoLLM()
    if provider == "openai":
        if not base_url:
            raise ValueError("ANAMNESIS_LLM='openai' requires ANAMNESIS_LLM_BASE_URL to be set")
        return OpenAICompatibleLLM(base_url=base_url, model=model, api_key=api_key, timeout=float(timeout))
    raise ValueError(f"unknown LLM provider {provider!r}: expected 'none' or 'openai' (ANAMNESIS_LLM)")


_cached_client: LLMClient | None = None
_cache_lock = threading.Lock()


def get_llm_client() -> LLMClient:
    """Return the process-wide client built from the ``ANAMNESIS_LLM*`` Django settings."""
    global _cached_client
    with _cache_lock:
        if _cached_client is None:
            from django.conf import settings

            _cached_client = build_llm_client(
                provider=getattr(settings, "ANAMNESIS_LLM", "none"),
                base_url=getattr(settings, "ANAMNESIS_LLM_BASE_URL", ""),
                model=getattr(settings, "ANAMNESIS_LLM_MODEL", ""),
                api_key=getattr(settings, "ANAMNESIS_LLM_API_KEY", ""),
                timeout=getattr(settings, "ANAMNESIS_LLM_TIMEOUT", 30.0),
            )
        return _cached_client


def reset_llm_client() -> None:
    """Forget the cached client (call after changing settings)."""
    global _cached_client
    with _cache_lock:
        _cached_client = None
