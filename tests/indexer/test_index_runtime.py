"""`index` says which runtime and precision embedded the book and its time per 1,000 chunks (and
says nothing when nothing was embedded)."""

from __future__ import annotations

import re

import pytest

from functions.search.embeddings.local import LocalEmbedder
from textbook_chat_cli.main import main


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_index_names_the_runtime_that_embedded(tmp_path, capsys, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Motors\n\n## Encoders\n\nAn encoder counts the motor's turns.\n")
    for name in ("OPENAI_API_KEY", "QDRANT_URL", "EMBEDDING_PROVIDER", "EMBEDDING_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("QDRANT_PATH", str(tmp_path / "qdrant"))
    assert main(["index", str(docs)]) == 0
    said = re.findall(r"^Embedded (\d+) chunks with all-MiniLM-L6-v2 on (.+) in ([\d.]+) s "
                      r"\((\d+) s per 1,000 chunks on this machine\)\.$",
                      capsys.readouterr().err, re.M)
    expected = LocalEmbedder().load().runtime_label  # OpenVINO bf16 / OpenVINO f32 / numpy float32
    [(count, runtime, seconds, per)] = said
    assert (count, runtime) == ("1", expected)
    assert abs(int(per) - float(seconds) * 1000) <= 51  # the run's time per 1,000 chunks (1 chunk)
    assert main(["index", str(docs)]) == 0  # unchanged: nothing embedded, nothing to say
    assert "Embedded" not in capsys.readouterr().err
