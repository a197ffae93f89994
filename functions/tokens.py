"""tiktoken cl100k_base loaded from the file shipped in this package (no download)."""

from __future__ import annotations

import binascii
import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path

_FILE = Path(__file__).parent / "data" / "cl100k_base.tiktoken"
_WORDS = Path(__file__).parent / "data" / "common_words.json"
_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
    r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


@lru_cache(maxsize=1)
def encoding():
    """The cl100k_base encoding, built once per process from the shipped file."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(_FILE), expected_hash=_SHA256)
    return tiktoken.Encoding(
        name="cl100k_base", pat_str=_PAT, mergeable_ranks=ranks, special_tokens=_SPECIAL
    )


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in text (special-token strings count as plain text)."""
    return len(encoding().encode(text, disallowed_special=()))


@lru_cache(maxsize=1)
def common_words() -> frozenset[str]:
    """Lowercase words that are one cl100k_base token with a leading space: the tokenizer
    learned them as whole words, so they are common in English text (a stand-in for a word
    frequency list that ships with the package anyway). Read from data/common_words.json, which
    derive_common_words() wrote from the shipped file (`python -m functions.tokens` writes it
    again; a test checks they agree): reading the list is ~5 ms of a cold start's CPU, deriving
    it ~50-100 ms, building the tokenizer ~0.3 s."""
    try:
        data = json.loads(_WORDS.read_text(encoding="utf-8"))
        if data["cl100k_sha256"] != _SHA256:
            raise ValueError(data["cl100k_sha256"])
        return frozenset(data["words"])
    except (OSError, ValueError, KeyError, TypeError):
        raise ValueError(f"{_WORDS} is not the word list this package was built with; "
                         "reinstall textbook-chat.") from None


def derive_common_words() -> list[str]:
    """common_words() from the shipped cl100k_base file itself (not through encoding()), sorted.
    A token opening with a space is base64 starting "I"."""
    data = _FILE.read_bytes()
    if hashlib.sha256(data).hexdigest() != _SHA256:
        raise ValueError(f"{_FILE} is not the cl100k_base file this package was built with; "
                         "reinstall textbook-chat.")
    tokens = (binascii.a2b_base64(t) for t in re.findall(rb"^I\S+", data, re.M))
    return sorted({w for w in (t[1:].decode("utf-8", "ignore") for t in tokens
                               if t[:1] == b" " and len(t) > 2)
                   if w.isalpha() and w.islower()})


if __name__ == "__main__":  # python -m functions.tokens: write data/common_words.json again
    _WORDS.write_text(json.dumps({"cl100k_sha256": _SHA256, "words": derive_common_words()},
                                 ensure_ascii=False, separators=(",", ":")) + "\n",
                      encoding="utf-8")
