"""functions.tokens: the cl100k_base file shipped in the package, read two ways."""

from __future__ import annotations

import pytest

import functions.tokens as tokens


def test_common_words_read_from_the_file_are_the_tokenizers_own_whole_words():
    """common_words() reads the shipped file without building the tokenizer (the chat route's
    cold start): the same words as the tokenizer's own single-token, space-led lowercase words."""
    from_tokenizer = set()
    for token in tokens.encoding()._mergeable_ranks:
        if token[:1] == b" " and len(token) > 2:
            word = token[1:].decode("utf-8", errors="ignore")
            if word.isalpha() and word.islower():
                from_tokenizer.add(word)
    words = tokens.common_words()
    assert words == from_tokenizer
    # the shipped list is what the shipped file gives (python -m functions.tokens writes it)
    assert sorted(words) == tokens.derive_common_words()
    assert {"encoder", "robot", "the"} <= words and "colcon" not in words
    assert len(words) > 20_000


@pytest.mark.parametrize("change", ["cut", "other file"])
def test_a_changed_file_is_refused_with_what_to_do(tmp_path, monkeypatch, change):
    changed = tmp_path / "cl100k_base.tiktoken"
    changed.write_bytes(tokens._FILE.read_bytes()[:-10])
    words = tmp_path / "common_words.json"
    text = tokens._WORDS.read_text(encoding="utf-8")
    words.write_text(text[:-100] if change == "cut" else text.replace(tokens._SHA256, "0" * 64),
                     encoding="utf-8")
    monkeypatch.setattr(tokens, "_FILE", changed)
    monkeypatch.setattr(tokens, "_WORDS", words)
    tokens.common_words.cache_clear()
    try:
        with pytest.raises(ValueError, match="reinstall textbook-chat"):
            tokens.common_words()
        with pytest.raises(ValueError, match="reinstall textbook-chat"):
            tokens.derive_common_words()
    finally:
        tokens.common_words.cache_clear()
