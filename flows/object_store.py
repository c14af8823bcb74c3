"""Reports on object storage: a run's dated report folder uploaded to an S3 prefix with boto3, a manifest written last.

Where `HWEVAL_REPORTS_S3` names a prefix (`s3://bucket/some/prefix`), a run that published its reports on disk also
puts them there. The guarantee is the one on disk: a reader never sees a half-published run.

- Every file goes to a key no earlier run used, `<prefix>/runs/<run id>/<path>`, so nothing a reader may be
  reading is overwritten.
- Only then is the manifest written: `<prefix>/dates/<as-of>.json` and, unless the run is a backfill,
  `<prefix>/latest.json`. It names the run, its as-of date and every key with its size and SHA-256.

A reader follows `latest.json` (one GET of one object, which S3 replaces atomically) and reads the keys it lists:
`read_manifest` does, and checks them. A publish that fails or is killed part way leaves objects no manifest names
and the previous manifest as it was. The credentials, region and endpoint come from boto3's standard chains
(`AWS_PROFILE`, `AWS_ACCESS_KEY_ID`, `AWS_ENDPOINT_URL_S3` for an S3-compatible server, ...); none is stored here.
Objects of earlier runs are kept (a reader may still be on them): expire `<prefix>/runs/` with a lifecycle rule.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import mimetypes
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

ENV = "HWEVAL_REPORTS_S3"
LATEST = "latest.json"
LATEST_ATTEMPTS = 5  # conditional writes of latest.json lost to other machines' before a run gives up
MAX_OBJECTS = 5_000  # files of one run's report folder (the snapshot's: about 60)
MAX_BYTES = 2 * 1024**3  # their total size (the snapshot's: about 3 MB)
MAX_MANIFEST_BYTES = 16 * 1024**2  # a manifest a reader will parse
_TARGET = re.compile(r"^s3://(?P<bucket>[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9])(?:/(?P<prefix>[^\s]*?))?/?$")


class ObjectStoreError(Exception):
    """A reports target or manifest that cannot be used, said in one line."""


@dataclass(frozen=True)
class Target:
    bucket: str
    prefix: str  # no leading or trailing slash; may be empty

    @classmethod
    def parse(cls, text: str) -> Target:
        match = _TARGET.match(text.strip())
        if not match:
            raise ObjectStoreError(f"{ENV}: {text!r} is not an S3 prefix; expected s3://bucket or s3://bucket/prefix "
                                   f"(bucket: 3 to 63 lowercase letters, digits, dots and dashes)")
        return cls(match["bucket"], (match["prefix"] or "").strip("/"))

    def key(self, *parts: str) -> str:
        return "/".join(p for p in (self.prefix, *parts) if p)

    def url(self, *parts: str) -> str:
        return f"s3://{self.bucket}/{self.key(*parts)}"


def configured_target(environ: dict[str, str] | None = None) -> Target | None:
    """The prefix `HWEVAL_REPORTS_S3` names, or None when it is unset or empty (reports stay on disk only)."""
    text = (os.environ if environ is None else environ).get(ENV, "").strip()
    return Target.parse(text) if text else None


def s3_client(session: Any = None) -> Any:
    import boto3  # only a run that publishes to object storage pays for the import

    return (session or boto3.Session()).client("s3")


def _files(folder: Path) -> list[Path]:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    if len(files) > MAX_OBJECTS:
        raise ObjectStoreError(f"{folder}: {len(files):,} files, more than the {MAX_OBJECTS:,} a run publishes to "
                               f"object storage (flows/object_store.py MAX_OBJECTS)")
    total = sum(p.stat().st_size for p in files)
    if total > MAX_BYTES:
        raise ObjectStoreError(f"{folder}: {total:,} bytes, more than the {MAX_BYTES:,} a run publishes to object "
                               f"storage (flows/object_store.py MAX_BYTES)")
    return files


def publish(folder: Path, target: Target, *, run_id: str, as_of: dt.date, update_latest: bool,
            client: Any = None) -> dict:
    """Upload `folder` (a run's dated report folder) under `runs/<run_id>/`, then its manifests; returns the manifest.

    The objects go first; `dates/<as-of>.json` and (unless `update_latest` is false: a backfill) `latest.json` are
    the last writes, so an exception before them leaves every manifest as it was.
    """
    client = client or s3_client()
    run_prefix = target.key("runs", run_id)
    objects = []
    for path in _files(folder):
        relative = path.relative_to(folder).as_posix()
        body = path.read_bytes()
        content_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if content_type.startswith("text/") or path.suffix in (".md", ".csv", ".json"):
            content_type = (content_type if content_type != "application/octet-stream" else "text/plain") \
                + "; charset=utf-8"
        client.put_object(Bucket=target.bucket, Key=f"{run_prefix}/{relative}", Body=body, ContentType=content_type)
        objects.append({"path": relative, "key": f"{run_prefix}/{relative}", "bytes": len(body),
                        "sha256": hashlib.sha256(body).hexdigest()})
    manifest = {"run_id": run_id, "as_of": as_of.isoformat(), "index": f"{run_prefix}/index.md", "objects": objects}
    body = (json.dumps(manifest, indent=1) + "\n").encode()
    # the commit: one PUT each, after every object is in place
    client.put_object(Bucket=target.bucket, Key=target.key("dates", f"{as_of.isoformat()}.json"), Body=body,
                      ContentType="application/json")
    if update_latest and not _move_latest(client, target, body, as_of):
        log.warning("%s names a later date than %s (another machine's run): left as it is",
                    target.url(LATEST), as_of)
    return manifest


def _move_latest(client: Any, target: Target, body: bytes, as_of: dt.date) -> bool:
    """Write `latest.json` unless it already names a later as-of date (a re-run of the same date replaces it); False
    when it does. The write is conditional on the version read (If-Match on its ETag, If-None-Match before the
    first), so two machines publishing at once cannot put an older run back: the one that loses the race reads
    again and decides again, at most LATEST_ATTEMPTS times."""
    from botocore.exceptions import ClientError

    key = target.key(LATEST)
    for _ in range(LATEST_ATTEMPTS):
        try:
            current = client.get_object(Bucket=target.bucket, Key=key)
        except client.exceptions.NoSuchKey:
            condition = {"IfNoneMatch": "*"}
        else:
            if current.get("ContentLength", 0) > MAX_MANIFEST_BYTES:
                raise ObjectStoreError(f"{target.url(LATEST)}: {current['ContentLength']:,} bytes, more than the "
                                       f"{MAX_MANIFEST_BYTES:,} a manifest may hold")
            try:
                named = str(json.loads(current["Body"].read())["as_of"])
            except (ValueError, KeyError, TypeError) as err:
                raise ObjectStoreError(f"{target.url(LATEST)}: not a reports manifest ({err})") from err
            if named > as_of.isoformat():
                return False
            condition = {"IfMatch": current["ETag"]}
        try:
            client.put_object(Bucket=target.bucket, Key=key, Body=body, ContentType="application/json", **condition)
            return True
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") not in ("PreconditionFailed", "ConditionalRequestConflict"):
                raise
    raise ObjectStoreError(f"{target.url(LATEST)}: changed by other runs {LATEST_ATTEMPTS} times while this one "
                           "published; the run's objects and its dates/ manifest are up, latest.json is not")


def read_manifest(target: Target, *, client: Any = None, name: str = LATEST, check: bool = True) -> dict:
    """The manifest a reader follows (`latest.json` unless `name` says `dates/<as-of>.json`), each object it names
    checked to exist at its size (`check`); {} before the first publish."""
    client = client or s3_client()
    try:
        response = client.get_object(Bucket=target.bucket, Key=target.key(name))
    except client.exceptions.NoSuchKey:
        return {}
    if response.get("ContentLength", 0) > MAX_MANIFEST_BYTES:
        raise ObjectStoreError(f"{target.url(name)}: {response['ContentLength']:,} bytes, more than the "
                               f"{MAX_MANIFEST_BYTES:,} a manifest may hold")
    try:
        manifest = json.loads(response["Body"].read())
        objects = manifest["objects"]
    except (ValueError, KeyError, TypeError) as err:
        raise ObjectStoreError(f"{target.url(name)}: not a reports manifest ({err})") from err
    if not isinstance(objects, list) or len(objects) > MAX_OBJECTS:
        raise ObjectStoreError(f"{target.url(name)}: not a reports manifest (objects: expected a list of at most "
                               f"{MAX_OBJECTS:,} entries, as a publish writes)")
    runs = target.key("runs/")
    for n, entry in enumerate(objects):
        if not (isinstance(entry, dict) and isinstance(entry.get("key"), str) and entry["key"].startswith(runs)
                and isinstance(entry.get("bytes"), int) and entry["bytes"] >= 0):
            raise ObjectStoreError(f"{target.url(name)}: not a reports manifest (objects[{n}]: expected a key under "
                                   f"s3://{target.bucket}/{runs} and its size in bytes)")
    if check:
        from botocore.exceptions import ClientError

        for entry in objects:
            try:
                head = client.head_object(Bucket=target.bucket, Key=entry["key"])
            except ClientError as err:
                raise ObjectStoreError(f"{target.url(name)}: {entry['key']} is missing "
                                       f"({err.response.get('Error', {}).get('Code', 'error')})") from err
            if head["ContentLength"] != entry["bytes"]:
                raise ObjectStoreError(f"{target.url(name)}: {entry['key']} holds {head['ContentLength']:,} bytes, "
                                       f"the manifest says {entry['bytes']:,}")
    return manifest
