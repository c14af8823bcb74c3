"""`hweval automations`: the Prefect automations of flows/automations.yaml on the server PREFECT_API_URL names, each
created the first time and updated in place after, found by its name.

`prefect automation create --from-file` makes another copy each time it runs. Two copies of the automation that marks
a silent nightly run Crashed would both act on a run that died: its crash notice would start twice, and tell the
channels twice. A server that already holds copies is refused, with their ids, rather than one of them chosen.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from flows import paths, safe_yaml

if TYPE_CHECKING:
    from uuid import UUID

AUTOMATIONS_FILE = paths.PROJECT_ROOT / "flows" / "automations.yaml"
MAX_AUTOMATIONS = 20  # entries in one file: the project's has one


class AutomationsError(ValueError):
    """A file of automations Prefect would not take, no server to put them on, or copies already there (exit 2)."""


@dataclass(frozen=True)
class Applied:
    name: str
    done: str  # created | updated | unchanged
    automation_id: UUID


def read_file(path: Path) -> list:
    """The file's automations as Prefect validates them (`AutomationCore`), each error naming the file and entry."""
    from prefect.events.schemas.automations import AutomationCore
    from pydantic import ValidationError

    try:
        document = safe_yaml.load(safe_yaml.read_yaml_bytes(path).decode("utf-8"), name=str(path))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:  # safe_yaml's refusals are YAMLErrors too
        raise AutomationsError(f"{path}: {safe_yaml.cut(' '.join(str(exc).split()))}") from exc
    entries = document.get("automations") if isinstance(document, dict) else None
    if not isinstance(entries, list) or not entries:
        raise AutomationsError(f"{path}: expected a mapping with a non-empty list `automations`, as "
                               "`prefect automation create --from-file` reads")
    if len(entries) > MAX_AUTOMATIONS:
        raise AutomationsError(f"{path}: {len(entries)} automations, more than {MAX_AUTOMATIONS} (MAX_AUTOMATIONS in "
                               "flows/automations.py)")
    cores = []
    for n, entry in enumerate(entries):
        try:
            cores.append(AutomationCore.model_validate(entry))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise AutomationsError(f"{path}: automations[{n}]: {where}: {first['msg']}") from exc
    names = [core.name for core in cores]
    if len(set(names)) < len(names):
        raise AutomationsError(f"{path}: two automations are named {safe_yaml.quoted(_twice(names))}: each is found "
                               "on the server by its name")
    return cores


def _twice(names: list[str]) -> str:
    return next(name for name in names if names.count(name) > 1)


def apply(path: Path = AUTOMATIONS_FILE) -> list[Applied]:
    """Each automation of `path` on the server: created when none has its name, updated when one differs, left as it
    is when it is the same. Every entry is read and checked before the server is changed."""
    from prefect.client.orchestration import get_client
    from prefect.events.schemas.automations import AutomationCore
    from prefect.settings import PREFECT_API_URL

    cores = read_file(path)
    if not PREFECT_API_URL.value():
        raise AutomationsError("PREFECT_API_URL is not set: automations live on a lasting Prefect server (`prefect "
                               "server start`, or Prefect Cloud); a temporary one would forget them when it stops")
    done = []
    with get_client(sync_client=True) as client:
        found = {core.name: client.read_automations_by_name(core.name) for core in cores}
        copies = {name: same for name, same in found.items() if len(same) > 1}
        if copies:
            name, same = next(iter(copies.items()))
            ids = ", ".join(str(a.id) for a in same)
            raise AutomationsError(f"the server holds {len(same)} automations named {safe_yaml.quoted(name)} ({ids}), "
                                   "each of which acts on its own: delete all but one (`prefect automation delete "
                                   "--id ID`), then run this again; nothing was changed")
        for core in cores:
            if not found[core.name]:
                done.append(Applied(core.name, "created", client.create_automation(core)))
                continue
            [there] = found[core.name]
            if AutomationCore.model_validate(there.model_dump(include=set(AutomationCore.model_fields))) == core:
                done.append(Applied(core.name, "unchanged", there.id))
                continue
            client.update_automation(there.id, core)
            done.append(Applied(core.name, "updated", there.id))
    return done
