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


class AutomationsUnavailable(RuntimeError):
    """The server did not answer, or refused a request (exit 1): what was applied before it is said."""


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
        if isinstance(entry, dict) and entry.get("owner_resource") is not None:
            raise AutomationsError(f"{path}: automations[{n}].owner_resource: an automation owned by a resource (a "
                                   "deployment's trigger) is made and changed by its owner, `prefect deploy`; "
                                   "this file's are free-standing")
        try:
            cores.append(AutomationCore.model_validate(entry))
        except ValidationError as exc:
            first = exc.errors()[0]
            # automations[0].trigger, automations[0].tags[1]; nothing when the entry itself is wrong
            where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in first["loc"])
            raise AutomationsError(f"{path}: automations[{n}]{where}: {first['msg']}") from exc
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
    import httpx
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL

    cores = read_file(path)
    url = PREFECT_API_URL.value()
    if not url:
        raise AutomationsError("PREFECT_API_URL is not set: automations live on a lasting Prefect server (`prefect "
                               "server start`, or Prefect Cloud); a temporary one would forget them when it stops")
    done: list[Applied] = []
    try:
        with get_client(sync_client=True) as client:
            _apply(client, cores, done)
    except httpx.HTTPError as exc:  # the server down, or a request refused (401, 404, 422): Prefect's errors are these
        so_far = "; ".join(f"{a.done} {a.name}" for a in done) or "nothing"
        raise AutomationsUnavailable(f"the Prefect server at {url} did not take the automations ({type(exc).__name__}:"
                                     f" {safe_yaml.cut(' '.join(str(exc).split()))}); applied before it: {so_far}"
                                     ) from exc
    return done


def _apply(client, cores: list, done: list[Applied]) -> None:
    """`apply` on an open client; `done` grows as each automation is applied, so that an error can say what was."""
    from prefect.events.schemas.automations import AutomationCore

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
        if _as_core(there) == core:
            done.append(Applied(core.name, "unchanged", there.id))
            continue
        # every field sent, those the file leaves at their defaults too: Prefect sends and the server changes only the
        # fields set, so a key taken out of the file (tags, a description) would stay on the server. Not
        # owner_resource, which an update may not send (read_file refuses it in the file)
        client.update_automation(there.id, AutomationCore.model_validate(core.model_dump(exclude={"owner_resource"})))
        now = _as_core(client.read_automation(there.id))
        if now != core:
            differ = sorted(name for name in AutomationCore.model_fields if getattr(now, name) != getattr(core, name))
            raise AutomationsUnavailable(f"the server did not take the update of {safe_yaml.quoted(core.name)} "
                                         f"({there.id}): it still differs from the file in {', '.join(differ)}")
        done.append(Applied(core.name, "updated", there.id))


def _as_core(automation):
    """An automation read from the server as the file's entries are: its fields, without the server's id."""
    from prefect.events.schemas.automations import AutomationCore

    return AutomationCore.model_validate(automation.model_dump(include=set(AutomationCore.model_fields)))
