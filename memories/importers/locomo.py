"""Reading LoCoMo-format conversation files (pure functions, no database)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

_SESSION_KEY = re.compile(r"^session_(\d+)$")
TURN_SPACING = timedelta(seconds=30)


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    occurred_at: datetime
    session: int


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    turns: list[Turn]
    qa: list[dict]


def parse_session_date(value: str) -> datetime:
    """"1:56 pm on 8 May, 2023" → 2023-05-08T13:56:00+00:00."""
    cleaned = re.sub(r"\s+", " ", value.strip())
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y"):
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise ValueError(f"unrecognised LoCoMo session date: {value!r}")


def turn_text(turn: dict) -> str:
    text = str(turn.get("text", "")).strip()
    caption = turn.get("blip_caption")
    return f"{text} [image: {caption}]" if caption else text


def parse_conversation(sample: dict) -> Conversation:
    conv = sample["conversation"]
    sessions = sorted(
        (int(m.group(1)), key) for key in conv if (m := _SESSION_KEY.match(key)) and isinstance(conv[key], list)
    )
    turns = []
    for number, key in sessions:
        start = parse_session_date(conv[f"{key}_date_time"])
        for index, turn in enumerate(conv[key]):
            turns.append(Turn(dia_id=turn["dia_id"], speaker=turn["speaker"], text=turn_text(turn),
                              occurred_at=start + index * TURN_SPACING, session=number))
    turns.sort(key=lambda t: (t.occurred_at, t.session))
    return Conversation(
        sample_id=str(sample.get("sample_id", "conversation")),
        speakers=(conv.get("speaker_a", ""), conv.get("speaker_b", "")),
        turns=turns,
        qa=list(sample.get("qa", [])),
    )


def load_conversations(path: Path | str) -> list[Conversation]:
    data = json.loads(Path(path).read_text())
    samples = data if isinstance(data, list) else [data]
    return [parse_conversation(s) for s in samples]
