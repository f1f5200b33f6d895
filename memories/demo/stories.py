"""The demo's conversations. Each agent has a story (dated messages that change what is true:
moves, new jobs, nicknames, a wedding) and chatter around it, interleaved by date. All text is
the project's own."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

DEMO_MESSAGES = [
    ("2024-03-01T09:00:00Z", "Rafael", "I live in Curitiba with my wife Ana."),
    ("2024-03-01T09:05:00Z", "Rafael", "I work at Vertix as a software engineer."),
    ("2024-03-02T18:30:00Z", "Rafael", "My friend Guili (Guilherme Maturana) plays guitar in a jazz band."),
    ("2024-03-10T12:00:00Z", "Rafael", "Ana loves jazz and she is an architect."),
    ("2024-04-02T10:00:00Z", "Rafael", "Clara Rezende left Vertix and joined Orion Tech as head of engineering."),
    ("2024-04-02T10:02:00Z", "Rafael", "Thiago Nogueira hired her personally."),
    ("2024-05-20T08:00:00Z", "Rafael", "I moved to São Paulo last week."),
    ("2024-06-15T20:00:00Z", "Rafael", "Guili is coming to visit us in June."),
]


@dataclass(frozen=True)
class Correction:
    """An operator's change after the conversation: find the current fact whose text contains
    `find` and correct it (`text`, optional `valid_from`), retract it, or reinstate the version
    that `find` names after retracting its successor."""

    action: str  # "correct" | "retract" | "reinstate"
    find: str
    reason: str
    text: str = ""
    valid_from: str | None = None


@dataclass(frozen=True)
class Story:
    slug: str
    name: str
    speaker: str
    start: str
    story: list[tuple[str, str]]  # (date, text), the speaker's own words
    people: list[str]
    places: list[str]
    corrections: list[Correction]
    chatter: int = 100


STUDIO = Story(
    slug="studio", name="Studio assistant (Helena)", speaker="Helena", start="2023-01-09",
    people=["Tomás Reis", "Tomi", "Inês Duarte", "Joana Lima", "Bruno Costa", "Marta Sousa"],
    places=["the Ribeira", "the studio", "Café Piolho", "the library site", "the market"],
    story=[
        ("2023-01-09T09:00", "I live in Lisbon and I work at Atelier Norte as an architect."),
        ("2023-01-10T18:00", "My colleague Tomi (Tomás Reis) works at Atelier Norte as a draftsman."),
        ("2023-01-16T12:00", "Inês Duarte lives in Porto."),
        ("2023-01-20T20:00", "My sister Joana Lima lives in Coimbra."),
        ("2023-01-23T09:30", "Joana Lima works at Hospital São João as a nurse."),
        ("2023-02-03T21:00", "My boyfriend Bruno Costa plays the cello in an orchestra."),
        ("2023-02-14T10:00", "Marta Sousa is my manager at Atelier Norte."),
        ("2023-03-08T19:00", "Tomi moved to Braga last month."),
        ("2023-05-11T08:30", "Bruno Costa has a cat called Miso."),
        ("2023-06-19T17:00", "Joana Lima moved to Lisbon in June."),
        ("2024-01-10T10:00", "Inês Duarte moved to Madrid in September."),
        ("2024-02-12T09:00", "I moved to Porto last week."),
        ("2024-04-22T18:00", "Tomás Reis left Atelier Norte to join Casa Forma."),
        ("2024-06-03T09:00", "I left Atelier Norte and joined Casa Forma as a project lead."),
        ("2024-07-20T13:00", "Bruno and I got married in July."),
        ("2024-09-02T09:00", "Marta Sousa is my manager at Casa Forma now."),
    ],
    corrections=[
        Correction("correct", "Hospital São João", "Joana works at Santo António, not São João",
                   text="Joana Lima works at Hospital Santo António as a nurse"),
        Correction("retract", "cello", "Bruno plays the viola, not the cello; nobody is sure of the orchestra"),
    ],
)

FIELDWORK = Story(
    slug="fieldwork", name="Field research assistant (Amara)", speaker="Amara", start="2023-03-06",
    people=["Kofi Mensah", "Priya Nair", "Pri", "David Kimani", "Wanjiru Mwangi", "Lucas Ferreira"],
    places=["the lake station", "the herbarium", "the lab", "the north transect", "the field camp"],
    story=[
        ("2023-03-06T08:00", "I live in Nairobi. I work at Lakeside Institute as an ecologist."),
        ("2023-03-07T09:00", "Kofi Mensah works at Lakeside Institute as a hydrologist."),
        ("2023-03-09T16:00", "My friend Pri (Priya Nair) lives in Mombasa."),
        ("2023-03-14T11:00", "David Kimani is my manager at Lakeside Institute."),
        ("2023-04-02T10:00", "Kofi Mensah lives in Kisumu."),
        ("2023-05-18T19:00", "Wanjiru Mwangi is a botanist at the National Museum."),
        ("2023-07-01T08:00", "Lucas Ferreira works at Green Delta as a data scientist."),
        ("2023-09-12T18:00", "Pri moved to Nairobi in September."),
        ("2023-11-20T09:00", "Kofi Mensah left Lakeside Institute to join Green Delta."),
        ("2024-01-15T08:00", "Kofi moved to Kampala last week."),
        ("2024-03-04T09:00", "I moved to Kisumu last month."),
        ("2024-05-27T17:00", "Wanjiru Mwangi left the National Museum and joined Lakeside Institute as a curator."),
        ("2024-08-05T09:00", "David Kimani retired in August."),
        ("2024-08-06T09:30", "Wanjiru Mwangi is my manager at Lakeside Institute now."),
    ],
    corrections=[
        # an operator's wrong fix, then undone: the original statement comes back
        Correction("correct", "Lucas Ferreira works at Green Delta", "thought he had moved to the Institute",
                   text="Lucas Ferreira works at Lakeside Institute as a data scientist", valid_from="2024-02-01"),
        Correction("reinstate", "Lucas Ferreira works at Green Delta", "he never left Green Delta"),
    ],
)

HOUSEHOLD = Story(
    slug="household", name="Home assistant (the Park family)", speaker="Min-jun", start="2023-02-01",
    people=["Soo-ah Park", "Leo Park", "Halmeoni", "Ji-ho Kim", "Grace Lee"],
    places=["the park", "school", "the dentist", "grandma's house", "the swimming pool"],
    story=[
        ("2023-02-01T07:30", "I live in Busan with my wife Soo-ah Park."),
        ("2023-02-01T07:35", "I work at Hanbit Foods as a logistics manager."),
        ("2023-02-02T20:00", "Soo-ah Park works at Daon Architects as an architect."),
        ("2023-02-05T10:00", "Our son Leo Park plays football at school."),
        ("2023-02-06T18:00", "Leo Park's best friend Ji-ho Kim lives in Busan."),
        ("2023-02-11T09:00", "My mother Halmeoni (Hana Park) lives in Daegu."),
        ("2023-04-20T08:00", "Grace Lee is Leo Park's piano teacher."),
        ("2023-08-29T20:00", "I left Hanbit Foods to join Seoul Robotics as operations lead."),
        ("2023-10-02T09:00", "We moved to Seoul last week."),
        ("2023-10-03T09:00", "Soo-ah Park left Daon Architects and joined Mirae Design as a senior architect."),
        ("2024-02-19T18:00", "Hana Park moved to Seoul in February."),
        ("2024-03-04T08:00", "Leo Park plays basketball now."),
    ],
    corrections=[],
)

STORIES = [STUDIO, FIELDWORK, HOUSEHOLD]

CHATTER = [
    "{p} and I had coffee at {place} this morning.",
    "I met {p} at {place} after lunch.",
    "{p} sent me photos from {place}.",
    "We talked about the weekend plans with {p}.",
    "{p} is reading a novel about the sea.",
    "{p} recommended a good bakery near {place}.",
    "I called {p} to ask about the schedule.",
    "{p} was late because of the rain.",
    "The meeting with {p} went well.",
    "{p} loves long walks on Sundays.",
    "I borrowed an umbrella from {p}.",
    "{p} is learning to cook rice properly.",
    "Remind me to send {p} the notes from {place}.",
    "It rained all day near {place}.",
    "I finished the report before dinner.",
    "The train was crowded today.",
    "{p} told a funny story about a lost key.",
    "{p} is planning a short trip in the spring.",
]


def _at(value: str) -> datetime:
    return datetime.fromisoformat(value).replace(tzinfo=UTC)


def conversation(story: Story) -> list[tuple[datetime, str, str, str]]:
    """(occurred_at, speaker, text, external id) in time order: the story's messages with
    `chatter` ordinary ones spread between them (seeded, so every load is the same)."""
    rng = random.Random(story.slug)
    said = [(_at(at), story.speaker, text, f"{story.slug}-s{i}") for i, (at, text) in enumerate(story.story)]
    first, last = said[0][0], said[-1][0]
    span = (last - first).total_seconds()
    for i in range(story.chatter):
        at = first + timedelta(seconds=int(span * (i + 0.5) / story.chatter), minutes=rng.randint(5, 600))
        text = rng.choice(CHATTER).format(p=rng.choice(story.people), place=rng.choice(story.places))
        said.append((at, story.speaker, text, f"{story.slug}-c{i}"))
    return sorted(said)
