"""scripts/lambda_zip.py, the writer of each function's zip (scripts/serverless-zip.js runs it
after `serverless package`), on a small function zip and requirements folder; the real offline
and OpenAI packages are built and run in tests/functions/test_offline_package.py and
test_openai_package.py."""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("lambda_zip", ROOT / "scripts" / "lambda_zip.py")
lambda_zip = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lambda_zip)

TAG = sys.implementation.cache_tag


@pytest.fixture
def package(tmp_path):
    """A function zip as Serverless makes it (the code, an executable wrapper, a requirement the
    requirements plugin injected itself) and the installed requirements beside it."""
    code = tmp_path / "chat.zip"
    with zipfile.ZipFile(code, "w") as z:
        z.writestr(zipfile.ZipInfo("functions/"), "")
        z.writestr("functions/app.py", "ANSWER = 42\n")
        wrapper = zipfile.ZipInfo("functions/stream-runtime", (2020, 5, 1, 0, 0, 0))
        wrapper.external_attr = 0o100755 << 16
        z.writestr(wrapper, "#!/bin/sh\nexec python3 -m functions.app\n")
        z.writestr("numpy/old.py", "stale = True\n")  # injected by the plugin: replaced
    reqs = tmp_path / "requirements"
    for name, text in {"numpy/__init__.py": "x = 1\n", "numpy-2.4.6.dist-info/RECORD": "r\n",
                       "numpy.libs/libopenblas.so": "blob", "mangum/__init__.py": "m = 1\n",
                       "typing_extensions.py": "t = 1\n", "broken.py": "def (:\n",
                       f"__pycache__/typing_extensions.{TAG}.pyc": "host bytecode",
                       f"mangum/__pycache__/__init__.{TAG}.pyc": "compiled by compileall"}.items():
        (reqs / name).parent.mkdir(parents=True, exist_ok=True)
        (reqs / name).write_text(text)
    return code, reqs


def test_the_requirements_join_the_code_and_a_left_out_package_stays_out(package):
    code, reqs = package
    counts = lambda_zip.write(code, reqs, ["numpy"], pyc=False)
    with zipfile.ZipFile(code) as z:
        names = set(z.namelist())
        assert z.read("mangum/__init__.py") == b"m = 1\n"
        wrapper = z.getinfo("functions/stream-runtime")
        assert (wrapper.external_attr >> 16) & 0o111, "the wrapper must stay executable"
        assert wrapper.date_time == (2020, 5, 1, 0, 0, 0)
        assert {i.date_time for i in z.infolist() if not i.filename.startswith("functions/")} \
            == {lambda_zip.FIXED_DATE}
    assert not {n for n in names if n.startswith("numpy")}, names  # folder, .libs, dist-info, stale
    assert f"__pycache__/typing_extensions.{TAG}.pyc" not in names  # the packaging machine's
    assert {"functions/app.py", "typing_extensions.py", "broken.py",
            f"mangum/__pycache__/__init__.{TAG}.pyc"} <= names
    assert not [n for n in names if n.endswith(".pyc") and "mangum" not in n]  # no --pyc
    assert counts["requirements"] == len([n for n in names if not n.startswith("functions/")])


def test_pyc_compiles_what_has_none_unchecked_and_leaves_what_does_not_compile(package):
    code, reqs = package
    lambda_zip.write(code, reqs, [], pyc=True)
    with zipfile.ZipFile(code) as z:
        names = set(z.namelist())
        for source in ("functions/app.py", "typing_extensions.py", "numpy/__init__.py"):
            pyc = importlib.util.cache_from_source(source)
            assert pyc in names, pyc
            assert int.from_bytes(z.read(pyc)[4:8], "little") == 0b01, f"{pyc}: not unchecked-hash"
        # the one compileall made is kept as it is, and a file that does not compile has none
        assert z.read(f"mangum/__pycache__/__init__.{TAG}.pyc") == b"compiled by compileall"
        assert importlib.util.cache_from_source("broken.py") not in names
        assert z.testzip() is None


def test_the_same_files_make_the_same_zip(package, tmp_path):
    """Serverless deploys a function only when its zip changed: a rerun writes the same bytes."""
    code, reqs = package
    again = tmp_path / "again.zip"
    again.write_bytes(code.read_bytes())
    digests = []
    for path in (code, again):
        lambda_zip.write(path, reqs, ["numpy"], pyc=True)
        digests.append(hashlib.sha256(path.read_bytes()).hexdigest())
    assert digests[0] == digests[1]
    assert oct(code.stat().st_mode & 0o777) == oct(again.stat().st_mode & 0o777)


def test_the_command_names_a_zip_that_is_not_there(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "lambda_zip.py"),
                           str(tmp_path / "chat.zip"), str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2
    assert "chat.zip does not exist" in done.stderr and "serverless package" in done.stderr
