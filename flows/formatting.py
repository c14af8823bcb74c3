"""How every number and every piece of text from data is written in the reports: one set of filters."""

from __future__ import annotations

from markupsafe import Markup

_MARKDOWN_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*[]|#"} | {"<": "&lt;", ">": "&gt;", "&": "&amp;"})


def md_escape(text: object) -> str:
    """Text from data, safe inside a Markdown line: no emphasis, links, code, table cells, HTML or line breaks.

    Markup (text the templates built on purpose, e.g. a link) passes as it is.
    """
    if text is None:
        return "—"
    if isinstance(text, Markup):
        return str(text)
    return " ".join(str(text).splitlines()).translate(_MARKDOWN_SPECIAL)


def usd(value: float | None) -> str:
    """Money: 2,978.21 (10 and above), 0.152 (below 10)."""
    if value is None:
        return "—"
    return f"{value:,.2f}" if abs(value) >= 10 else f"{value:,.3f}"


def signed_usd(value: float | None) -> str:
    """A difference of money: +2,150.00, -12.50, 0.00."""
    if value is None:
        return "—"
    return ("+" if value > 0 else "-" if value < 0 else "") + usd(abs(value))


def num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def percent(value: float | None) -> str:
    """A share: 4.2% below 10%, 43% above."""
    if value is None:
        return "—"
    return f"{value * 100:.1f}%" if abs(value) < 0.1 else f"{value * 100:.0f}%"


def ratio(value: float | None) -> str:
    """A multiple: 2.30x, 1,204x."""
    if value is None:
        return "—"
    return f"{value:.2f}x" if value < 10 else f"{value:,.0f}x"


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def count(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


FILTERS = {"usd": usd, "signed_usd": signed_usd, "num": num, "percent": percent, "ratio": ratio, "plural": plural,
           "count": count, "md": md_escape}
