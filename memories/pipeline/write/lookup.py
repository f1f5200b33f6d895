"""Step `alias_lookup`: the entities the agent already knows that the message names."""

from __future__ import annotations

from memories.extraction import mentions
from memories.models import Event
from memories.naming import (
    first_names_compatible,
    ngrams,
    normalize_alias,
    surname_of,
    title_case,
    title_of,
    titled_surname,
)
from memories.pipeline.trace import StepRecord
from memories.pipeline.write.values import Known, Message
from memories.selectors import aliases_matching
from memories.selectors import entities as entity_selectors


def alias_lookup(message: Message, step: StepRecord) -> tuple[Message, Known]:
    """Entities the message names already: word-boundary match of its n-grams against aliases,
    then the other names that can denote exactly one known entity — a short form or nickname
    ("Paddy" for Patrick Fitzgerald), a spelling without accents, a title with a surname
    ("Dr. Fisher"), an acronym ("BofA"), a relative said by kin ("my brother"). Returns the
    message (with the messages said before it, and its writer when it introduces someone else)
    and what it names."""
    if not message.recent:
        message = Message(message.agent, message.event, message.speaker, message.config, _previous_messages(message))
    known = Known()
    grams = ngrams(message.text) | mentions.possessive_stems(message.text)  # "radeks startup": radek
    matched: set[str] = set()
    for alias, entity in aliases_matching(agent=message.agent, names=grams):
        matched.add(alias)
        known.add(entity, title_case(alias))
    _other_names(message, known, matched)
    _organizations_by_a_word(message, known, matched)
    _unnamed_relatives(message, known)
    _named_relatives(message, known)
    if mentions.writes_in_lower_case(message.text):  # "freya and i split up": first names without capitals
        words = mentions.lower_case_words(message.text) - matched
        for word, entity in entity_selectors.people_by_lower_name(
                agent=message.agent, words=words, writer=message.speaker,
                bare_subjects=lambda: mentions.bare_subjects(message.text)).items():
            known.add(entity, word)
    _spelling_variants(known, grams)
    _called_by_name(message, known)
    _names_with_initial(message, known)
    _names_with_honorific(message, known)
    writer = _writer(message, known)
    if writer:
        step.data["speaker"] = writer
        message = message.written_by(writer)
    step.candidates_in, step.candidates_out = len(grams), len(known.entities)
    step.data["entities"] = sorted(e.key for e in known.entities.values())
    if known.aliases:
        step.data["aliases"] = dict(sorted(known.aliases.items()))
    return message, known


def _other_names(message: Message, known: Known, matched: set[str]) -> None:
    """Capitalized runs the alias table does not hold that can denote one known entity."""
    surfaces = mentions.name_runs(message.text)
    runs = [normalize_alias(r) for r in surfaces]
    owners = mentions.possessive_names(message.text)
    family = normalize_alias(message.speaker).split()[1:]  # "the Kowalczyk side" is the writer's family
    for surface, norm in zip(surfaces, runs, strict=True):
        if norm in matched or len(norm) < 3 or norm in family:
            continue
        if " " not in norm and any(norm in r.split()[1:] for r in runs):
            continue  # "Rui Ferreira, a different Ferreira family": the message names its own Ferreira
        if (surname := titled_surname(surface)) and any(
                surname_of(r) == surname and title_of(r) == title_of(surface) and not titled_surname(r)
                for r in surfaces):
            continue  # "Dear Mr Orrin Dunstable, … Mr Dunstable now lives in X": the one the message names so
        entity = entity_selectors.entity_for_other_name(agent=message.agent, name=surface,
                                                        writer=message.speaker)
        if entity is None and mentions.may_be_short_organization_name(surface):
            def opening(possessive: bool, word: str = surface):
                return entity_selectors.organization_opening_with(
                    agent=message.agent, word=word, generic_tails=mentions.ORGANIZATION_TAILS, possessive=possessive)

            entity = opening(surface in owners)
            if entity is not None and surface in owners and not mentions.owns_nothing(message.text, owners[surface]):
                owners.pop(surface)  # "at Thistlewood's funeral": no short name of the firm
                entity = opening(False)
        if entity is not None:
            # the possessive is the name ("left Brackenbury's"), not whose something is
            known.add(entity, owners[surface] if surface in owners and entity.type == "organization" else surface)
    if mentions.writes_in_lower_case(message.text):  # "quit brackenbury's": a business said by its owner's name
        for word in sorted(set(owners) - matched - set(surfaces)):
            if word.islower() and mentions.may_be_short_organization_name(word) and (
                    entity := entity_selectors.organization_opening_with(
                        agent=message.agent, word=word, generic_tails=mentions.ORGANIZATION_TAILS, possessive=True)
            ) and mentions.owns_nothing(message.text, owners[word]):
                known.add(entity, owners[word])


def _organizations_by_a_word(message: Message, known: Known, matched: set[str]) -> None:
    """"quit the hornets" for the Lisnaskea Hornets, "transferred from the Polytechnic" for Leeds
    Polytechnic Institute: a word of one known organization's name, said after "the" where a verb
    or preposition of belonging puts it, is that organization."""
    held = matched | {normalize_alias(a) for a in known.aliases}
    words = [w for w in mentions.words_after_the(message.text) if normalize_alias(w) not in held]
    for word, entity in entity_selectors.organizations_by_inner_word(agent=message.agent, words=words).items():
        if mentions.heads_its_phrase(message.text, word):  # not "a guy from the surf shop"
            known.add(entity, word)
    # "gave up the choir": the one choir the agent knows stands for it here, a word that is no name of it
    clubs = [w for w in mentions.club_words_after_the(message.text) if normalize_alias(w) not in held]
    for word, entity in entity_selectors.organizations_by_last_word(agent=message.agent, words=clubs).items():
        known.add(entity, f"the {word}")
        known.kin_words.add(f"the {word}".lower())


def _called_by_name(message: Message, known: Known) -> None:
    """"Congrats Mags!!" right after Magdalena Ruiz wrote: a name a message opens by calling
    someone, which the agent does not hold, is a short form of the one who wrote just before (not
    of this writer, nor of the other sex). One indexed query, only when a message opens so."""
    name = mentions.name_called(message.text)
    if name is None or normalize_alias(name) in {normalize_alias(a) for a in known.aliases}:
        return
    row = (Event.objects.filter(agent=message.agent, redacted_at__isnull=True, occurred_at__lte=message.occurred_at)
           .exclude(pk=message.event.pk).order_by("-occurred_at", "-id").values_list("speaker", "text").first())
    before, said = row or ("", "")
    if not before or normalize_alias(before) == normalize_alias(message.speaker) or " " not in before.strip():
        return
    if any(first_names_compatible(name, run.split()[0]) for run in mentions.name_runs(said or "")):
        return  # "Danielle passed her test!" → "Congrats Dani!!": the one that message names, maybe
    given = before.split()[0]
    # "Benji" for Ben, "Mags" for Magdalena (a clipped name with an -s), said to the one who just wrote
    clipped = len(name) >= 4 and name.endswith("s") and given.lower().startswith(name[:-1].lower())
    if not (clipped or first_names_compatible(name, given)) or entity_selectors.name_of_other_sex(name, given):
        return
    entity, _ = entity_selectors.resolve_exact(agent=message.agent, name=before, entity_type="person")
    if entity is not None and entity.type == "person":
        known.add(entity, name)


def _spelling_variants(known: Known, grams: set[str]) -> None:
    """"bridget oneill" for Bridget O'Neill: a known person's full name written without its
    capitals, apostrophe or hyphen is that person, and the variant one more of their names."""
    folded = {normalize_alias(e.display_name).replace(" ", ""): e for e in known.entities.values()
              if e.type == "person" and " " in e.display_name.strip()}
    for gram in grams:
        entity = folded.get(gram.replace(" ", "")) if " " in gram else None
        if entity is not None and gram != normalize_alias(entity.display_name):
            known.add(entity, gram)


def _names_with_initial(message: Message, known: Known) -> None:
    """"chloe b" or "Chloe B." is the one known Chloe whose family name starts with a B, even
    when the agent knows another Chloe: the phrase becomes one more of her names."""
    held = {normalize_alias(a) for a in known.aliases}
    said = [(phrase, given, initial) for phrase, given, initial in mentions.names_with_initial(message.text)
            if normalize_alias(phrase) not in held]
    found = entity_selectors.people_by_initial(agent=message.agent, names=[(g, i) for _, g, i in said])
    for phrase, given, initial in said:
        if (entity := found.get((given, initial))) is not None:
            known.add(entity, phrase)


def _names_with_honorific(message: Message, known: Known) -> None:
    """"tanaka-san" or "Hasan Bey" is the known person the name before the honorific stands for
    in this message: the phrase becomes one more of their names."""
    people = {e.display_name: e for e in known.entities.values() if e.type == "person"}
    by_name = {normalize_alias(name): name for name in people}
    by_name |= {normalize_alias(surface): name for surface, name in known.aliases.items() if name in people}
    for phrase, base in mentions.names_with_honorific(message.text):
        if (name := by_name.get(normalize_alias(base))) is not None:
            known.add(people[name], phrase)


def _unnamed_relatives(message: Message, known: Known) -> None:
    """"my brother" said without a name is the one brother the agent knows the writer has: it
    stands for him in this message, so what it says attaches to him ("my brother moved to
    Austin" → Daniel lives in Austin). So does "Dad" or "Mum" used as a name ("Dad sold his
    hives"). With none or several, nothing is assumed."""
    agent, writer = message.agent, message.speaker
    for phrase, kin in mentions.unnamed_relatives(message.text):
        relative = entity_selectors.relative_of(agent=agent, owner=writer, term=kin)
        if relative is not None:
            known.add(relative, phrase)
    phrase = mentions.parents_phrase(message.text)
    if phrase and len(parents := entity_selectors.parents_of(agent=agent, child=writer)) == 2:
        # "my parents moved to the coast": what the message says of one, it says of both
        known.add(parents[0], phrase)
        known.kin_words.add(phrase.lower())
        known.companions[parents[0].id] = [parents[1]]
    for owner, kin, phrase in mentions.relatives_of_others(message.text):  # "Lena's husband": her one husband
        owner = known.aliases.get(owner, owner)
        if owner not in {e.display_name for e in known.entities.values() if e.type == "person"}:
            continue
        relative = entity_selectors.relative_of(agent=agent, owner=owner, term=kin)
        if relative is not None:
            known.add(relative, phrase)
            known.kin_words.add(phrase.lower())  # "Lena's husband" is no name of his
    for word in mentions.parent_words_as_names(message.text):
        relative = entity_selectors.relative_of(agent=agent, owner=writer, term=word.lower())
        if relative is not None and word.lower() not in {normalize_alias(a) for a in known.aliases}:
            known.add(relative, word)
            known.kin_words.add(word.lower())


def _named_relatives(message: Message, known: Known) -> None:
    """"my cousin Emeka" when the agent knows two Emekas: the one who is the writer's cousin. The
    first name stands for that relative in this message (and "Cousin Emeka" too)."""
    for kin, name in mentions.named_relatives(message.text):
        relative = entity_selectors.relative_of(agent=message.agent, owner=message.speaker, term=kin, name=name)
        if relative is not None:
            known.add(relative, name)


def _writer(message: Message, known: Known) -> str | None:
    """A message that opens by naming its writer ("Hi, Julia here") is in that person's first
    person, when the name is a person the agent knows (or an unambiguous new first name). So is
    one where someone says whose relative they are ("hello, this is Tomás Ruiz, Elena's son")."""
    speaker = normalize_alias(message.speaker)
    relative = mentions.relative_introduction(message.text)
    if relative and [normalize_alias(relative[1])] == speaker.split()[:1]:
        return known.aliases.get(relative[0]) or relative[0]
    name = mentions.self_introduction(message.text)
    if not name or normalize_alias(name) in {speaker, *speaker.split()[:1]}:
        return None
    if " " not in name.strip() and speaker.split()[1:] and name not in known.aliases and first_names_compatible(
            name, speaker.split()[0]):
        return None  # Katherine Moore's "Hi, Kate here": her own short name
    canonical = known.aliases.get(name) or next(
        (e.display_name for e in known.entities.values() if e.type == "person"
         and normalize_alias(e.display_name) == normalize_alias(name)), None)
    if canonical is None and mentions.is_first_name(name):
        canonical = name
    return canonical


def _previous_messages(message: Message, count: int = 3) -> tuple[str, ...]:
    """The agent's messages said just before this one, oldest first, when the caller sent none:
    what a pronoun at the start of a message ("He's engaged now") refers back to."""
    rows = (Event.objects.filter(agent=message.agent, redacted_at__isnull=True, occurred_at__lte=message.occurred_at)
            .exclude(pk=message.event.pk).order_by("-occurred_at", "-id").values_list("text", flat=True)[:count])
    return tuple(reversed([t for t in rows if t]))
