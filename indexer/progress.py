"""A progress bar on stderr (tqdm), silent when stderr is not a terminal."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def bar(total: int | None, label: str, unit: str = "it") -> Iterator[Callable[[int], None]]:
    from tqdm import tqdm

    with tqdm(total=total, desc=label, unit=unit, file=sys.stderr, disable=None, leave=False) as t:
        yield t.update
