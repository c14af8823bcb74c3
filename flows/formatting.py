"""How every number and every piece of text from data is written in the reports: one set of filters."""

from __future__ import annotations

import datetime as dt
import math
import re

from markupsafe import Markup

from flows.safe_yaml import MAX_QUOTED_CHARS
from flows.text import visible

# `$` too: GitHub renders text between two of them as math
_MARKDOWN_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*[]|#~$"} | {"<": "&lt;", ">": "&gt;", "&": "&amp;"})
# an underscore that can open or close emphasis: one not between two letters or digits (`on_demand` cannot)
_EMPHASIS_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
# what GitHub's extended autolinks (and mistune's url plugin) make a link of in plain text: a scheme's "://", "www."
# and an e-mail's "@"; a backslash before the punctuation keeps it text (CommonMark shows an escaped ASCII
# punctuation character as itself)
_AUTOLINK = re.compile(r"(?i)(?<=[a-z0-9])(:)(?=//)|(?<![^\W_])(?<!\.)(www)(\.)|(@)")  # GFM: www. after _ too
# what makes a line a list item, a heading's underline or a thematic break when it opens the line: -, +, =, "1." "1)"
_BLOCK_START = re.compile(r"^(?:([-+=])|(\d+)([.)]))")


def md_escape(text: object) -> str:
    """Text from data, safe inside a Markdown line: no emphasis, strikethrough, links (a bare URL, www. or e-mail
    address included), code, table cells, HTML or line breaks; a control or format character (a right-to-left
    override, a zero-width space, an escape) is written as `{U+202E}` (flows/text.py visible).

    Markup (text the templates built on purpose, e.g. a link) passes as it is.
    """
    if text is None:
        return "—"
    if isinstance(text, Markup):
        return str(text)
    escaped = _EMPHASIS_UNDERSCORE.sub(r"\\_", visible(" ".join(str(text).splitlines())).translate(_MARKDOWN_SPECIAL))
    return _AUTOLINK.sub(lambda m: "\\:" if m[1] else f"{m[2]}\\." if m[2] else "\\@", escaped)


def md_line(text: object) -> str:
    """`md_escape` for text that opens a line of its own, where its first characters could make the line a list item,
    a heading, a code block (indented) or a thematic break: leading spaces are dropped and such a start escaped."""
    if text is None or isinstance(text, Markup):
        return md_escape(text)
    return _BLOCK_START.sub(lambda m: "\\" + m[1] if m[1] else f"{m[2]}\\{m[3]}", md_escape(str(text).lstrip()))


def md_code(text: object) -> Markup:
    """Text from data as a Markdown code span, shown exactly as it is. A code span takes no backslash escapes: its
    fence is one backtick longer than the longest run of backticks in the text instead. Line breaks become spaces. Not
    for a table cell (a `|` would still end the cell)."""
    if text is None:
        return Markup("—")
    body = visible(" ".join(str(text).splitlines()))
    fence = "`" * (max((len(run) for run in re.findall("`+", body)), default=0) + 1)
    # a space each side keeps a backtick at either end from joining the fence (the spaces are not shown)
    pad = " " if body[:1] == "`" or body[-1:] == "`" or (body[:1] == body[-1:] == " " and body.strip()) else ""
    return Markup(f"{fence}{pad}{body}{pad}{fence}")


def cut_sql(expression: str) -> str:
    """SQL for text from data of unbounded length (a rejected value, a listing's name) as a page quotes it: its first
    MAX_QUOTED_CHARS characters and, when cut, how long it was ("… (200,000 characters)"), cut in the warehouse."""
    return (f"case when length({expression}) > {MAX_QUOTED_CHARS} then left({expression}, {MAX_QUOTED_CHARS}) "
            f"|| '… (' || format('{{:,}}', length({expression})) || ' characters)' else {expression} end")


def usd(value: float | None) -> str:
    """Money: 2,978.21 (10 and above), 0.152 (below 10)."""
    if value is None:
        return "—"
    # sized by what it is written as at three decimals, as `figures`: 9.9996 is "10.00", not "10.000"; 9.9995 (just
    # below it in binary) "9.999" (sql/macros.sql usd_text sizes it by the same text, where round() made it 10.00)
    return f"{value:,.2f}" if abs(float(f"{value:.3f}")) >= 10 else f"{value:,.3f}"


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


def figures(value: float | None) -> str:
    """A measure to three significant figures at least: 1,323 (whole from 100, thousands separated), 99.5, 3.15,
    0.128, 0.00996. Hours, energy and multiples are written so (sql/macros.sql figures_text writes the same)."""
    if value is None:
        return "—"
    # its size once written to three figures: 9.996 is written as the 10.0 it rounds to, not "10.00" (four figures);
    # sized by that text, as sql/macros.sql figures_size (0.09995, just below it in binary, is 0.0999 in both); from
    # 100 up, rounded: 100 or more however it rounds
    decimals = 2 - math.floor(math.log10(abs(value))) if value else 0
    size = abs(float(f"{value:.{decimals}f}") if decimals > 0 else round(value, decimals))
    if size >= 100:
        return f"{value:,.0f}"
    if size >= 10:
        return f"{value:.1f}"
    if size >= 1 or size == 0:
        return f"{value:.2f}"
    return f"{value:.{2 - math.floor(math.log10(size))}f}"  # below 1: as many decimals as three figures take


def ratio(value: float | None) -> str:
    """A multiple, to three significant figures as `figures` writes them: 0.650x, 2.30x, 10.7x, 1,204x."""
    return "—" if value is None else f"{figures(value)}x"


def hours(value: float | None) -> str:
    """Hours of a training run, as `figures` writes them: 10.3, 99.5, 1,323 (whole hours from 100)."""
    return figures(value)


def time_to_train(minutes: float | None) -> str:
    """A training run's wall clock: minutes to the hundredth below 10 h (114.47 min), hours beyond (10.3 h)."""
    if minutes is None:
        return "—"
    return f"{num(minutes)} min" if minutes < 600 else f"{hours(minutes / 60)} h"


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def count(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


FILTERS = {"usd": usd, "signed_usd": signed_usd, "num": num, "percent": percent, "ratio": ratio, "hours": hours,
           "figures": figures, "time_to_train": time_to_train, "plural": plural, "count": count, "md": md_escape,
           "md_line": md_line, "code": md_code}


def last_loaded(stale_since: dt.date | None) -> str:
    """What a stale source's `stale_since` is, in words: the as-of date of the last run that loaded it, which is not
    its data's date (data_as_of; a snapshot of 2026-11-20 loaded by the run of 2026-11-30)."""
    return f"last loaded by the run of {stale_since}" if stale_since else "never landed"
