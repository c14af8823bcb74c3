"""How names from sources and catalogs are matched: the one normalisation the catalog and the source readers share."""

from __future__ import annotations


def normalise_alias(raw: str) -> str:
    """Aliases match exactly, ignoring case and surrounding or repeated whitespace."""
    return " ".join(raw.split()).casefold()


# How sources spell a precision that hweval names otherwise (MLPerf Inference v4.1 writes `float8` and `INT8` beside
# `fp8` and `int8`): mapped to catalog_models.Precision's names. A spelling not here is kept (lower case), and the
# suite refuses a precision it does not know.
PRECISION_SPELLINGS = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float8": "fp8", "float4": "fp4"}


def precision_name(raw: object) -> str | None:
    """A precision as hweval names it: lower case, spaces collapsed, `float8` -> `fp8` and the like; None for none."""
    if raw is None:
        return None
    text = " ".join(str(raw).split()).lower()
    return PRECISION_SPELLINGS.get(text, text) or None
