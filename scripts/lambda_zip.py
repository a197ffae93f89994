"""Writes one Lambda function's zip: the code Serverless packaged for it, the installed
requirements beside it, and (with --pyc) bytecode for every module that has none. Run by
scripts/serverless-zip.js for each function after `serverless package` has made its zip.

    python scripts/lambda_zip.py FUNCTION.zip REQUIREMENTS_DIR [--leave-out numpy,tokenizers] [--pyc]

Why here and not in serverless-python-requirements: that plugin deflates every requirement in
JavaScript at level 9, about 45 s of CPU for the offline mode's 115 MB zip, once per function;
zlib at level 6 writes the same zip in about 9 s and no larger (the model's weights are most of
it). What the plugin would have written is what this writes:
- each requirement under its installed path, with its file mode and one fixed date (the same
  zip for the same files: Serverless deploys a function only when its zip changed);
- no top-level __pycache__ (the packaging machine's bytecode for top-level modules);
- without the packages `--leave-out` names (a package is its folder, its `.libs` and its
  `-x.y.dist-info`): `selection` never embeds, so its zip carries no model (custom.leaveOut).
A requirement already in the function's zip (the plugin injected it there itself) is replaced.

--pyc: Lambda's /var/task is read-only, so Python cannot keep the bytecode it compiles; every
cold start would compile again. Every .py in the zip that has no .pyc (the project's own
functions/, and the top-level modules left without their __pycache__) gets an unchecked-hash
.pyc of this Python, the functions' version (scripts/serverless-zip.js checks that): every file
in the zip has one fixed date, so a timestamp-checked .pyc would never match on Lambda. A file
that does not compile is left to compile at import."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import zipfile
from importlib._bootstrap_external import _code_to_hash_pyc
from pathlib import Path

FIXED_DATE = (1980, 1, 1, 0, 0, 0)  # the zip format's earliest; the plugin's Date(0) became this
LEVEL = 6


def left_out(top: str, packages: list[str]) -> bool:
    return any(top == p or top == f"{p}.libs" or (top.startswith(f"{p}-") and top.endswith(".dist-info"))
               for p in packages)


def requirement_files(folder: Path, packages: list[str]) -> list[tuple[str, Path]]:
    """(name in the zip, file) for every installed requirement the function keeps, sorted."""
    out = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        rel = Path(root).relative_to(folder)
        for name in sorted(files):
            arcname = (rel / name).as_posix()
            top = arcname.split("/", 1)[0]
            if top == "__pycache__" or left_out(top, packages):
                continue
            out.append((arcname, Path(root) / name))
    return out


def _info(name: str, mode: int, date=FIXED_DATE) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date)
    info.create_system = 3  # UNIX: the mode below is read (an executable stays executable)
    info.external_attr = (mode & 0xFFFF) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def _pyc(name: str, source: bytes) -> bytes | None:
    try:
        code = compile(source, name, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    return bytes(_code_to_hash_pyc(code, importlib.util.source_hash(source), False))


def write(function_zip: Path, requirements: Path, leave_out: list[str], pyc: bool) -> dict:
    """Rewrites function_zip in place (through a temporary file beside it); returns counts."""
    reqs = requirement_files(requirements, leave_out) if requirements.is_dir() else []
    installed_tops = {p.name for p in requirements.iterdir()} if requirements.is_dir() else set()
    fd, tmp = tempfile.mkstemp(prefix=function_zip.name, suffix=".tmp", dir=function_zip.parent)
    os.close(fd)
    written: dict[str, zipfile.ZipInfo] = {}
    sources: dict[str, bytes] = {}
    try:
        with zipfile.ZipFile(function_zip) as source, \
                zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=LEVEL) as out:
            for entry in source.infolist():
                if entry.is_dir() or entry.filename.split("/", 1)[0] in installed_tops:
                    continue  # a requirement: written from the folder below
                data = source.read(entry)
                info = _info(entry.filename, entry.external_attr >> 16, entry.date_time)
                out.writestr(info, data, compresslevel=LEVEL)
                written[info.filename] = info
                if entry.filename.endswith(".py"):
                    sources[entry.filename] = data
            for arcname, path in reqs:
                data = path.read_bytes()
                info = _info(arcname, path.stat().st_mode)
                out.writestr(info, data, compresslevel=LEVEL)
                written[arcname] = info
                if arcname.endswith(".py"):
                    sources[arcname] = data
            compiled = 0
            if pyc:
                for name, data in sources.items():
                    target = importlib.util.cache_from_source(name)
                    if target in written or (code := _pyc(name, data)) is None:
                        continue
                    info = _info(target, written[name].external_attr >> 16, written[name].date_time)
                    out.writestr(info, code, compresslevel=LEVEL)
                    written[target] = info
                    compiled += 1
        os.chmod(tmp, function_zip.stat().st_mode & 0o777)  # mkstemp's is 0600
        os.replace(tmp, function_zip)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return {"files": len(written), "requirements": len(reqs), "compiled": compiled}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("zip", type=Path, help="the function's zip, as `serverless package` made it")
    parser.add_argument("requirements", type=Path, help="the installed requirements' folder")
    parser.add_argument("--leave-out", default="", help="packages left out, comma-separated")
    parser.add_argument("--pyc", action="store_true", help="compile what has no .pyc (this Python)")
    args = parser.parse_args(argv)
    if not args.zip.is_file():
        print(f"lambda_zip.py: {args.zip} does not exist (run `serverless package` first)", file=sys.stderr)
        return 2
    counts = write(args.zip, args.requirements, [p for p in args.leave_out.split(",") if p], args.pyc)
    print(f"{args.zip.name}: {counts['files']} files ({counts['requirements']} from requirements, "
          f"{counts['compiled']} compiled)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
