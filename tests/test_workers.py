"""tests/workers.py: how the suite is split between pytest-xdist's workers."""

from tests.workers import SITE_GROUP, scope


def test_every_e2e_test_shares_one_worker_and_other_files_keep_theirs_together():
    assert scope("tests/e2e/test_widget.py::test_x[a]") == SITE_GROUP
    assert scope("tests/e2e/test_llms_txt.py::test_y") == SITE_GROUP
    assert scope("tests/functions/test_mcp.py::test_a") == "tests/functions/test_mcp.py"
    assert scope("tests/functions/test_mcp.py::TestX::test_b[1-2]") == "tests/functions/test_mcp.py"
    assert scope("tests/test_e2e_notes.py::test_c") == "tests/test_e2e_notes.py"


def test_each_corpus_table_may_run_beside_the_other():
    a, b = (scope(f"tests/test_corpora_benchmark.py::test_corpus_eval_table[{name}]")
            for name in ("pai-ali", "pai-hassaan"))
    assert a != b and SITE_GROUP not in (a, b)
