"""Text from data or a server as hweval shows it, in a page, a message or a terminal: one rule, imported by the
command line's light modules too (no YAML, no DuckDB)."""

from __future__ import annotations

import unicodedata


def visible(text: str) -> str:
    """`text` with each control and format character but a line break and a tab (Unicode categories Cc and Cf: an
    escape sequence, a carriage return, a bell, a right-to-left override, a zero-width space) written as `{U+202E}`:
    seen, where a page or a terminal would act on it (a right-to-left override shows the rest of its line reversed,
    "103.89 USD" included; an escape sequence clears a terminal) or hide it."""
    if text.isprintable():  # the common case, at C speed (a space is printable; a tab, a line break or NBSP is not)
        return text
    return "".join(f"{{U+{ord(ch):04X}}}" if ch not in "\n\t" and unicodedata.category(ch) in ("Cc", "Cf") else ch
                   for ch in text)
