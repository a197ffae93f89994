"""docs/deploying.md's commands, top to bottom, as an author on an empty account runs them: a dry
run. Every fenced `bash` line of "Your pinned copy" and the step-by-step is taken in order; git,
cd and mkdir run for real (a `git clone --no-tags` of this checkout stands for the fork, the
author's book is a folder beside it), the rest is recorded with what it needs first: an AWS
setting is written before the deploy that reads it, in the same region and stage; `npx
serverless` runs where `npm ci` ran; `textbook-chat` runs after the line that installs it, in
the active `.venv`, with flags its real parser takes, asking the stage that was deployed. The
README's local path runs for real in tests/test_local_path.py."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEPLOYING = ROOT / "docs" / "deploying.md"


def _lines() -> list[str]:
    """The shell lines of the pinned copy and the step-by-step, in order, comments dropped."""
    text = DEPLOYING.read_text(encoding="utf-8")
    text = text[text.index("## Your pinned copy"):text.index("## Afterwards")]
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    lines = []
    for block in blocks:
        for line in block.splitlines():
            line = re.split(r"\s{2,}#", line.strip())[0].strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


def _stack_settings() -> set[str]:
    """The SSM parameter names serverless.yml reads or lets a role read, for any stage."""
    text = (ROOT / "serverless.yml").read_text(encoding="utf-8")
    return set(re.findall(r"/textbook-chat/\$\{sls:stage\}/([A-Z_]+)", text))


class Walkthrough:
    """A shell that runs git/cd/mkdir for real and checks what every other command needs."""

    def __init__(self, book: Path):
        self.cwd = book
        self.env: dict[str, str] = {}
        self.ssm: dict[tuple[str, str], str] = {}  # (region, name) -> type
        self.npm_ci: set[Path] = set()
        self.venv: Path | None = None
        self.installed: set[str] = set()
        self.deployed: tuple[str, str] | None = None  # (stage, region)
        self.packed: set[Path] = set()  # the plugin's tarballs `npm pack` wrote
        self.plugin: set[Path] = set()  # sites the plugin is installed in
        self.built: set[Path] = set()  # sites built (build/ and .textbook-chat/manifest.json)
        self.done: list[str] = []

    def expand(self, word: str) -> str:
        return re.sub(r"\$(\w+)|\$\{(\w+)\}", lambda m: self.env[m[1] or m[2]], word)

    def run(self, line: str) -> None:
        for part in re.split(r"\s+&&\s+", line):
            assign = re.fullmatch(r"(\w+)=\$\((.*)\)", part)
            if assign:  # name=$(command ...): the command runs, its output is a name
                self.command(shlex.split(assign[2]))
                self.env[assign[1]] = "release-name"
                continue
            self.command(shlex.split(part))
            self.done.append(part)

    def command(self, argv: list[str]) -> None:  # noqa: C901 (one branch a program)
        env = {}
        while argv and re.fullmatch(r"[A-Z_]+=.*", argv[0]):  # VAR=value command ...
            key, _, value = argv.pop(0).partition("=")
            env[key] = value
        argv = [self.expand(a) for a in argv]
        program, args = argv[0], argv[1:]
        if program == "git":
            where = self.cwd
            if args[:1] == ["-C"]:
                where, args = (self.cwd / args[1]).resolve(), args[2:]
            if args[0] == "clone":  # the fork: this checkout, with no tags (a fork has none)
                subprocess.run(["git", "clone", "-q", "--no-tags", str(ROOT), args[2]],
                               cwd=where, check=True, timeout=300)
            elif args[0] == "checkout":
                done = subprocess.run(["git", "-c", "advice.detachedHead=false", "checkout", "-q",
                                       *args[1:]], cwd=where, capture_output=True, text=True)
                assert done.returncode == 0, f"`git {' '.join(args)}` in a clone: {done.stderr}"
            elif args[0] == "add":
                assert (where / args[1]).resolve() in self.packed, f"git add {args[1]}: not packed"
            else:
                raise AssertionError(f"git {args[0]}: not expected in docs/deploying.md")
        elif program == "cd":
            target = (self.cwd / args[0]).resolve()
            assert target.is_dir(), f"cd {args[0]}: no such folder from {self.cwd}"
            self.cwd = target
        elif program == "export":
            for pair in args:
                key, _, value = pair.partition("=")
                self.env[key] = value
        elif program == "aws" and args[:2] == ["cloudformation", "describe-stacks"]:
            opts = dict(zip(args[2::2], args[3::2], strict=False))  # an output of the stack
            assert self.deployed, "the stack's outputs asked for before it was deployed"
            stage, region = self.deployed
            assert (opts.get("--region"), opts.get("--stack-name")) == (
                region, f"textbook-chat-{stage}"), f"another stack than the one deployed: {args}"
        elif program == "aws":
            assert args[:2] == ["ssm", "put-parameter"], args
            opts = dict(zip(args[2::2], args[3::2], strict=False))
            assert opts.get("--region"), f"aws ssm put-parameter without --region: {args}"
            self.ssm[(opts["--region"], opts["--name"])] = opts["--type"]
        elif program == "npm":
            if args[0] == "ci":
                assert (self.cwd / "package-lock.json").is_file(), f"npm ci in {self.cwd}"
                self.npm_ci.add(self.cwd)
            elif args[0] == "pack":  # writes NAME-VERSION.tgz of the clone's checkout
                package = json.loads((self.cwd / args[1] / "package.json").read_text())
                into = self.cwd / args[args.index("--pack-destination") + 1]
                self.packed.add((into / f"{package['name']}-{package['version']}.tgz").resolve())
            elif args[0] == "install":
                tarball = (self.cwd / args[1]).resolve()
                assert tarball in self.packed, f"npm install {args[1]}: `npm pack` wrote " \
                    f"{sorted(p.name for p in self.packed)}"
                self.plugin.add(self.cwd)
            else:
                assert args[:2] == ["run", "build"], args
                assert self.cwd in self.plugin, "the site built before the plugin is installed"
                assert env.get("TEXTBOOK_CHAT_API_URL") and self.deployed, (
                    "the site built without the deployed API's URL (TEXTBOOK_CHAT_API_URL)")
                self.built.add(self.cwd)
        elif program == "npx":
            assert args[:2] == ["serverless", "deploy"], args
            assert self.cwd in self.npm_ci, "npx serverless before `npm ci` in the clone"
            assert (self.cwd / "serverless.yml").is_file()
            opts = dict(zip(args[2::2], args[3::2], strict=False))
            stage, region = opts.get("--stage"), opts.get("--region")
            assert stage and region, f"deploy names its stage and region: {args}"
            missing = {name for name in _stack_settings() - {"OPENAI_API_KEY"}
                       if (region, f"/textbook-chat/{stage}/{name}") not in self.ssm}
            assert not missing, f"deployed before its settings were written to SSM: {missing}"
            self.deployed = (stage, region)
        elif program == "python3":
            assert args[:2] == ["-m", "venv"], args
            (self.cwd / args[2] / "bin").mkdir(parents=True)
        elif program == ".":
            assert (self.cwd / args[0]).is_file() or (self.cwd / args[0]).parent.is_dir()
            self.venv = (self.cwd / args[0]).parent.parent
        elif program == "pip":
            assert self.venv is not None, "pip install outside the .venv"
            for arg in args[1:]:
                if not arg.startswith("-") and (self.cwd / arg).exists():
                    path = (self.cwd / arg).resolve()
                    if (path / "pyproject.toml").is_file():
                        self.installed.add("textbook-chat")
        elif program == "textbook-chat":
            assert "textbook-chat" in self.installed, f"`textbook-chat {args[0]}` before it is installed"
            from textbook_chat_cli.main import build_parser

            parsed = build_parser().parse_args(args)  # flags the command really takes
            if getattr(parsed, "build_dir", None) or getattr(parsed, "manifest", None):
                assert self.cwd in self.built, (  # the build writes both
                    f"`textbook-chat {args[0]}` reads the site's build before the site is built")
            if args[0] == "api-url":
                assert self.deployed == (parsed.stage, self.env.get("AWS_REGION")), (
                    f"api-url asks stage {parsed.stage} in {self.env.get('AWS_REGION')}; "
                    f"deployed: {self.deployed}")
        elif program == "mkdir":
            (self.cwd / args[-1]).mkdir(parents=True, exist_ok=True)
        else:
            raise AssertionError(f"{program}: a command the walkthrough does not know")


def test_deploying_runs_top_to_bottom_on_an_empty_account(tmp_path):
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing to clone")
    book = tmp_path / "my-book"
    (book / "docs").mkdir(parents=True)
    shell = Walkthrough(book)
    lines = _lines()
    for line in lines:
        shell.run(line)
    assert shell.deployed == ("prod", "eu-west-1")
    done = " ; ".join(shell.done)
    for step in ("git clone", "npm ci", "npx serverless deploy", "textbook-chat api-url",
                 "npm run build", "textbook-chat check", "textbook-chat release switch"):
        assert step in done, step
    # every stage and SSM name the page shows is the deployed stage's
    text = DEPLOYING.read_text(encoding="utf-8")
    assert set(re.findall(r"--stage (\w+)", text)) == {"prod"}
    assert set(re.findall(r"/textbook-chat/(\w+)/[A-Z_]+", text)) == {"prod"}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert set(re.findall(r"--stage (\w+)", readme)) == {"prod"}


def test_the_walkthrough_catches_a_command_before_what_it_needs(tmp_path):
    """The dry run can fail: api-url before the install, a deploy before its settings."""
    lines = _lines()
    api_url = next(i for i, line in enumerate(lines) if line.startswith("textbook-chat api-url"))
    deploy = next(i for i, line in enumerate(lines) if line.startswith("npx serverless deploy"))
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing to clone")
    for broken, message in (
            (lines[:deploy] + [lines[api_url]], "before it is installed"),
            ([line for line in lines[:deploy + 1] if "BUDGET_EMAIL" not in line],
             "before its settings were written"),
            ([line for line in lines if "npm run build" not in line], "before the site is built"),
            ([line.replace("0.2.0.tgz", "0.1.0.tgz") if line.startswith("npm install") else line
              for line in lines], "`npm pack` wrote")):
        book = tmp_path / f"case{len(message)}" / "my-book"
        (book / "docs").mkdir(parents=True)
        shell = Walkthrough(book)
        with pytest.raises(AssertionError, match=message):
            for line in broken:
                shell.run(line)
