"""Reading the catalogs: each YAML file under catalogs/ read by the bounded loader (flows/safe_yaml.py, with unique
keys) and checked against its model (flows/catalog_models.py); an error names the file, the entry and the key. Also
the catalog `hweval run` loads ahead of its flow, while Prefect's server starts."""

from __future__ import annotations

import math
from pathlib import Path

import yaml
from pydantic import BaseModel, ValidationError

from flows import safe_yaml
from flows.catalog_models import (
    METADATA_TAGS,
    OPTIONAL_CATALOG_FILES,
    SLO_TAGS,
    AcceleratorsFile,
    Catalog,
    CatalogError,
    InstancesFile,
    ModelsFile,
    NotificationsFile,
    SourcesFile,
    WorkloadsFile,
)
from flows.safe_yaml import MAX_QUOTED_CHARS, UniqueKeyLoader, YamlRefusedError, cut, quoted

MAX_ERROR_LINES = 50  # lines of one catalog error; the rest are counted


def _load_yaml(path: Path) -> object:
    if path.is_dir():
        raise CatalogError(f"{path.name}: {path} is a directory; expected a YAML file")
    if not path.is_file():
        raise CatalogError(f"{path.name}: file not found at {path}")
    try:
        return safe_yaml.load(safe_yaml.read_yaml_bytes(path).decode("utf-8"), UniqueKeyLoader, name=str(path))
    except YamlRefusedError as exc:
        raise CatalogError(f"{path.name}: {exc}") from None
    except yaml.YAMLError as exc:
        raise CatalogError(f"{path.name}: not valid YAML: {cut(' '.join(str(exc).split()), 4 * MAX_QUOTED_CHARS)}") from exc
    except UnicodeDecodeError as exc:
        raise CatalogError(f"{path.name}: not UTF-8 text ({exc})") from exc


def _entry_label(file_name: str, loc: tuple, data: object) -> list[str]:
    """The error location as the user wrote it: list entries by their name, workload kinds unwrapped."""
    parts = [cut(str(p)) for p in loc]
    if file_name == "instances.yaml" and len(loc) >= 2 and loc[0] == "instances" and isinstance(loc[1], int):
        try:
            entry = data["instances"][loc[1]]
            parts[1] = f"[{loc[1]}] ({cut(str(entry.get('cloud')))}:{cut(str(entry.get('instance_type')))})"
            return [parts[0] + parts[1], *parts[2:]]
        except (KeyError, IndexError, TypeError, AttributeError):
            pass
    if file_name == "sources.yaml" and len(loc) >= 3 and loc[-3] == "metadata" and loc[-1] in METADATA_TAGS:
        del parts[-1]  # the value's form (text, whole, figure): a tag, not a key
    if file_name == "workloads.yaml" and len(loc) >= 3 and loc[2] in ("training", "inference"):
        del parts[2]  # pydantic's discriminator tag, not a key the user wrote
        if len(loc) >= 5 and loc[3] == "slo" and loc[4] in SLO_TAGS:
            del parts[3]  # the slo's form (bounds or offline): a tag too
    return parts


def _format_validation_error(file_name: str, exc: ValidationError, data: object = None) -> str:
    lines = []
    for err in exc.errors():
        loc = ".".join(_entry_label(file_name, err["loc"], data))
        if err["type"] == "extra_forbidden":
            lines.append(f"{file_name}: {loc}: unknown key (not part of the {file_name} schema)")
        elif err["type"] == "missing":
            lines.append(f"{file_name}: {loc}: missing required key")
        elif err["type"] in ("union_tag_not_found", "union_tag_invalid"):
            lines.append(f"{file_name}: {loc}.kind: missing or unknown kind (expected 'training' or 'inference')")
        else:
            lines.append(f"{file_name}: {loc}: {cut(err['msg'], 4 * MAX_QUOTED_CHARS)} (got {quoted(err.get('input'))}"
                         f"{_number_as_text(err)})")
    return "\n".join(lines)


def _number_as_text(err: dict) -> str:
    """For a number YAML read as text (quoted, or `1e3`: YAML's floats need a dot and a signed exponent), how to write
    it so that YAML reads a number; "" for anything else."""
    value = err.get("input")
    if err["type"] not in ("int_type", "float_type") or not isinstance(value, str):
        return ""
    try:
        number = float(value)
    except ValueError:
        return ""
    if not math.isfinite(number) or (err["type"] == "int_type" and not number.is_integer()):
        return ""
    written = str(int(number)) if err["type"] == "int_type" else yaml.safe_dump(number).split("\n")[0]
    return f", which YAML reads as text: write {written}"


def load_catalog(root: Path | str, check_figures: bool = True) -> Catalog:
    """Load and check every catalog file under `root`; raise CatalogError naming file, entry and key.

    `check_figures=False` leaves out the per-chip figures' plausibility suite (flows/checks.py, check_catalog): the
    tests of that check, and `load_catalog_ahead`, which begins it in GX's process without waiting for it.
    """
    root = Path(root)
    parsed: dict[str, BaseModel] = {}
    models = {
        "accelerators": AcceleratorsFile,
        "instances": InstancesFile,
        "models": ModelsFile,
        "workloads": WorkloadsFile,
        "sources": SourcesFile,
        "notifications": NotificationsFile,
    }
    errors = []
    for name, model in models.items():
        file_name = f"{name}.yaml"
        if file_name in OPTIONAL_CATALOG_FILES and not (root / file_name).exists():
            continue
        data = None
        try:
            data = _load_yaml(root / file_name)
            if data is not None and not isinstance(data, dict):
                raise CatalogError(f"{file_name}: the file holds {quoted(data)} ({type(data).__name__}), not a "
                                   f"mapping; expected a mapping of keys at its top ({', '.join(model.model_fields)})")
            parsed[name] = model.model_validate(data if data is not None else {})
        except CatalogError as exc:
            errors.append(str(exc))
        except ValidationError as exc:
            errors.append(_format_validation_error(file_name, exc, data))
    if errors:
        raise _catalog_error(errors)
    try:
        catalog = Catalog(root=root, **parsed)
    except ValidationError as exc:
        # model_validator errors arrive wrapped; unwrap our own message
        messages = [e["ctx"]["error"] if "ctx" in e and "error" in e["ctx"] else e["msg"] for e in exc.errors()]
        raise _catalog_error([str(m) for m in messages]) from None
    if check_figures:
        from flows.checks import check_catalog  # late: checks reads the catalog's expectation suites

        check_catalog(catalog)  # the per-chip figures `hweval run` checks before it lands anything
    return catalog


def _catalog_error(errors: list[str]) -> CatalogError:
    """One CatalogError of at most MAX_ERROR_LINES lines; the rest are counted."""
    lines = "\n".join(errors).splitlines()
    if len(lines) > MAX_ERROR_LINES:
        lines = [*lines[:MAX_ERROR_LINES], f"... and {len(lines) - MAX_ERROR_LINES:,} more"]
    return CatalogError("\n".join(lines))


# `hweval run` loads the catalog while Prefect's temporary server starts (flows/run_startup.py); the flow then takes that
# Catalog instead of loading and checking it again (~0.5 s), unless a file under the catalog folder changed since.
_loaded_ahead: tuple[Path, tuple, Catalog] | None = None


def _folder_state(root: Path) -> tuple:
    """(relative path, size, modification time) of every file under `root`: what tells a catalog edited since."""
    return tuple(sorted((str(p.relative_to(root)), s.st_size, s.st_mtime_ns)
                        for p in root.rglob("*") if p.is_file() and (s := p.stat())))


def load_catalog_ahead(root: Path) -> Catalog:
    """load_catalog(root), kept for the next `take_catalog_loaded_ahead(root)` of this process. Its per-chip figures'
    check is begun, not waited for (flows/checks.py, begin_catalog_check: Great Expectations' process, seconds to
    start): `checked_catalog_ahead` and `take_catalog_loaded_ahead` take its answer."""
    from flows.checks import begin_catalog_check  # late: checks reads the catalog's expectation suites

    global _loaded_ahead
    _loaded_ahead = None
    state = _folder_state(root)
    catalog = load_catalog(root, check_figures=False)
    begin_catalog_check(catalog)
    _loaded_ahead = (root, state, catalog)
    return catalog


def _kept_ahead(root: Path) -> Catalog | None:
    """The catalog `load_catalog_ahead` loaded from `root` and keeps, if no file under it changed since."""
    kept = _loaded_ahead
    return kept[2] if kept is not None and kept[0] == root and kept[1] == _folder_state(root) else None


def catalog_loaded_ahead(root: Path) -> Catalog:
    """The catalog `load_catalog_ahead` keeps for the flow from `root`, else `load_catalog_ahead(root)` now (a catalog
    that does not load raises its CatalogError here; its figures' check may still be under way)."""
    return _kept_ahead(root) or load_catalog_ahead(root)


def checked_catalog_ahead(root: Path) -> Catalog:
    """`catalog_loaded_ahead(root)` once its per-chip figures passed their check (CatalogError if they fail)."""
    from flows.checks import check_catalog

    catalog = catalog_loaded_ahead(root)
    check_catalog(catalog)
    return catalog


def take_catalog_loaded_ahead(root: Path) -> Catalog | None:
    """The catalog `load_catalog_ahead` loaded from `root`, if no file under it changed since, its figures checked
    (CatalogError if they fail); once."""
    from flows.checks import check_catalog

    global _loaded_ahead
    catalog, _loaded_ahead = _kept_ahead(root), None
    if catalog is not None:
        check_catalog(catalog)
    return catalog
