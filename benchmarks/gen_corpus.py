"""Generate a deterministic Docusaurus textbook (100 chapters, ~5 MB) for benchmarks.

    python benchmarks/gen_corpus.py OUT_DIR [--chapters 100] [--megabytes 5] [--seed 7]

Every page has front matter, an H1, H2-H5 sections, paragraphs, lists, code fences, tables,
admonitions and now and then a `$$` math block or a section far over 512 tokens. The text is
made up from a small robotics vocabulary; the same arguments always give the same bytes.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

TOPICS = (
    "sensors kinematics control planning perception localization mapping actuators "
    "power communication safety simulation learning manipulation navigation vision"
).split()
NOUNS = (
    "robot sensor motor encoder wheel joint arm gripper camera lidar map pose filter "
    "controller gain loop signal frame trajectory obstacle battery torque link model "
    "estimate error setpoint sample node message planner grid cost"
).split()
VERBS = (
    "measures estimates drives reduces corrects predicts tracks updates limits filters "
    "computes samples publishes rotates aligns stores checks"
).split()
ADJECTIVES = (
    "noisy stable fast slow linear local global discrete smooth robust precise "
    "coarse nominal reactive"
).split()
ADMONITIONS = ("note", "tip", "info", "warning", "danger")
PAGES_PER_CHAPTER = 4


def sentence(rng: random.Random) -> str:
    words = [rng.choice(ADJECTIVES), rng.choice(NOUNS), rng.choice(VERBS), "the", rng.choice(NOUNS)]
    words += [
        rng.choice(NOUNS + ADJECTIVES + ["with", "and", "of", "for"])
        for _ in range(rng.randint(3, 14))
    ]
    text = " ".join(words)
    return text[0].upper() + text[1:] + rng.choice(".....?!")


def paragraph(rng: random.Random, sentences: int | None = None) -> str:
    n = sentences or rng.randint(2, 7)
    lines, line = [], []
    for _ in range(n):  # wrap near 100 columns like hand-written Markdown
        line.append(sentence(rng))
        if sum(map(len, line)) > 80:
            lines.append(" ".join(line))
            line = []
    return "\n".join(lines + ([" ".join(line)] if line else []))


def title(rng: random.Random) -> str:
    return f"{rng.choice(ADJECTIVES).capitalize()} {rng.choice(NOUNS)} {rng.choice(NOUNS)}"


def code(rng: random.Random) -> str:
    lang = rng.choice(["python", "cpp", "bash", "yaml"])
    body = [
        f"{rng.choice(NOUNS)}_{i} = {rng.choice(VERBS)}({rng.choice(NOUNS)}, {rng.random():.3f})"
        for i in range(rng.randint(3, 30))
    ]
    return f"```{lang}\n" + "\n".join(body) + "\n```"


def table(rng: random.Random) -> str:
    cols = rng.randint(2, 5)
    head = "| " + " | ".join(rng.choice(NOUNS).capitalize() for _ in range(cols)) + " |"
    rows = [
        "| "
        + " | ".join(f"{rng.uniform(0, 100):.2f}" if c else rng.choice(NOUNS) for c in range(cols))
        + " |"
        for _ in range(rng.randint(2, 25))
    ]
    return "\n".join([head, "|" + "---|" * cols, *rows])


def listing(rng: random.Random) -> str:
    marker = rng.choice(["-", "*", "1."])
    return "\n".join(f"{marker} {sentence(rng)}" for _ in range(rng.randint(2, 8)))


def admonition(rng: random.Random) -> str:
    return f":::{rng.choice(ADMONITIONS)}\n\n{paragraph(rng, 2)}\n\n:::"


def math(rng: random.Random) -> str:
    return f"$$\n{rng.choice('xyzq')}_{{k+1}} = A {rng.choice('xyzq')}_k + B u_k + w_k\n$$"


def body(rng: random.Random) -> list[str]:
    parts = [paragraph(rng)]
    for _ in range(rng.randint(0, 4)):
        maker = rng.choices(
            [paragraph, code, table, listing, admonition, math], weights=[10, 3, 2, 3, 2, 1]
        )[0]
        parts.append(maker(rng))
    if rng.random() < 0.04:  # a section far over the token limit
        parts.extend(paragraph(rng, 12) for _ in range(rng.randint(6, 14)))
    return parts


def page(rng: random.Random, chapter: str, position: int, target: int) -> str:
    name = title(rng)
    out = [
        "---",
        f"title: {name}",
        f"sidebar_position: {position}",
        f"tags: [{chapter}, {rng.choice(TOPICS)}]",
        "---",
        "",
        f"# {name}",
        "",
        paragraph(rng),
    ]
    level = 2
    while sum(map(len, out)) < target:
        level = rng.choice([2, 2, 3, 3, 4, 5][: min(6, level + 2)]) if level > 1 else 2
        out += ["", f"{'#' * level} {title(rng)}", ""]
        out += ["\n\n".join(body(rng))]
    return "\n".join(out) + "\n"


def generate(out: Path, chapters: int = 100, megabytes: float = 5.0, seed: int = 7) -> list[Path]:
    """Write the textbook under out/docs and return its files in order."""
    rng = random.Random(seed)
    # Pages overshoot their target by about one section: aim a little lower.
    target = int(megabytes * 850_000 / (chapters * PAGES_PER_CHAPTER))
    files = []
    for c in range(1, chapters + 1):
        topic = TOPICS[c % len(TOPICS)]
        folder = out / "docs" / f"{c:03d}-{topic}-{c}"
        folder.mkdir(parents=True, exist_ok=True)
        for p in range(1, PAGES_PER_CHAPTER + 1):
            path = folder / ("index.md" if p == 1 else f"{p:02d}-{rng.choice(NOUNS)}-{p}.md")
            path.write_text(page(rng, topic, p, target), encoding="utf-8")
            files.append(path)
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--chapters", type=int, default=100)
    parser.add_argument("--megabytes", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    files = generate(args.out, args.chapters, args.megabytes, args.seed)
    size = sum(f.stat().st_size for f in files)
    print(f"{len(files)} files, {size / 1e6:.2f} MB in {args.out / 'docs'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
