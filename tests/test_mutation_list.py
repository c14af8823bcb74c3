"""tests/mutate.py's list still matches the code: each mutation's `old` text occurs exactly once in its file, and
names are unique. `make mutate` refuses a list that does not (exit 2), but it is run by hand; a change to the code
that moves a mutation's text should fail `make test`, not wait for that run."""

from collections import Counter
from pathlib import Path

import mutate

ROOT = Path(__file__).resolve().parent.parent


def test_every_mutation_names_text_found_once_in_its_file():
    unmatched = {m.name: (m.path, (ROOT / m.path).read_text(encoding="utf-8").count(m.old))
                 for m in mutate.MUTATIONS if (ROOT / m.path).read_text(encoding="utf-8").count(m.old) != 1}
    assert unmatched == {}


def test_mutation_names_are_unique():
    assert [name for name, n in Counter(m.name for m in mutate.MUTATIONS).items() if n > 1] == []
