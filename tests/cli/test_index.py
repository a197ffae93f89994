"""`textbook-chat check` (textbook_chat_cli/index.py) pointed at the wrong build folder says so,
instead of blaming the docs folder."""

from __future__ import annotations

from textbook_chat_cli.main import main

PAGE = "---\ntitle: Loops\n---\n\n## Jitter\n\n" + "Loop jitter is how much the period varies. " * 8


def test_check_against_a_folder_without_the_site_s_pages(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "loops.md").write_text(PAGE)
    (docs / "motors.md").write_text(PAGE.replace("Loops", "Motors"))
    other = tmp_path / "other-site" / "build"
    (other / "docs" / "elsewhere").mkdir(parents=True)
    (other / "docs" / "elsewhere" / "index.html").write_text("<h2 id='x'>X</h2>")
    assert main(["check", str(docs), "--build-dir", str(other)]) == 1
    out, err = capsys.readouterr()
    assert out.count("page not found in the build") == 2
    assert (f"nothing was checked: no page of {docs} (2 in all) is in {other} (baseUrl /)"
            in err)
    assert "gave no chunks" not in err


def test_export_to_a_path_that_cannot_be_written_is_a_one_line_error(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "loops.md").write_text(PAGE)
    for target, why in ((tmp_path / "no" / "such" / "chunks.jsonl", "No such file or directory"),
                        (docs, "Is a directory")):
        assert main(["index", str(docs), "--dry-run", "--export", str(target)]) == 2
        err = capsys.readouterr().err
        assert f"--export {target}: cannot write it ({why})" in err and "Traceback" not in err
    assert not (tmp_path / "no").exists()


def test_index_with_a_qdrant_server_that_is_not_there(tmp_path, monkeypatch, capsys):
    from tests.ports import free_port

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "loops.md").write_text(PAGE)
    monkeypatch.setenv("QDRANT_URL", f"http://127.0.0.1:{free_port()}")  # nothing listens
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["index", str(docs)]) == 2
    err = capsys.readouterr().err
    assert "Qdrant cannot be reached: check QDRANT_URL" in err and "Traceback" not in err
