"""Reports on object storage (issue 16): a run's folder uploaded to an S3 prefix, the manifest written last, a publish
killed part way leaving the previous manifest whole. Against moto's S3 server on 127.0.0.1, through boto3."""

from __future__ import annotations

import datetime as dt
import hashlib
import json

import boto3
import pytest

from flows import object_store
from flows.object_store import ObjectStoreError, Target

BUCKET = "hweval-reports"


@pytest.fixture(scope="module")
def s3_server():
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3(s3_server, monkeypatch, request):
    """A client of the local server, fake credentials from the environment (boto3's chain), a bucket of its own."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", s3_server)
    client = boto3.Session().client("s3")
    bucket = f"{BUCKET}-{abs(hash(request.node.name)) % 10**8}"
    client.create_bucket(Bucket=bucket)
    return client, bucket


def report_folder(tmp_path, name: str, pages: dict[str, str]):
    folder = tmp_path / name
    for path, text in pages.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")
    return folder


def puts(client) -> list[str]:
    """The keys of every PutObject the client sends, in order (an event hook: the real call still runs)."""
    keys: list[str] = []
    client.meta.events.register("before-parameter-build.s3.PutObject", lambda params, **_: keys.append(params["Key"]))
    return keys


def test_a_target_is_an_s3_prefix():
    assert Target.parse("s3://reports-bucket/team/hweval/") == Target("reports-bucket", "team/hweval")
    assert Target.parse("s3://reports-bucket").key("latest.json") == "latest.json"
    assert object_store.configured_target({}) is None
    with pytest.raises(ObjectStoreError, match=r"HWEVAL_REPORTS_S3: 'https://x/y' is not an S3 prefix; expected "
                                               r"s3://bucket or s3://bucket/prefix"):
        object_store.configured_target({"HWEVAL_REPORTS_S3": "https://x/y"})


def test_the_objects_go_first_and_the_manifest_last(s3, tmp_path):
    client, bucket = s3
    folder = report_folder(tmp_path, "2026-11-30", {"index.md": "# index\n", "llama2-70b-batch.md": "# batch\n",
                                                     "charts/a.png": "png"})
    sent = puts(client)
    manifest = object_store.publish(folder, Target(bucket, "team"), run_id="run-1", as_of=dt.date(2026, 11, 30),
                                    update_latest=True, client=client)
    # three report objects under the run's own prefix, then the date's manifest, then latest.json: the commit
    assert sent == ["team/runs/run-1/charts/a.png", "team/runs/run-1/index.md", "team/runs/run-1/llama2-70b-batch.md",
                    "team/dates/2026-11-30.json", "team/latest.json"]
    assert manifest["index"] == "team/runs/run-1/index.md"
    assert {o["path"]: (o["bytes"], o["sha256"]) for o in manifest["objects"]}["index.md"] == (
        8, hashlib.sha256(b"# index\n").hexdigest())
    latest = json.loads(client.get_object(Bucket=bucket, Key="team/latest.json")["Body"].read())
    assert latest == manifest == object_store.read_manifest(Target(bucket, "team"), client=client)
    page = client.get_object(Bucket=bucket, Key="team/runs/run-1/index.md")
    assert page["Body"].read() == b"# index\n" and page["ContentType"] == "text/markdown; charset=utf-8"


def test_a_publish_killed_part_way_leaves_the_previous_manifest_whole(s3, tmp_path):
    client, bucket = s3
    target = Target(bucket, "")
    first = report_folder(tmp_path, "day-1", {"index.md": "day 1\n", "a.md": "a1\n", "b.md": "b1\n"})
    object_store.publish(first, target, run_id="run-1", as_of=dt.date(2026, 11, 29), update_latest=True,
                         client=client)
    second = report_folder(tmp_path, "day-2", {"index.md": "day 2\n", "a.md": "a2\n", "b.md": "b2\n"})

    class Killed(Exception):
        pass

    def kill_on_the_second_object(params, **_):
        if params["Key"] == "runs/run-2/b.md":
            raise Killed("the process was killed")

    client.meta.events.register("before-parameter-build.s3.PutObject", kill_on_the_second_object)
    with pytest.raises(Killed):
        object_store.publish(second, target, run_id="run-2", as_of=dt.date(2026, 11, 30), update_latest=True,
                             client=client)
    # one object of run 2 is up, but no manifest names it: a reader still sees day 1, every object of it in place
    assert [o["Key"] for o in client.list_objects_v2(Bucket=bucket, Prefix="runs/run-2/")["Contents"]] == [
        "runs/run-2/a.md"]
    latest = object_store.read_manifest(target, client=client)
    assert (latest["run_id"], latest["as_of"]) == ("run-1", "2026-11-29")
    assert client.get_object(Bucket=bucket, Key=latest["index"])["Body"].read() == b"day 1\n"
    # and nothing for the interrupted date was committed
    assert object_store.read_manifest(target, client=client, name="dates/2026-11-30.json") == {}


def test_a_backfill_writes_its_date_but_leaves_latest(s3, tmp_path):
    client, bucket = s3
    target = Target(bucket, "r")
    object_store.publish(report_folder(tmp_path, "new", {"index.md": "new\n"}), target, run_id="run-new",
                         as_of=dt.date(2026, 11, 30), update_latest=True, client=client)
    object_store.publish(report_folder(tmp_path, "old", {"index.md": "old\n"}), target, run_id="run-backfill",
                         as_of=dt.date(2026, 11, 20), update_latest=False, client=client)
    assert object_store.read_manifest(target, client=client)["run_id"] == "run-new"
    assert object_store.read_manifest(target, client=client, name="dates/2026-11-20.json")["run_id"] == "run-backfill"


def test_a_manifest_naming_a_missing_object_is_refused(s3, tmp_path):
    client, bucket = s3
    target = Target(bucket, "")
    object_store.publish(report_folder(tmp_path, "d", {"index.md": "x\n"}), target, run_id="run-1",
                         as_of=dt.date(2026, 11, 30), update_latest=True, client=client)
    client.delete_object(Bucket=bucket, Key="runs/run-1/index.md")
    with pytest.raises(ObjectStoreError, match=r"latest.json: runs/run-1/index.md is missing \(404\)"):
        object_store.read_manifest(target, client=client)


@pytest.mark.parametrize(("objects", "problem"), [
    ([{"key": f"runs/r/{n}.md", "bytes": 1} for n in range(5_001)], "objects: expected a list of at most 5,000"),
    ({"key": "runs/r/index.md"}, "objects: expected a list"),
    ([{"key": "runs/r/index.md"}], r"objects\[0\]: expected a key under s3://.*/runs/ and its size in bytes"),
    ([{"key": "elsewhere/secret.txt", "bytes": 3}], r"objects\[0\]: expected a key under s3://.*/runs/"),
])
def test_a_manifest_past_its_bounds_or_out_of_shape_is_refused_in_one_line(s3, objects, problem):
    # a reader checks every object a manifest names: at most what a publish writes, each under the prefix's runs/
    client, bucket = s3
    client.put_object(Bucket=bucket, Key="latest.json", Body=json.dumps({"objects": objects}).encode())
    heads = []
    client.meta.events.register("before-parameter-build.s3.HeadObject", lambda params, **_: heads.append(params))
    with pytest.raises(ObjectStoreError, match=rf"latest.json: not a reports manifest \({problem}"):
        object_store.read_manifest(Target(bucket, ""), client=client)
    assert heads == []  # refused before any object was looked at


def test_too_many_files_are_refused_before_any_upload(s3, tmp_path, monkeypatch):
    client, bucket = s3
    monkeypatch.setattr(object_store, "MAX_OBJECTS", 2)
    sent = puts(client)
    with pytest.raises(ObjectStoreError, match=r"3 files, more than the 2 a run publishes to object storage"):
        object_store.publish(report_folder(tmp_path, "d", {"a.md": "a", "b.md": "b", "c.md": "c"}),
                             Target(bucket, ""), run_id="r", as_of=dt.date(2026, 11, 30), update_latest=True,
                             client=client)
    assert sent == []


def test_hweval_run_refuses_a_reports_target_that_is_no_s3_prefix_before_starting(monkeypatch, capsys):
    from flows.cli import main

    monkeypatch.setenv("HWEVAL_REPORTS_S3", "reports-bucket/hweval")
    assert main(["run"]) == 2
    assert capsys.readouterr().err == ("hweval: HWEVAL_REPORTS_S3: 'reports-bucket/hweval' is not an S3 prefix; "
                                       "expected s3://bucket or s3://bucket/prefix (bucket: 3 to 63 lowercase "
                                       "letters, digits, dots and dashes)\n")


@pytest.mark.slow  # a whole run: make test-slow and CI
def test_a_run_publishes_its_reports_to_the_bucket_after_the_disk(s3, tmp_path, monkeypatch, prefect_server):
    from conftest import AS_OF, CATALOGS

    from flows.nightly import nightly

    client, bucket = s3
    monkeypatch.setenv("HWEVAL_REPORTS_S3", f"s3://{bucket}/hweval")
    result = nightly(as_of=AS_OF, catalog_dir=str(CATALOGS), warehouse_file=str(tmp_path / "w" / "hweval.duckdb"),
                     reports_dir=str(tmp_path / "reports"), run_id="s3-run")
    latest = object_store.read_manifest(Target(bucket, "hweval"), client=client)
    # the manifest names this run; every file of the dated folder on disk is an object, byte for byte
    assert (latest["run_id"], latest["as_of"]) == ("s3-run", AS_OF.isoformat())
    on_disk = {p.relative_to(result.reports).as_posix(): p.read_bytes()
               for p in result.reports.rglob("*") if p.is_file()}
    assert {o["path"] for o in latest["objects"]} == set(on_disk)
    index = client.get_object(Bucket=bucket, Key=latest["index"])["Body"].read()
    assert index == on_disk["index.md"]


def test_each_step_after_the_publish_that_fails_is_recorded_and_the_steps_after_it_still_run(
        s3, tmp_path, prefect_server):
    """flows/after_publish.py's steps in a flow, the warehouse gone: reading the changes fails (the sources stale past
    their limit are still the run's events), the artifacts fail (they read the rankings), the upload still runs. With
    the bucket gone too, the upload's failure is the third recorded; neither run raises."""
    from prefect import flow

    from flows import after_publish, notify

    client, bucket = s3
    dated = report_folder(tmp_path, "2026-11-30", {"index.md": "# index\n"})
    stale = ("aws_pricing stale since 2026-11-20 (10 days; max_stale_days 7)",)

    @flow
    def after(target: Target, run_id: str):
        return after_publish.run_steps(tmp_path / "gone.duckdb", dated, dt.date(2026, 11, 30), run_id, stale, target,
                                       True)

    events, failed = after(Target(bucket, "hweval"), "steps-run")
    assert events == [notify.Event("source_stale_past_limit", stale[0])]
    assert [line.split(":")[0] for line in failed] == ["reading the run's changes failed",
                                                       "making the Prefect artifacts failed"]
    assert all("gone.duckdb" in line for line in failed)  # DuckDB's error names the missing file
    manifest = object_store.read_manifest(Target(bucket, "hweval"), client=client)
    assert (manifest["run_id"], [o["path"] for o in manifest["objects"]]) == ("steps-run", ["index.md"])

    _, failed = after(Target(f"{bucket}-gone", "hweval"), "no-bucket")
    assert [line.split(":")[0] for line in failed] == ["reading the run's changes failed",
                                                       "making the Prefect artifacts failed",
                                                       "the upload to object storage failed"]
    assert "NoSuchBucket" in failed[2]


def test_latest_json_only_moves_forward_when_machines_publish_out_of_order(s3, tmp_path):
    """Machine B published 2026-12-02; machine A's run of 2026-12-01 (newest in A's warehouse when it began) publishes
    after it: its objects and dates/2026-12-01.json go up, latest.json keeps B's run. A re-run of 12-02 replaces it."""
    client, bucket = s3
    target = Target(bucket, "reports")
    object_store.publish(report_folder(tmp_path, "b", {"index.md": "# B"}), target, run_id="run-b",
                         as_of=dt.date(2026, 12, 2), update_latest=True, client=client)
    object_store.publish(report_folder(tmp_path, "a", {"index.md": "# A"}), target, run_id="run-a",
                         as_of=dt.date(2026, 12, 1), update_latest=True, client=client)
    assert object_store.read_manifest(target, client=client)["run_id"] == "run-b"
    assert object_store.read_manifest(target, client=client, name="dates/2026-12-01.json")["run_id"] == "run-a"
    object_store.publish(report_folder(tmp_path, "b2", {"index.md": "# B again"}), target, run_id="run-b2",
                         as_of=dt.date(2026, 12, 2), update_latest=True, client=client)
    assert object_store.read_manifest(target, client=client)["run_id"] == "run-b2"


def test_a_latest_json_changed_between_read_and_write_is_read_again(s3, tmp_path):
    """Machine B writes latest.json (2026-12-02) just after machine A read it (2026-11-30) and before A's write: A's
    write, conditional on the version it read, is refused (412), A reads again, finds a later date and leaves it."""
    client, bucket = s3
    target = Target(bucket, "reports")
    object_store.publish(report_folder(tmp_path, "old", {"index.md": "# old"}), target, run_id="run-old",
                         as_of=dt.date(2026, 11, 30), update_latest=True, client=client)
    other = boto3.Session().client("s3")  # machine B's client
    raced = []

    def b_writes_first(params, **_):
        if params["Key"] == "reports/latest.json" and not raced:
            raced.append(params.get("IfMatch"))
            object_store.publish(report_folder(tmp_path, "b", {"index.md": "# B"}), target, run_id="run-b",
                                 as_of=dt.date(2026, 12, 2), update_latest=True, client=other)

    client.meta.events.register("before-parameter-build.s3.PutObject", b_writes_first)
    object_store.publish(report_folder(tmp_path, "a", {"index.md": "# A"}), target, run_id="run-a",
                         as_of=dt.date(2026, 12, 1), update_latest=True, client=client)
    assert raced and raced[0]  # A's write carried If-Match on the ETag it read
    assert object_store.read_manifest(target, client=client)["run_id"] == "run-b"


KILLED_PUBLISH = """
import datetime as dt, os, sys
from pathlib import Path
import boto3
from flows import object_store
client = boto3.Session().client("s3")
def kill(params, **_):
    if params["Key"] == "runs/run-2/b.md":
        os.kill(os.getpid(), 9)  # SIGKILL: no exception handler, no finally, nothing more sent
client.meta.events.register("before-parameter-build.s3.PutObject", kill)
object_store.publish(Path(sys.argv[2]), object_store.Target(sys.argv[1], ""), run_id="run-2",
                     as_of=dt.date(2026, 11, 30), update_latest=True, client=client)
"""


@pytest.mark.slow  # a process of its own (~2 s): make test-slow
def test_a_publishing_process_killed_with_sigkill_leaves_the_previous_manifest_whole(s3, tmp_path):
    """The same as above with a real kill: the publishing process gets SIGKILL before its second object."""
    import os
    import signal
    import subprocess
    import sys

    from flows.paths import PROJECT_ROOT

    client, bucket = s3
    target = Target(bucket, "")
    object_store.publish(report_folder(tmp_path, "day-1", {"index.md": "day 1\n", "a.md": "a1\n", "b.md": "b1\n"}),
                         target, run_id="run-1", as_of=dt.date(2026, 11, 29), update_latest=True, client=client)
    second = report_folder(tmp_path, "day-2", {"index.md": "day 2\n", "a.md": "a2\n", "b.md": "b2\n"})
    done = subprocess.run([sys.executable, "-c", KILLED_PUBLISH, bucket, str(second)], cwd=PROJECT_ROOT,
                          env=dict(os.environ), capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    assert [o["Key"] for o in client.list_objects_v2(Bucket=bucket, Prefix="runs/run-2/")["Contents"]] == [
        "runs/run-2/a.md"]
    latest = object_store.read_manifest(target, client=client)  # checks every object it names is there
    assert (latest["run_id"], latest["as_of"]) == ("run-1", "2026-11-29")
    assert object_store.read_manifest(target, client=client, name="dates/2026-11-30.json") == {}
