"""The shared index options (textbook_chat_cli/options.py): the chunking flags take their
defaults from ChunkOptions and are checked by its one rule, named by flag; site flags override
the config."""

from __future__ import annotations

import pytest

from indexer.model import ChunkOptions
from textbook_chat_cli.main import build_parser, main
from textbook_chat_cli.options import chunk_options, index_job

PAGE = "---\ntitle: Loops\n---\n\n## Jitter\n\n" + "Loop jitter is how much the period varies. " * 8


def _docs(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "loops.md").write_text(PAGE)
    return docs


def test_chunking_defaults_are_the_chunker_s_own():
    args = build_parser().parse_args(["index", "docs"])
    assert chunk_options(args) == ChunkOptions()


def test_bad_chunk_limits_are_usage_errors_naming_the_flag(tmp_path, capsys):
    docs = str(_docs(tmp_path))
    cases = (
        (["--min-tokens", "600"], "--min-tokens 600: min_tokens must be between 0 and max_tokens"),
        (["--max-tokens", "10"], "--max-tokens 10: max_tokens must be at least 64"),
        (["--overlap", "300"], "--overlap 300: overlap_tokens must be between 0 and max_tokens/2"),
        (["--split-levels", "1,2"], "--split-levels 1,2: split_levels must be heading levels 2..6"),
    )
    for flags, message in cases:
        assert main(["index", docs, "--dry-run", *flags]) == 2, flags
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err
    with pytest.raises(SystemExit) as exc:  # argparse's own usage error, one line
        main(["index", docs, "--split-levels", "two"])
    assert exc.value.code == 2
    assert "--split-levels: 'two': give heading levels like 2,3,4" in capsys.readouterr().err


def test_min_tokens_may_equal_max_tokens(tmp_path, capsys):  # the chunker's rule, the only one
    docs = str(_docs(tmp_path))
    assert main(["index", docs, "--dry-run", "--min-tokens", "128", "--max-tokens", "128"]) == 0
    assert "Dry run: 1 files read" in capsys.readouterr().out


def test_site_flags_override_the_config_once(tmp_path):
    docs = _docs(tmp_path)
    (tmp_path / "docusaurus.config.js").write_text(
        "export default { baseUrl: '/book/', trailingSlash: true };\n")
    said = []
    args = build_parser().parse_args(["index", str(docs), "--base-url", "guide",
                                      "--trailing-slash", "unset"])
    job = index_job(args, say=said.append)
    assert (job.site.base_url, job.site.trailing_slash) == ("/guide/", None)
    assert job.routes is None and job.chunking == ChunkOptions()
    assert "--base-url, --trailing-slash given" in said[0]
    job = index_job(build_parser().parse_args(["index", str(docs)]))
    assert (job.site.base_url, job.site.trailing_slash) == ("/book/", True)


def test_a_site_dir_that_is_not_a_folder_is_refused(tmp_path, capsys):
    docs = str(_docs(tmp_path))
    assert main(["index", docs, "--dry-run", "--site-dir", str(tmp_path / "webiste")]) == 2
    out, err = capsys.readouterr()
    assert f"--site-dir {tmp_path / 'webiste'} is not a folder" in err
    assert "Dry run" not in out  # not indexed with Docusaurus defaults
