"""Start, locally and without containers, the services the "past one machine" mode uses: a PostgreSQL cluster (the
DuckLake catalog) from the system's packages and an S3-compatible server (moto's server mode) from the dev
dependencies. The tests use it; so can a person trying the mode out:

    .venv/bin/python -m flows.services start /tmp/hweval-services   # prints the settings to export
    eval "$(.venv/bin/python -m flows.services env /tmp/hweval-services)"
    .venv/bin/python -m flows.services stop /tmp/hweval-services

Both listen on 127.0.0.1 only, on free ports; PostgreSQL trusts local connections (a throwaway cluster, never one
holding real data). Run as root, the cluster runs as the `postgres` user, as PostgreSQL requires.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

STATE_FILE = "services.json"
DATABASE = "hweval"
LAKE_BUCKET = "hweval-lake"
REPORTS_BUCKET = "hweval-reports"
START_TIMEOUT_S = 60.0


class ServiceError(RuntimeError):
    """A service that cannot start here (no PostgreSQL binaries, no moto): tests that need it are skipped."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def postgres_bin(name: str) -> str:
    """A PostgreSQL program: on PATH, or in the newest /usr/lib/postgresql/<version>/bin (Debian's packages)."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(p.split("/")[4]))
    if not candidates:
        raise ServiceError(f"no {name}: install PostgreSQL from the system's packages (apt-get install postgresql)")
    return candidates[-1]


def _as_cluster_user() -> list[str]:
    """PostgreSQL refuses to run as root: run its programs as `postgres` then."""
    if os.geteuid() != 0:
        return []
    runuser = shutil.which("runuser")
    if not runuser:
        raise ServiceError("running as root without runuser: cannot start PostgreSQL as the postgres user")
    return [runuser, "-u", "postgres", "--"]


def cluster_folder(prefix: list[str]) -> Path:
    """A new folder, owned by the cluster's user, that user can write in (asked of the system, as that user): in the
    temporary directory, else in /tmp. `make test`'s scratch folder, its tests' TMPDIR, is its owner's alone (mktemp -d
    makes it 700), and initdb run as `postgres` could not reach a cluster folder in it: the lake tests were skipped
    under `make test-slow` run as root."""
    for parent in dict.fromkeys((tempfile.gettempdir(), "/tmp")):
        folder = Path(tempfile.mkdtemp(prefix="hweval-pg-", dir=parent))
        shutil.chown(folder, "postgres")
        if subprocess.run([*prefix, "test", "-w", str(folder)], capture_output=True, check=False,
                          timeout=START_TIMEOUT_S).returncode == 0:
            return folder
        folder.rmdir()
    raise ServiceError(f"the postgres user can write in no new folder of {tempfile.gettempdir()} or /tmp")


def start_postgres(folder: Path) -> dict:
    """initdb a throwaway cluster in `folder`/pg, start it on a free port, create database `hweval`."""
    prefix = _as_cluster_user()
    if prefix:  # the postgres user must reach the cluster's folder: a folder of its own in a temporary directory
        data = cluster_folder(prefix) / "data"
    else:
        data = folder / "pg" / "data"
        if data.exists():
            shutil.rmtree(data.parent)
        data.parent.mkdir(parents=True)
    port = _free_port()
    run = {"check": True, "capture_output": True, "text": True, "timeout": START_TIMEOUT_S}
    try:
        subprocess.run(prefix + [postgres_bin("initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
                                 "--no-sync", "-E", "UTF8"], **run)
        subprocess.run(prefix + [postgres_bin("pg_ctl"), "-D", str(data), "-w", "-l", str(data.parent / "log"),
                                 "-o", f"-p {port} -k {data.parent} -c listen_addresses=127.0.0.1 -c fsync=off",
                                 "start"], **run)
        subprocess.run([postgres_bin("createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", DATABASE],
                       **run)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        stop_postgres({"postgres_data": str(data)})
        program = Path(exc.cmd[len(prefix)]).name
        detail = (exc.stderr or "").strip()[-500:] if isinstance(exc.stderr, str) else f"no answer in {exc.timeout} s"
        raise ServiceError(f"PostgreSQL did not start: {program}: {detail}") from None
    return {"postgres_data": str(data), "postgres_port": port}


def start_s3(folder: Path) -> dict:
    """moto's S3 server on a free port (its own process), with the lake's and the reports' buckets."""
    if shutil.which("moto_server", path=str(Path(sys.executable).parent)) is None:
        try:
            import moto.server  # noqa: F401
        except ImportError:
            raise ServiceError("no moto[server]: it is a dev dependency (uv sync --extra dev)") from None
    port = _free_port()
    log = (folder / "moto.log").open("w")
    process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            urllib.request.urlopen(endpoint + "/moto-api/", timeout=2).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise ServiceError(f"moto's S3 server did not start (see {folder / 'moto.log'})") from None
            time.sleep(0.2)
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
                      aws_secret_access_key="testing")
    try:
        for bucket in (LAKE_BUCKET, REPORTS_BUCKET):
            s3.create_bucket(Bucket=bucket)
    except (BotoCoreError, ClientError) as exc:
        os.killpg(process.pid, signal.SIGTERM)
        raise ServiceError(f"moto's S3 server did not create the buckets: {exc}") from None
    return {"moto_pid": process.pid, "s3_endpoint": endpoint}


def settings(state: dict) -> dict[str, str]:
    """The environment that points hweval at the started services."""
    return {
        "HWEVAL_LAKE": f"postgres:dbname={DATABASE} host=127.0.0.1 port={state['postgres_port']} user=postgres",
        "HWEVAL_LAKE_DATA_PATH": f"s3://{LAKE_BUCKET}/lake/",
        "HWEVAL_REPORTS_S3": f"s3://{REPORTS_BUCKET}/reports/",
        "AWS_ENDPOINT_URL_S3": state["s3_endpoint"],
        # moto accepts any key; these name no real account
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }


def start(folder: Path) -> dict:
    """Start both services; their state (ports, pid, data folder) is kept in `folder`/services.json for `stop`."""
    folder.mkdir(parents=True, exist_ok=True)
    state = start_postgres(folder)
    try:
        state |= start_s3(folder)
    except BaseException:
        stop_postgres(state)
        raise
    (folder / STATE_FILE).write_text(json.dumps(state), encoding="utf-8")
    return state


def read_state(folder: Path) -> dict:
    path = folder / STATE_FILE
    if not path.exists():
        raise ServiceError(f"{path}: no services started there (run `python -m flows.services start {folder}`)")
    return json.loads(path.read_text(encoding="utf-8"))


def stop_postgres(state: dict) -> None:
    """Stop the cluster and remove its folder (a throwaway cluster: nothing in it is kept)."""
    data = Path(state["postgres_data"])
    subprocess.run(_as_cluster_user() + [postgres_bin("pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                   capture_output=True, timeout=START_TIMEOUT_S, check=False)  # already stopped is fine
    shutil.rmtree(data.parent, ignore_errors=True)


def stop(folder: Path) -> None:
    state = read_state(folder)
    stop_postgres(state)
    try:
        os.killpg(state["moto_pid"], signal.SIGTERM)
    except ProcessLookupError:
        pass
    (folder / STATE_FILE).unlink()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flows.services", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["start", "env", "stop"])
    parser.add_argument("folder", type=Path, help="where the services keep their data and state")
    args = parser.parse_args(argv)
    try:
        if args.action == "stop":
            stop(args.folder)
            return 0
        state = start(args.folder) if args.action == "start" else read_state(args.folder)
    except ServiceError as exc:
        print(f"flows.services: {exc}", file=sys.stderr)
        return 2
    for key, value in settings(state).items():
        print(f"export {key}='{value}'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
