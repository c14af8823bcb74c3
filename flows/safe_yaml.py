"""YAML read safely from user files: bounded alias expansion and nesting, and error messages that quote data briefly.

A "billion laughs" document (anchors whose lists alias the previous list nine times, nine levels deep) is a few
hundred bytes of text that means 387 million nodes: PyYAML shares the aliased objects, but whatever walks the result
(pydantic, a repr in an error message) expands it. The loader here measures the expanded size of the composed
document before constructing it, and refuses past a bound. It parses on libyaml (C) where PyYAML has it, beneath
the same Python composer and constructor, so the bounds hold there too; a document libyaml refuses, and one with a
tab (libyaml takes tabs as separators where PyYAML refuses them), is read by PyYAML alone, so what is read or refused
is what PyYAML alone reads or refuses.

YAML 1.1 (PyYAML's) reads some plain numbers other than as decimal: `030` as octal 24, `0x1F` as 31, `1:30` as
sexagesimal 90, `1_200` as 1200. The loader refuses them, naming the key, line and what to write instead; a loader's
`text_keys` take such a scalar (and `1.50`, `yes`, `2026-1-5`) as its text as written.
"""

from __future__ import annotations

import io
import os
import reprlib
import sys
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

# Nodes that aliases may add to a document once each is expanded in place: the catalogs use none, a price sheet that
# merges a block of defaults (`<<: *defaults`) into 5,000 entries adds about 50,000. Past this the file is refused
# before it is built (a "billion laughs" document would add 387 million).
MAX_YAML_ALIAS_NODES = 100_000
# Characters of scalars (values and keys) that aliases may add likewise: an aliased scalar is one node however long, so
# a list of 99,000 aliases of one 10,000-character string (a 610 KB file) passed the node bound and meant 990 million
# characters to whatever walks the result (a catalog's digest took 15 s and 4 GB). The price sheet above, merging a
# block of about 50 characters into 5,000 entries, adds about 250,000.
MAX_YAML_ALIAS_CHARS = 10_000_000
# Nesting depth of mappings and lists; the catalogs nest 6 deep. Deeper is refused (PyYAML composes recursively).
MAX_YAML_DEPTH = 100
# Characters of data an error message quotes (a value, a key); longer data is cut with its length said.
MAX_QUOTED_CHARS = 200
# Bytes of one YAML file (a catalog file, a YAML price sheet), refused before any of it is parsed: loading takes about
# 4 s and 80 MB of memory a MB of YAML (a 20 MB price sheet took 48 s and 1.6 GB); a 4 MiB sheet of 36,566 entries
# read in 18.6 s at 415 MiB peak here. The largest catalog file (accelerators.yaml) has 42 KB, 100x less; a price
# sheet of 5,000 entries written as the example's (about 250 bytes each) has 1.25 MB, 3x less; a longer sheet can be
# a CSV, which is read line by line.
MAX_YAML_FILE_BYTES = 4 * 1024 * 1024


class YamlRefusedError(yaml.YAMLError):
    """A YAML document the loader refuses, its message saying where and why (the caller names the file)."""


class YamlLimitError(YamlRefusedError):
    """A YAML document past MAX_YAML_FILE_BYTES, MAX_YAML_ALIAS_NODES, MAX_YAML_ALIAS_CHARS or MAX_YAML_DEPTH."""


class YamlValueError(YamlRefusedError):
    """A value YAML's own types cannot hold: a timestamp of a day or time that does not exist (2026-02-30)."""


class YamlNumberFormError(YamlRefusedError):
    """A number written in a form YAML 1.1 reads other than as decimal (octal `030`, `0x1F`, sexagesimal `1:30`,
    `1_200`): refused, never read as a value its writer may not have meant (`030` is 24)."""


class _NotATimestamp(Exception):
    """A timestamp datetime refuses, raised where its node is known and turned into a YamlValueError with its key."""

    def __init__(self, node: yaml.ScalarNode, reason: str) -> None:
        super().__init__(reason)
        self.node, self.reason = node, reason


class _NotDecimal(Exception):
    """A number in a form other than decimal, raised where its node is known and turned into a YamlNumberFormError
    with its key."""

    def __init__(self, node: yaml.ScalarNode, reading: str) -> None:
        super().__init__(reading)
        self.node, self.reading = node, reading


_STR_TAG = "tag:yaml.org,2002:str"
# what YAML 1.1 types a plain scalar as, besides text and null: under a key of `text_keys`, read as its text instead
_TYPED_TAGS = frozenset(f"tag:yaml.org,2002:{name}" for name in ("int", "float", "bool", "timestamp"))


def not_decimal(text: str, number: float) -> str:
    """How YAML 1.1 reads `text`, a plain scalar it typed as int or float that is `number`, where a reader would not
    take it as decimal ("030 is read by YAML 1.1 as octal 24, not 30: write 30 for the number, or "030" for text");
    "" for a decimal (`30`, `-1`, `19.92`, `030.5`, `.inf`)."""
    digits = text.lstrip("+-")
    octal = isinstance(number, int) and len(digits) > 1 and digits[0] == "0" and digits[1] not in "xb"
    if not (octal or ":" in digits or "_" in digits or digits[:2] in ("0x", "0b")):
        return ""  # the common case, decided before any number is written out
    value = yaml.safe_dump(number).split("\n")[0] if isinstance(number, float) else quoted(number)  # 1.0e+20, not 1e+20
    if ":" in digits:
        reading = f"sexagesimal (base 60) {value}"
    elif digits[:2] in ("0x", "0b"):
        reading = f"{'hexadecimal' if digits[1] == 'x' else 'binary'} {value}"
    elif octal:
        meant = ("-" if text.startswith("-") else "") + (digits.replace("_", "").lstrip("0") or "0")
        return (f"{cut(text)} is read by YAML 1.1 as octal {value}, not {cut(meant)}: write {cut(meant)} for the "
                f"number, or \"{cut(text)}\" for text")
    else:
        reading = f"{value}, its _ dropped"
    return f"{cut(text)} is read by YAML 1.1 as {reading}: write {value} for the number, or \"{cut(text)}\" for text"


class BoundedSafeLoader(yaml.SafeLoader):
    """A SafeLoader that refuses documents whose aliases expand past `max_alias_nodes` or `max_alias_chars`, that
    nest too deep, or that write a number in a form YAML 1.1 reads other than as decimal (`030` is octal 24)."""

    max_alias_nodes = MAX_YAML_ALIAS_NODES
    max_alias_chars = MAX_YAML_ALIAS_CHARS
    max_depth = MAX_YAML_DEPTH
    # keys whose plain scalar values are text as written, whatever YAML 1.1 would type them as (a price sheet's
    # `note: 1.50` is '1.50', not 1.5; `name: 0042` is '0042', not octal 34)
    text_keys: frozenset[str] = frozenset()

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        self._depth += 1
        try:
            if self._depth > self.max_depth:
                line = self.peek_event().start_mark.line + 1
                raise YamlLimitError(f"refused: nested deeper than {self.max_depth} levels "
                                     f"(MAX_YAML_DEPTH in flows/safe_yaml.py), at line {line}")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_document(self, node: yaml.Node) -> Any:
        check_alias_expansion(node, self.max_alias_nodes, self.max_alias_chars)
        if self.text_keys:
            read_as_written(node, self.text_keys)
        try:
            return super().construct_document(node)
        except _NotATimestamp as exc:
            bad = exc.node
            what = "a date" if len(bad.value.strip()) <= len("YYYY-MM-DD") else "a date and time"
            where = key_path(node, bad)
            raise YamlValueError(f"{where + ': ' if where else ''}{cut(bad.value)} is not {what} ({exc.reason}), at "
                                 f"line {bad.start_mark.line + 1} column {bad.start_mark.column + 1}") from None
        except _NotDecimal as exc:
            bad = exc.node
            where = key_path(node, bad)
            raise YamlNumberFormError(f"{where + ': ' if where else ''}{exc.reading}, at line "
                                      f"{bad.start_mark.line + 1} column {bad.start_mark.column + 1}") from None

    def construct_yaml_timestamp(self, node: yaml.ScalarNode) -> Any:
        try:
            return super().construct_yaml_timestamp(node)
        except ValueError as exc:  # PyYAML's pattern takes 2026-02-30 or 25:00; datetime refuses them
            raise _NotATimestamp(node, str(exc)) from None

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        try:
            number = super().construct_yaml_int(node)
        except ValueError:  # past sys.get_int_max_str_digits() (4,300 by default)
            line, most = node.start_mark.line + 1, sys.get_int_max_str_digits()
            raise YamlLimitError(f"refused: a whole number of {len(node.value):,} digits at line {line}, past the "
                                 f"{most:,} Python reads") from None
        if reading := not_decimal(node.value, number):
            raise _NotDecimal(node, reading)
        return number

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
        number = super().construct_yaml_float(node)
        if reading := not_decimal(node.value, number):
            raise _NotDecimal(node, reading)
        return number


BoundedSafeLoader.add_constructor("tag:yaml.org,2002:int", BoundedSafeLoader.construct_yaml_int)
BoundedSafeLoader.add_constructor("tag:yaml.org,2002:float", BoundedSafeLoader.construct_yaml_float)
BoundedSafeLoader.add_constructor("tag:yaml.org,2002:timestamp", BoundedSafeLoader.construct_yaml_timestamp)


class UniqueKeyLoader(BoundedSafeLoader):
    """A bounded YAML loader that rejects a key given twice in one mapping instead of keeping the last (the catalogs
    and the price sheets read with it)."""


def _construct_unique_mapping(loader: UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[object, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *defaults`: its keys may be given again, to override
            continue
        key = loader.construct_object(key_node, deep=deep)
        try:
            repeated = key in seen
        except TypeError:  # a list or mapping as a key: construct_mapping says so in PyYAML's words
            continue
        if repeated:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {quoted(key)} appears twice (first on line {seen[key] + 1})", key_node.start_mark)
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=deep)


UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


def key_path(root: yaml.Node, target: yaml.Node) -> str:
    """Where `target` is under `root` as error messages name it (`sources.aws_pricing.files[0].as_of`): keys joined
    by dots, list positions in brackets; the first place it is found, "" for the root itself."""
    stack: list[tuple[yaml.Node, str]] = [(root, "")]
    seen: set[int] = set()
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in reversed(node.value):
                key = cut(key_node.value) if isinstance(key_node, yaml.ScalarNode) else "?"
                step = f"{path}.{key}" if path else key
                stack.append((value_node, step))
                stack.append((key_node, step))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, f"{path}[{i}]") for i, item in reversed(list(enumerate(node.value))))
    return ""


def read_as_written(root: yaml.Node, keys: frozenset[str]) -> None:
    """Tag as text every plain scalar under `root` that is the value of a key in `keys` and that YAML 1.1 typed as a
    number, a bool or a date, so that it is constructed as its text as written (`1.50`, `0042`, `yes`)."""
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if (isinstance(key_node, yaml.ScalarNode) and key_node.tag == _STR_TAG and key_node.value in keys
                        and isinstance(value_node, yaml.ScalarNode) and not value_node.style  # plain: None, or ""
                        and value_node.tag in _TYPED_TAGS):
                    value_node.tag = _STR_TAG
                stack.extend((key_node, value_node))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def check_alias_expansion(root: yaml.Node, limit: int = MAX_YAML_ALIAS_NODES,
                          char_limit: int = MAX_YAML_ALIAS_CHARS) -> None:
    """Raise YamlLimitError when expanding every alias under `root` would add more than `limit` nodes, or more than
    `char_limit` characters of scalars.

    A node reached from two places is an alias; the expanded size is computed once per distinct node, so the check
    costs what the text costs, whatever the document would expand to.
    """
    children: dict[int, list[yaml.Node]] = {}
    order: list[yaml.Node] = []  # every distinct node once, after all of its children (depth-first post-order)
    stack, on_path = [(root, False)], set()
    while stack:
        node, done = stack.pop()
        if done:
            on_path.discard(id(node))
            order.append(node)
            continue
        if id(node) in on_path:
            raise YamlLimitError(f"refused: an alias refers to a node that contains it (line {node.start_mark.line + 1}),"
                                 f" so it would expand without end")
        if id(node) in children:
            continue
        kids = [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else (
            list(node.value) if isinstance(node, yaml.SequenceNode) else [])
        children[id(node)] = kids
        on_path.add(id(node))
        stack.append((node, True))
        stack.extend((kid, False) for kid in reversed(kids))
    written = len(order)
    written_chars = sum(len(node.value) for node in order if isinstance(node, yaml.ScalarNode))
    expanded: dict[int, int] = {}
    expanded_chars: dict[int, int] = {}
    for node in order:
        size = 1 + sum(expanded[id(kid)] for kid in children[id(node)])
        chars = len(node.value) if isinstance(node, yaml.ScalarNode) else sum(
            expanded_chars[id(kid)] for kid in children[id(node)])
        if size - written > limit:  # a part already past the bound: the whole document is too
            raise YamlLimitError(
                f"refused: its aliases (*name) would expand its {written:,} nodes to more than {written + limit:,} "
                f"(at most {limit:,} more than written: MAX_YAML_ALIAS_NODES in flows/safe_yaml.py)")
        if chars - written_chars > char_limit:
            raise YamlLimitError(
                f"refused: its aliases (*name) would expand its {written_chars:,} characters of values and keys to "
                f"more than {written_chars + char_limit:,} (at most {char_limit:,} more than written: "
                f"MAX_YAML_ALIAS_CHARS in flows/safe_yaml.py)")
        expanded[id(node)] = size
        expanded_chars[id(node)] = chars


def _on_libyaml(loader: type[BoundedSafeLoader]) -> type[BoundedSafeLoader]:
    """`loader` with libyaml's C parser beneath its Python composer: the same nodes, events and bounds (the depth
    check is the composer's, the alias check the constructor's), parsed about 5x faster (the catalogs, 100 KB: 0.07
    s against 0.37 s on a 2-core machine). Its __init__ sets up the parts by hand, not through `loader.__init__`: a
    loader keeping state of its own besides BoundedSafeLoader's `_depth` would need it here too."""

    from yaml.cyaml import CParser

    def __init__(self: Any, stream: Any) -> None:
        CParser.__init__(self, stream)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self._depth = 0

    # the C parser's own composer (get_single_node and its helpers) would skip BoundedSafeLoader.compose_node
    composer = {name: getattr(Composer, name) for name in ("check_node", "get_node", "get_single_node")}
    return type(f"LibYaml{loader.__name__}", (CParser, loader), {"__init__": __init__, **composer})


_FAST: dict[type, type] = {}


def read_yaml_bytes(path: Path, limit: int = MAX_YAML_FILE_BYTES, hint: str = "") -> bytes:
    """A YAML file's bytes, refused (YamlLimitError, `hint` added to its message) when it has more than `limit`: by
    its size, unread, and never more than `limit` + 1 bytes read (a file that grows as it is read, a device)."""
    with path.open("rb") as f:
        size = os.fstat(f.fileno()).st_size
        data = f.read(limit + 1) if size <= limit else b""
    if size > limit or len(data) > limit:
        has = f"{size:,} bytes" if size > limit else f"more than {limit:,} bytes (read as it grew)"
        raise YamlLimitError(f"refused before parsing: the file has {has}, more than the {limit:,} bytes "
                             f"({limit / 1024 ** 2:g} MiB) a YAML file may have (MAX_YAML_FILE_BYTES in "
                             f"flows/safe_yaml.py){hint}")
    return data


def load(text: str, loader: type[BoundedSafeLoader] = BoundedSafeLoader, name: str | None = None) -> Any:
    """The YAML document in `text`, read with `loader` (BoundedSafeLoader or a subclass of it) on libyaml's parser
    when PyYAML has it; `name` (a file's path) is what error messages say the text is. A document libyaml refuses is
    read again by `loader` alone, which raises its own error (the same kind, at the same place, in PyYAML's words:
    it names the offending character, which libyaml does not), or reads it. A document with a tab is read by
    `loader` alone: libyaml accepts a tab as a separator (`a:\t1`, a trailing tab) where PyYAML refuses it."""

    def stream() -> Any:
        if name is None:
            return text
        named = io.StringIO(text)
        named.name = name
        return named

    if not yaml.__with_libyaml__ or "\t" in text:
        return yaml.load(stream(), Loader=loader)
    fast = _FAST.get(loader) or _FAST.setdefault(loader, _on_libyaml(loader))
    try:
        return yaml.load(stream(), Loader=fast)
    except YamlRefusedError:
        raise
    except yaml.YAMLError:
        # PyYAML alone, the reference: its own message, or the document, should it read one libyaml refuses
        return yaml.load(stream(), Loader=loader)


class _ShortRepr(reprlib.Repr):
    def repr_int(self, x: int, level: int) -> str:
        if abs(x).bit_length() > 4 * self.maxlong:  # described, not printed: str() refuses past 4,300 digits
            return f"<an integer of about {abs(x).bit_length() * 0.30103:,.0f} digits>"
        return super().repr_int(x, level)


_REPR = _ShortRepr()
_REPR.maxstring = MAX_QUOTED_CHARS
_REPR.maxother = MAX_QUOTED_CHARS
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 8
_REPR.maxlevel = 3


def cut(text: str, limit: int = MAX_QUOTED_CHARS) -> str:
    """`text` as a message shows it: at most `limit` characters, saying how long it was when cut."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def quoted(value: Any) -> str:
    """repr(value) in about MAX_QUOTED_CHARS characters, saying how long a cut string was; never the whole repr."""
    text = _REPR.repr(value)
    if isinstance(value, str) and len(value) > MAX_QUOTED_CHARS:
        return f"{text} ({len(value):,} characters)"
    return text if len(text) <= MAX_QUOTED_CHARS + 20 else f"{text[:MAX_QUOTED_CHARS]}... ({type(value).__name__}, cut)"
