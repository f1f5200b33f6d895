"""Reads behind entity resolution: which known entity a name, a short form, a title with a
surname, an acronym or a kin word can denote. Each takes the agent first; none writes."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

import numpy as np
from django.contrib.postgres.aggregates import ArrayAgg
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from pgvector.django import CosineDistance

from memories.extraction.offline.lexicon import (
    CHAT_FORMS,
    CHAT_WORDS,
    FIRST_NAMES,
    KINSHIP,
    SAME_KIN,
    sex_of,
    sexes_cross,
)
from memories.extraction.offline.parse import is_word_form
from memories.models import Agent, Entity, EntityAlias, Event, Relationship
from memories.naming import (
    clipped_family_name,
    diminutive_stems,
    entity_key,
    family_name_moved,
    first_names_compatible,
    genders_differ,
    in_nickname_table,
    is_acronym_of,
    nickname_of,
    normalize_alias,
    normalize_type,
    person_names_compatible,
    person_words,
    same_titled_person,
    short_forms_of,
    strip_accents,
    surname_of,
    title_of,
    title_sex,
    titled_surname,
    titles_differ,
)


def resolve_exact(*, agent: Agent, name: str, entity_type: str, writer: str = "",
                  greeted: bool = False) -> tuple[Entity | None, str]:
    """Phase 1: alias table, key slug, display name, then person-name prefix (≥ 3 chars). The
    person-name step never reads a title with a surname ("Dr. Rahimi") as `writer`, who does not
    title themselves; a title a letter greets (`greeted`: "Dear Mrs Harwick,") that several people can
    bear is the one of them who writes to the agent."""
    norm = normalize_alias(name)
    alias = (EntityAlias.objects.filter(agent=agent, alias=norm).select_related("entity")
             .defer("entity__name_embedding").first())
    if alias:
        return alias.entity.survivor(), "alias"
    slug = entity_key("x", name).split(":", 1)[1]
    by_key = Entity.objects.filter(agent=agent, key__endswith=f":{slug}").order_by("id")
    typed = [e for e in by_key if e.type == normalize_type(entity_type)] or list(by_key)
    if typed:
        return typed[0].survivor(), "key"
    by_name = Entity.objects.filter(agent=agent, display_name__iexact=name.strip()).first()
    if by_name:
        return by_name.survivor(), "display_name"
    if _may_be_person_name(name, entity_type):
        matches = resolve_person_name(agent=agent, name=name, writer=writer)
        if len(matches) > 1 and titled_surname(name) and greeted:
            matches = _writers_among(agent, matches) or matches
        if len(matches) == 1:
            return matches[0], "nickname"
    if _may_be_acronym(name, entity_type):
        matches = resolve_acronym(agent=agent, name=name)
        if len(matches) == 1:
            return matches[0], "acronym"
    return None, ""



def _writers_among(agent: Agent, people: list[Entity]) -> list[Entity]:
    """Those of `people` who have written to the agent themselves: "Dear Mrs Harwick," in a letter someone
    else sent is to the Harwick who writes here, not to her baby daughter (one query, by exact name)."""
    names = {e.display_name: e for e in people}
    said = set(Event.objects.filter(agent=agent, speaker__in=list(names)).values_list("speaker", flat=True)
               .distinct()[:len(names)])
    return [e for n, e in names.items() if n in said]


def entity_for_other_name(*, agent: Agent, name: str, writer: str = "") -> Entity | None:
    """The one known entity a name the alias table does not hold can denote: a person by a
    short form, nickname, accent-free spelling or title with surname; an organization by its
    acronym. None when no entity or several can."""
    if titled_surname(name) or name[:1].isupper() and not _may_be_acronym(name, "organization"):
        matches = resolve_person_name(agent=agent, name=name, writer=writer, strict_titles=True)
        if len(matches) == 1:
            return matches[0]
        if matches:
            return None
    if _may_be_acronym(name, "organization"):
        matches = resolve_acronym(agent=agent, name=name)
        if len(matches) == 1:
            return matches[0]
    return None



def organization_opening_with(*, agent: Agent, word: str, generic_tails: frozenset[str],
                              possessive: bool = False) -> Entity | None:
    """The one organization whose several-word name is `word` (or `word`'s) and then generic words
    ending in one of `generic_tails` ("Huron" → Huron Realty Group, "Stanford" → Stanford
    University): the short name people use for it. Said in the possessive (`possessive`: "left
    Brackenbury's" for Brackenbury's Bakery, "at Thistlewood's" for Thistlewood & Quarrie Joinery), whatever its
    last word. None when none or several do."""
    word = word.strip()
    opening = Q(display_name__istartswith=f"{word} ")
    for form in (f"{word}'s", f"{word}’s") if possessive else ():  # "Brackenbury's" for Brackenbury's Bakery
        opening |= Q(display_name__istartswith=f"{form} ")
    rows = list(Entity.objects.filter(opening, agent=agent, type="organization", merged_into__isnull=True)
                .defer("name_embedding")[:2])
    if len(rows) != 1 or not (possessive or normalize_alias(rows[0].display_name).split()[-1] in generic_tails):
        return None
    return rows[0]



def organizations_by_inner_word(*, agent: Agent, words: Iterable[str]) -> dict[str, Entity]:
    """Per word, the one organization whose several-word name holds it after its first word
    ("hornets" → Lisnaskea Hornets, "Polytechnic" → Fenmore Polytechnic Institute). A word that no
    organization's name holds so, or several do, is left out. One query."""
    wanted = {normalize_alias(w): w for w in words if normalize_alias(w) and " " not in normalize_alias(w)}
    if not wanted:
        return {}
    pattern = r"\y(" + "|".join(re.escape(w) for w in wanted) + r")\y"
    found: dict[str, list[Entity]] = {}
    for entity in (Entity.objects.filter(agent=agent, type="organization", merged_into__isnull=True,
                                         display_name__contains=" ", display_name__iregex=pattern)
                   .defer("name_embedding")[:50]):
        for word in set(normalize_alias(entity.display_name).split()[1:]) & set(wanted):
            found.setdefault(wanted[word], []).append(entity)
    return {word: rows[0] for word, rows in found.items() if len(rows) == 1}



def organizations_by_last_word(*, agent: Agent, words: Iterable[str]) -> dict[str, Entity]:
    """Per word, the one organization whose several-word name ends with it ("choir" → Kendal Male
    Voice Choir). A word that ends no such name, or several, is left out. One query."""
    wanted = {normalize_alias(w): w for w in words if normalize_alias(w)}
    if not wanted:
        return {}
    found: dict[str, list[Entity]] = {}
    pattern = r"\y(" + "|".join(re.escape(w) for w in wanted) + r")$"
    rows = (Entity.objects.filter(agent=agent, type="organization", merged_into__isnull=True,
                                  display_name__contains=" ", display_name__iregex=pattern)
            .defer("name_embedding")[:50])
    for entity in rows:
        last = normalize_alias(entity.display_name).split()[-1]
        if last in wanted:
            found.setdefault(wanted[last], []).append(entity)
    return {word: rows[0] for word, rows in found.items() if len(rows) == 1}



def person_by_name_exists(*, agent: Agent, name: str) -> bool:
    """The agent holds a person keyed by this name (one indexed lookup)."""
    return Entity.objects.filter(agent=agent, key=entity_key("person", name)).exists()



def _may_be_acronym(name: str, entity_type: str) -> bool:
    word = name.strip()
    return (normalize_type(entity_type) in ("organization", "concept", "place") and 2 <= len(word) <= 8
            and " " not in word and sum(c.isupper() for c in word) >= 2)



def resolve_acronym(*, agent: Agent, name: str, limit: int = 300) -> list[Entity]:
    """The organizations (or places) whose multi-word name `name` abbreviates: "BofA" → Bank of
    America, "UCD" → University College Dublin, whichever case the letters are in."""
    initial = strip_accents(name.strip())[:1]
    rows = (Entity.objects.filter(agent=agent, merged_into__isnull=True, type__in=["organization", "place", "concept"])
            .filter(display_name__istartswith=initial, display_name__contains=" ")
            .defer("name_embedding").order_by("id")[:limit])
    return [e for e in rows if is_acronym_of(name, e.display_name)]



def _may_be_person_name(name: str, entity_type: str) -> bool:
    etype = normalize_type(entity_type)
    words = name.strip().split()
    if etype == "person":
        return bool(words)
    return etype == "concept" and 0 < len(words) <= 2 and all(w[:1].isupper() for w in words)



def resolve_person_name(*, agent: Agent, name: str, limit: int = 300, writer: str = "",
                        strict_titles: bool = False) -> list[Entity]:
    """The people `name` can denote: a display name or alias with a compatible first name
    (short form, diminutive, nickname, accents and punctuation aside) and no other surname;
    for a title with a surname ("Dr. Fisher"), the people of that surname other than `writer`
    (see `_people_with_surname`)."""
    writer_key = entity_key("person", writer) if writer.strip() else ""
    surname = titled_surname(name)
    if surname:
        return [e for e in _people_with_surname(agent, surname, limit, asked=name, strict_titles=strict_titles)
                if e.key != writer_key]
    first = strip_accents(name.strip().split()[0])
    initials = {first[:1], nickname_of(first)[:1]} - {""}
    starts = Q()
    for initial in initials:
        starts |= Q(display_name__istartswith=initial) | Q(aliases__alias__startswith=initial.lower())
    for stem in diminutive_stems(first):  # "Lupita" for Guadalupe: its clipped end before the ending
        starts |= Q(aliases__alias__contains=stem) if len(stem) >= 3 else Q(aliases__alias__startswith=stem)
    rows = (
        Entity.objects.filter(agent=agent, type="person", merged_into__isnull=True)
        .filter(starts | Q(display_name__icontains=first) | Q(aliases__alias__contains=normalize_alias(first))
                | Q(aliases__alias__in=short_forms_of(first)))  # "José Almeida" after "Zé"
        .defer("name_embedding").annotate(alias_names=_alias_names()).distinct()[:limit]
    )
    found = {}
    own_surname = surname_of(name) if len(name.split()) > 1 else ""  # "Mary-Jane" is a first name
    # a one-word name no one is given ("Kerrigan", "Xiaoming") may be the family name of a full
    # name, or its given name said after the family name
    bare = normalize_alias(name) if len(name.split()) == 1 and not _given_name(name) else ""
    for entity in rows:
        names = [entity.display_name, *entity.alias_names]
        if own_surname and entity.key == writer_key and all(len(n.split()) == 1 for n in names) and (
                person_words(name)[:1] != person_words(entity.display_name)[:1]):
            continue  # the writer known as "Dan" reads "a Daniel Kahneman book"; "I'm Dan Brooks" is theirs
        surnames = {surname_of(n) for n in names} - {""}
        # "Tuấn Trương" for Trương Minh Tuấn: by the name the person is known by, not by any alias
        moved = family_name_moved(name, entity.display_name)
        if own_surname and surnames and own_surname not in surnames and not moved:
            continue  # "Sam Whitfield" is not the "Sam Patel" who is also called "Sam"
        if name_of_other_sex(name, entity.display_name):
            continue  # "gabriel" is not Gabriela, even where her short form "gabi" is his too
        if moved or any(person_names_compatible(name, n, either_way=False) for n in names) or (
                bare and bare == surname_of(entity.display_name)):
            found[entity.id] = entity
    return list(found.values())


def _alias_names():
    """Each entity's aliases as one array column, read with the entity in the same statement."""
    rows = EntityAlias.objects.filter(entity=OuterRef("pk")).order_by().values("entity")
    return Coalesce(Subquery(rows.annotate(names=ArrayAgg("alias")).values("names")[:1]), Value([]),
                    output_field=ArrayField(models.CharField(max_length=255)))


def _given_name(word: str) -> bool:
    """A given name the lexicon or the nickname table knows ("Grace", "Paddy")."""
    return normalize_alias(word) in FIRST_NAMES or bool(nickname_of(word))



def people_by_lower_name(*, agent: Agent, words: set[str], writer: str = "", limit: int = 5000,
                         bare_subjects: Callable[[], set[str]] | None = None) -> dict[str, Entity]:
    """For each lower-case word, the one person of the agent it names: her first name ("freya" →
    Freya Lindqvist) or, for a word no dictionary holds, a short form of it ("zey" → Zeynep
    Kaya), a hyphenated name written as one word ("seojun" → Park Seo-jun), her family name
    ("zielinska" → Marta Zielinska; never the writer's own) or a nickname made of it ("hammo" →
    Connor Hammill). A word a dictionary holds may be the
    start of her given name or her family name ("ada" → Adaeze Okafor, "fischer" → David Fischer)
    when `bare_subjects()` (called only then) says the sentence uses it as a name. A word that may
    name several people is left out."""
    if not words:
        return {}
    own_family = set(normalize_alias(strip_accents(writer)).split()[1:])
    unknown = {w for w in words if not is_word_form(w)}
    dictionary = words - unknown if bare_subjects is not None else set()
    exact: dict[str, set[int]] = {}
    other: dict[str, set[int]] = {}
    pending: dict[str, set[int]] = {}
    people: dict[int, Entity] = {}
    rows = (Entity.objects.filter(agent=agent, type="person", merged_into__isnull=True)
            .defer("name_embedding").order_by("-id")[:limit])
    for entity in rows:
        parts = normalize_alias(strip_accents(entity.display_name)).split()
        if len(parts) == 1:  # "my brother Bartholomew": "bart", "cesca" for Francesca, "emeka" for Chukwuemeka
            for word in words - {parts[0]}:
                if _other_form_of_one_name(word, parts[0]):
                    people[entity.id] = entity
                    (other if word in unknown else pending).setdefault(word, set()).add(entity.id)
            continue
        if not parts:
            continue
        people[entity.id] = entity
        # "seojun": Park Seo-jun
        joined = {w.replace("-", "").lower() for w in strip_accents(entity.display_name).split() if "-" in w}
        if parts[0] in words:
            exact.setdefault(parts[0], set()).add(entity.id)
        for word in unknown:
            if word != parts[0] and (first_names_compatible(word, parts[0], either_way=False)
                                     and not name_of_other_sex(word, parts[0]) or word in joined or (
                    (word == parts[-1] or not _given_name(word) and clipped_family_name(word, parts[-1]))
                    and parts[-1] not in own_family)):
                other.setdefault(word, set()).add(entity.id)
        for word in dictionary:
            if word != parts[0] and (len(word) >= 3 and parts[0].startswith(word) or (
                    (word == parts[-1] or not _given_name(word) and clipped_family_name(word, parts[-1]))
                    and parts[-1] not in own_family)):
                pending.setdefault(word, set()).add(entity.id)
    if pending:
        said_as_names = bare_subjects()
        other |= {word: ids for word, ids in pending.items() if word in said_as_names}
    found = {word: exact.get(word) or ids for word, ids in other.items()} | exact  # her own first name first
    return {word: people[next(iter(ids))] for word, ids in found.items() if len(ids) == 1}


def _other_form_of_one_name(word: str, name: str) -> bool:
    """A lower-case word that may stand for a person known by one name only: a short form,
    diminutive or clipped part of it of four letters or more or a nickname the tables give for it
    ("cesca" for Francesca, "emeka" for Chukwuemeka), or the given name it is a short form of
    ("jessica" for Jess); never a word of chat ("lil" is no Lily, "ima" no Imani) nor one of the
    other sex. (A word a dictionary holds must also be said as a name: `bare_subjects`.)"""
    if word in CHAT_WORDS or word in CHAT_FORMS or name_of_other_sex(word, name):
        return False
    if len(word) > len(name):
        return (word in FIRST_NAMES or in_nickname_table(word)) and first_names_compatible(name, word, either_way=False)
    return (len(word) >= 4 or in_nickname_table(word)) and first_names_compatible(word, name, either_way=False)


def people_by_initial(*, agent: Agent, names: list[tuple[str, str]]) -> dict[tuple[str, str], Entity]:
    """For each (given name, initial of a family name), the one person of the agent whose name
    opens with that given name, or else with a name it is a short form of that shares its first three
    letters ("danny" for Dan, not of the other sex), and ends with a family name of that initial
    ("chloe", "b" → Chloe Bennett, even beside another Chloe). None fit or several: left out."""
    if not names:
        return {}
    keys = {(g, i): (normalize_alias(strip_accents(g)), normalize_alias(strip_accents(i))) for g, i in names}
    wanted = set(keys.values())
    query = Q()
    for given, _ in wanted:  # aliases are stored without accents: "chloe b…" finds Chloé Bennett
        query |= Q(aliases__alias__startswith=given[:3])  # "danny r" may be Dan Ruiz
    found: dict[tuple[str, str], set[int]] = {}
    people: dict[int, Entity] = {}
    exact: dict[tuple[str, str], set[int]] = {}
    for entity in Entity.objects.filter(query, agent=agent, type="person", merged_into__isnull=True).defer(
            "name_embedding").distinct():
        parts = normalize_alias(strip_accents(entity.display_name)).split()
        if len(parts) < 2:
            continue
        for given, initial in wanted:
            if initial != parts[-1][:1]:
                continue
            if given == parts[0]:
                exact.setdefault((given, initial), set()).add(entity.id)
            elif not sexes_cross(given, parts[0]) and first_names_compatible(given, parts[0]):
                found.setdefault((given, initial), set()).add(entity.id)
            else:
                continue
            people[entity.id] = entity
    found |= exact  # the name itself before any name it may be a short form of ("dan w": Dan Wu, not Daniel Wright)
    return {said: people[next(iter(found[key]))] for said, key in keys.items() if len(found.get(key, ())) == 1}


def people_known_by_given_name(*, agent: Agent, given: str, table_only: bool = False) -> list[Entity]:
    """People the agent knows by one name only (no family name in their display name or any alias)
    that `given` is the long form of: a short form the nickname table gives it ("Bill" for William),
    or, unless `table_only`, its clipped start that is no given name of its own ("Raf" for Rafael;
    not "Dan" for Dante)."""
    folded = normalize_alias(strip_accents(given))
    if len(folded) < 3:
        return []
    table = set(short_forms_of(given))
    clipped = set() if table_only else {c for n in range(3, len(folded)) if not in_nickname_table(c := folded[:n])
                                        and c not in FIRST_NAMES}
    said = Q(aliases__alias__in=table | clipped) if table | clipped else Q(pk__in=[])
    if not table_only:
        # any other short form the naming rules read ("Tayo" for Adetayo, "Baz" for Barnaby, "Daz"
        # for Darren), of a name that is no given name of its own: the people known by one name
        # that opens with the given name's first letter or holds a stretch of it
        said |= Q(display_name__istartswith=folded[:1]) | Q(display_name__iregex=r"^\w{2,5}$")
    rows = (Entity.objects.filter(agent=agent, type="person", merged_into__isnull=True).filter(said)
            .exclude(display_name__contains=" ").defer("name_embedding")
            .annotate(alias_names=_alias_names()).distinct())
    return [e for e in rows if all(len(n.split()) == 1 for n in e.alias_names)
            and not name_of_other_sex(e.display_name, given)
            and (normalize_alias(e.display_name) in table | clipped or any(a in table | clipped for a in e.alias_names)
                 or not table_only and normalize_alias(e.display_name) not in FIRST_NAMES
                 and first_names_compatible(e.display_name, given, either_way=False))]


def name_of_other_sex(said: str, known: str) -> bool:
    """"gabriel" beside Gabriela, "paul" beside Paula: the name said is a given name of one sex that
    the known one, of the other sex, only starts with, and no short-form table gives it for that
    name; another person, not a short form."""
    short, full = (person_words(strip_accents(n))[:1] for n in (said, known))
    if not short or not full:
        return False
    short, full = short[0], full[0]
    return sexes_cross(short, full) and short not in short_forms_of(full) and nickname_of(short) != full


def parents_of(*, agent: Agent, child: str) -> list[Entity]:
    """The people the agent knows as `child`'s parents (current parent_of edges into them)."""
    child_entity = Entity.objects.filter(agent=agent, key=entity_key("person", child)).only("id").first()
    if child_entity is None:
        return []
    ids = list(Relationship.objects.current().filter(agent=agent, rel_type="parent_of", target=child_entity)
               .order_by("id").values_list("source_id", flat=True))
    rows = {e.id: e for e in Entity.objects.filter(agent=agent, pk__in=ids, type="person").defer("name_embedding")}
    return list(dict.fromkeys(rows[i].survivor() for i in ids if i in rows))



def relative_of(*, agent: Agent, owner: str, term: str, name: str = "") -> Entity | None:
    """The one person the agent knows as `owner`'s `term` ("Hannah Brooks", "brother" → Daniel,
    through their current kinship edge whose evidence says "brother"), or None when there is none
    or more than one. With `name`, only a relative that name can denote counts ("my cousin Emeka"
    among several Emekas, or several cousins). Reads the owner's few kinship edges, not the agent's
    facts."""
    rel_type = KINSHIP.get(term.lower(), ("",))[0]
    owner_entity = Entity.objects.filter(agent=agent, key=entity_key("person", owner)).only("id").first()
    if not rel_type or owner_entity is None:
        return None
    words = next((group for group in SAME_KIN if term.lower() in group), (term.lower(),))
    says_term = re.compile(rf"(?<!\w)(?:{'|'.join(map(re.escape, words))})(?!\w)", re.I)
    edges = (Relationship.objects.current().filter(agent=agent, rel_type=rel_type)
             .filter(Q(source=owner_entity) | Q(target=owner_entity)).select_related("evidence_fact"))
    # a couple has one current partner or spouse: "her husband" needs no evidence saying "husband"
    couple = rel_type in ("spouse_of", "partner_of")
    ids = {e.target_id if e.source_id == owner_entity.id else e.source_id for e in edges
           if couple or (e.evidence_fact is not None and says_term.search(e.evidence_fact.text))}
    people = [e.survivor() for e in Entity.objects.filter(agent=agent, pk__in=ids, type="person")
              .defer("name_embedding").prefetch_related("aliases")]
    if name:
        people = [e for e in people if any(person_names_compatible(name, n, either_way=False)
                                           for n in [e.display_name, *(a.alias for a in e.aliases.all())])]
    return people[0] if len(people) == 1 else None



def _people_with_surname(agent: Agent, surname: str, limit: int, asked: str = "",
                         strict_titles: bool = False) -> list[Entity]:
    rows = (
        Entity.objects.filter(agent=agent, type="person", merged_into__isnull=True)
        .filter(Q(display_name__icontains=surname) | Q(aliases__alias__contains=surname))
        .defer("name_embedding").annotate(alias_names=_alias_names()).distinct()[:limit]
    )
    names = {e.id: [e.display_name, *e.alias_names] for e in rows}
    by_surname = [e for e in rows if surname in {surname_of(n) for n in names[e.id]}]
    if asked and not by_surname:  # "Sato-san" for Mr. Sato: another title of the same surname
        by_surname = [e for e in rows if any(same_titled_person(asked, n) for n in names[e.id])]
    # "Mrs. Lim" for Lim Bee Hoon: a family name said first, when no one carries it last
    found = by_surname or [e for e in rows if any(surname in person_words(n)[:-1] for n in names[e.id])]
    return _titled_alike(asked, found, names, strict_titles) if asked else found


def _given_name_of_other_sex(asked: str, name: str) -> bool:
    """"Mrs Harwick" is not Oliver Harwick, nor "Mr Harwick" Rebecca Harwick: a title that says a sex
    against a given name that says the other."""
    sex = title_sex(asked)
    given = sex_of(normalize_alias(name.split()[0])) if len(name.split()) > 1 and not title_of(name) else ""
    return bool(sex and given) and given != sex


def _titled_alike(asked: str, people: list[Entity], names: dict[int, list[str]],
                  strict: bool = False) -> list[Entity]:
    """The people of one surname `asked` ("Mrs. Rahimi") can be: never one known by a man's title for a
    woman's or the other way round; of several (or, `strict`, of any number), the ones known by the same
    title when some are, else those not known by another title of its kind ("Ms.", "Prof."). Strict is
    for the names a message is read with, before it says who else carries the surname ("Dr. Tamsalu"
    beside a known Prof. Tamsalu is her husband, named in the same note)."""
    title = title_of(asked)
    titles = {e.id: {t for n in names[e.id] if (t := title_of(n))} for e in people}
    people = [e for e in people if not any(genders_differ(title, t) for t in titles[e.id])
              and not _given_name_of_other_sex(asked, e.display_name)]
    if len(people) < 2 and not strict:
        return people
    same = [e for e in people if title and title in titles[e.id]]
    if same:
        return same
    return [e for e in people if not any(titles_differ(title, t) for t in titles[e.id])]



def resolve_fuzzy(*, agent: Agent, vector: np.ndarray, entity_type: str, limit: int = 3) -> list[tuple[Entity, float]]:
    """Phase 2 candidates: nearest entity names by cosine, same type (or untyped concepts).
    Ordered by `distance + 0`, which the shared HNSW index cannot serve: that index filters by
    agent after its scan (pgvector 0.6.2) and returns too few names for an agent that is a small
    share of the table. An agent's entities are few enough to sort exactly."""
    etype = normalize_type(entity_type)
    rows = (
        Entity.objects.filter(agent=agent, merged_into__isnull=True, name_embedding__isnull=False)
        .filter(Q(type=etype) | Q(type="concept") if etype != "concept" else Q())
        .annotate(distance=CosineDistance("name_embedding", vector) + Value(0.0))
        .order_by("distance")[:limit]
    )
    return [(e, 1.0 - float(e.distance)) for e in rows]
