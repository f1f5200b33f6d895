from memories.tokens import count_tokens, count_tokens_each
from retrieval.formatting import ContextLine, format_context
from retrieval.keys import CandidateKey


def lines(n, section="facts", words=10):
    key = CandidateKey.event if section == "events" else CandidateKey.fact
    return [ContextLine(section, key(i), " ".join(["fact"] * words) + f" {i}", f"e{i}") for i in range(n)]


def test_sections_have_titles_and_citations():
    context, tokens, keys = format_context(lines(2) + lines(1, "events"), max_tokens=2000, tiers=(0.5, 0.3, 0.2),
                                           count=count_tokens_each)
    assert context.startswith("Known facts:\n- fact")
    assert "Relevant conversations:" in context and "[e0]" in context
    assert keys == [CandidateKey.fact(0), CandidateKey.fact(1), CandidateKey.event(0)]
    assert tokens == count_tokens(context)


def test_budget_is_respected_with_a_real_tokenizer():
    for budget in (50, 120, 400):
        context, tokens, _ = format_context(lines(100) + lines(100, "events"), max_tokens=budget,
                                            tiers=(0.5, 0.3, 0.2), count=count_tokens_each)
        assert 0 < tokens <= budget


def test_unused_share_rolls_over_to_later_sections():
    context, _, keys = format_context(lines(30, "events"), max_tokens=300, tiers=(0.5, 0.3, 0.2),
                                      count=count_tokens_each)
    # no facts or patterns: conversations may use the whole budget, not just 20%
    assert len(keys) > 5
