"""Instance hardware from the clouds' own APIs (aws_instance_types, azure_skus, gcp_machine_types) -> raw.instance_types
-> staging.stg_instance_types__hardware. Fixtures are written here in the APIs' shapes; live fetches run against
botocore's Stubber (AWS) and a loopback HTTP server (Azure, GCP): no network."""

from __future__ import annotations

import datetime as dt
import json
import logging
import urllib.parse
from collections import defaultdict, deque

import boto3
import pytest
from botocore.stub import Stubber
from builders import QuietHandler, close_loopback, serve_loopback
from conftest import AS_OF

from flows import transform
from flows.land import land_batch
from flows.source_batches import SourceBatch, fetch_source
from flows.sources import _aws, aws_instance_types, azure_skus, gcp_machine_types
from flows.sources._common import LiveSourceError, SourceFormatError
from flows.sources._concurrency import CloudSlots
from flows.warehouse import fetch_dicts

AZURE_TOKEN = "eyJ0eXAiOiJKV1Qi.fake-azure-token.never-logged"
GCP_TOKEN = "ya29.fake-gcp-token-never-logged"
AZURE_ENV = {"AZURE_SUBSCRIPTION_ID": "00000000-1111-2222-3333-444444444444", "AZURE_ACCESS_TOKEN": AZURE_TOKEN}
GCP_ENV = {"GOOGLE_CLOUD_PROJECT": "hweval-test", "GOOGLE_OAUTH_ACCESS_TOKEN": GCP_TOKEN}
HARDWARE = ("instance_type", "device_kind", "device_manufacturer", "device_name", "device_count", "device_memory_mib",
            "vcpu", "memory_mib")


def hardware(rows: list[dict], columns=HARDWARE) -> list[tuple]:
    return [tuple(r[c] for c in columns) for r in rows]


# ---------------------------------------------------------------- AWS: describe_instance_types items
def ec2_type(name: str, vcpus: int, memory_mib: int, *, cpu: str = "Intel", arch: str = "x86_64",
             gpus: list | None = None, neuron: list | None = None, inference: list | None = None) -> dict:
    item = {"InstanceType": name, "CurrentGeneration": True, "VCpuInfo": {"DefaultVCpus": vcpus},
            "MemoryInfo": {"SizeInMiB": memory_mib},
            "ProcessorInfo": {"Manufacturer": cpu, "SupportedArchitectures": [arch]}}
    if gpus is not None:
        item["GpuInfo"] = {"Gpus": [{"Name": n, "Manufacturer": m, "Count": c, "MemoryInfo": {"SizeInMiB": mib}}
                                    for n, m, c, mib in gpus]}
    if neuron is not None:
        item["NeuronInfo"] = {"NeuronDevices": [{"Name": n, "Count": c, "CoreInfo": {"Count": 2, "Version": 2},
                                                 "MemoryInfo": {"SizeInMiB": mib}} for n, c, mib in neuron]}
    if inference is not None:
        item["InferenceAcceleratorInfo"] = {"Accelerators": [{"Name": n, "Manufacturer": m, "Count": c}
                                                             for n, m, c in inference]}
    return item


P5 = ec2_type("p5.48xlarge", 192, 2097152, cpu="AMD", gpus=[("H100", "NVIDIA", 8, 81920)])
G6 = ec2_type("g6.2xlarge", 8, 32768, cpu="AMD", gpus=[("L4", "NVIDIA", 1, 22888)])
TRN2 = ec2_type("trn2.48xlarge", 192, 2097152, neuron=[("Trainium2", 16, 524288)])
INF2 = ec2_type("inf2.48xlarge", 192, 786432, cpu="AMD", neuron=[("Inferentia2", 12, 32768)],
                inference=[("Inferentia2", "AWS", 12)])
INF1 = ec2_type("inf1.xlarge", 4, 8192, inference=[("Inferentia", "AWS", 1)])
C8G = ec2_type("c8g.48xlarge", 192, 393216, cpu="AWS", arch="arm64")


def test_aws_items_give_one_row_per_device_group_with_figures_as_listed():
    rows = aws_instance_types.rows_from_pages([("us-east-1 page 1", {"InstanceTypes": [P5, G6, TRN2, C8G]},
                                                "us-east-1")])
    assert hardware(rows) == [
        ("p5.48xlarge", "gpu", "NVIDIA", "H100", 8.0, 81920.0, 192.0, 2097152.0),
        ("g6.2xlarge", "gpu", "NVIDIA", "L4", 1.0, 22888.0, 8.0, 32768.0),  # 22,888 MiB as listed (the card has 24 GB)
        ("trn2.48xlarge", "neuron", None, "Trainium2", 16.0, 524288.0, 192.0, 2097152.0),  # 512 GiB: the listed trap
        ("c8g.48xlarge", None, None, None, None, None, 192.0, 393216.0),  # CPU only: one row, no device
    ]
    assert [(r["cloud"], r["listing"], r["region"], r["zone"]) for r in rows] == [
        ("aws", "describe_instance_types", "us-east-1", None)] * 4
    assert [(r["cpu_manufacturer"], r["cpu_architecture"], r["device_count_text"], r["vcpu_text"])
            for r in rows] == [("AMD", "x86_64", "8", "192"), ("AMD", "x86_64", "1", "8"),
                               ("Intel", "x86_64", "16", "192"), ("AWS", "arm64", None, "192")]
    assert rows[2]["source_ref"] == "us-east-1 page 1: InstanceTypes[2].NeuronInfo.NeuronDevices[0]"
    assert rows[3]["source_ref"] == "us-east-1 page 1: InstanceTypes[3]"


def test_inf2_listed_as_neuron_and_inference_accelerator_is_counted_once():
    rows = aws_instance_types.rows_from_pages([("p", {"InstanceTypes": [INF2, INF1]}, "us-east-1")])
    # inf2: 12 chips once (NeuronInfo, with InferenceAcceleratorInfo's manufacturer), not 24;
    # inf1 has no NeuronInfo: its inference accelerator is its device
    assert hardware(rows) == [
        ("inf2.48xlarge", "neuron", "AWS", "Inferentia2", 12.0, 32768.0, 192.0, 786432.0),
        ("inf1.xlarge", "inference", "AWS", "Inferentia", 1.0, None, 4.0, 8192.0),
    ]


def stubbed_ec2(region: str):
    client = boto3.client("ec2", region_name=region, aws_access_key_id="AKIAFAKEFAKEFAKE0001",
                          aws_secret_access_key="fake/secret/never+logged")
    return client, Stubber(client)


def test_aws_live_follows_next_token_in_every_region_fetched_side_by_side(monkeypatch):
    clients = {region: stubbed_ec2(region) for region in ("us-east-1", "us-west-2")}
    monkeypatch.setattr(_aws, "client", lambda service, region, session=None: clients[region][0])
    query = {"Filters": [{"Name": "instance-type", "Values": ["p5.*", "inf2.*", "c8g.48xlarge"]}]}
    east, west = clients["us-east-1"][1], clients["us-west-2"][1]
    east.add_response("describe_instance_types", {"InstanceTypes": [P5], "NextToken": "east-2"}, query)
    east.add_response("describe_instance_types", {"InstanceTypes": [INF2, C8G]}, query | {"NextToken": "east-2"})
    west.add_response("describe_instance_types", {"InstanceTypes": [P5], "NextToken": "west-2"}, query)
    west.add_response("describe_instance_types", {"InstanceTypes": [INF2]}, query | {"NextToken": "west-2"})
    with east, west:
        rows = aws_instance_types.fetch_live(
            {"regions": ["us-east-1", "us-west-2"], "instance_types": ["p5.*", "inf2.*", "c8g.48xlarge"]},
            slots=CloudSlots("aws", 2))
    east.assert_no_pending_responses()
    west.assert_no_pending_responses()
    assert [(r["region"], r["instance_type"], r["device_count"]) for r in rows] == [  # in region order
        ("us-east-1", "p5.48xlarge", 8.0), ("us-east-1", "inf2.48xlarge", 12.0), ("us-east-1", "c8g.48xlarge", None),
        ("us-west-2", "p5.48xlarge", 8.0), ("us-west-2", "inf2.48xlarge", 12.0)]
    assert rows[1]["source_ref"] == ("ec2.describe_instance_types us-east-1 page 2: "
                                     "InstanceTypes[0].NeuronInfo.NeuronDevices[0]")


def test_aws_live_options_are_checked():
    with pytest.raises(SourceFormatError, match=r"aws_instance_types: unknown live option\(s\) zones"):
        aws_instance_types.check_live_options({"regions": ["us-east-1"], "zones": ["a"]})
    with pytest.raises(SourceFormatError, match=r"aws_instance_types: live option\(s\) regions missing"):
        aws_instance_types.check_live_options({"instance_types": ["p5.*"]})
    with pytest.raises(SourceFormatError, match=r"aws_instance_types live options: 'instance_types': expected a "
                                                r"non-empty list of names, got 'p5\.\*'"):
        aws_instance_types.check_live_options({"regions": ["us-east-1"], "instance_types": "p5.*"})


# ---------------------------------------------------------------- Azure: Resource SKUs items
def az_sku(name: str, family: str, *, vcpus: str, memory_gb: str, gpus: str | None = None,
           resource_type: str = "virtualMachines", location: str = "eastus") -> dict:
    caps = [{"name": "vCPUs", "value": vcpus}, {"name": "MemoryGB", "value": memory_gb},
            {"name": "CpuArchitectureType", "value": "x64"}]
    if gpus is not None:
        caps.append({"name": "GPUs", "value": gpus})
    return {"resourceType": resource_type, "name": name, "tier": "Standard", "size": name.removeprefix("Standard_"),
            "family": family, "locations": [location], "capabilities": caps, "restrictions": []}


ND_H100 = az_sku("Standard_ND96isr_H100_v5", "standardNDSH100v5Family", vcpus="96", memory_gb="1900", gpus="12")
NC_H100 = az_sku("Standard_NC40ads_H100_v5", "standardNCadsH100v5Family", vcpus="40", memory_gb="320", gpus="1")
D4 = az_sku("Standard_D4s_v5", "standardDSv5Family", vcpus="4", memory_gb="16")
DISK = {"resourceType": "disks", "name": "Premium_LRS", "tier": "Premium", "size": "P1", "locations": ["eastus"],
        "capabilities": [{"name": "MaxSizeGiB", "value": "4"}]}


def test_azure_vm_sizes_become_rows_other_resource_types_are_counted_not_landed(caplog):
    caplog.set_level(logging.INFO, logger="flows.sources.azure_skus")
    rows = azure_skus.rows_from_pages([("eastus page 1", {"value": [DISK, ND_H100, NC_H100, D4]})], "eastus")
    assert hardware(rows) == [
        # 12 GPUs as listed (the VM has 8: instances.yaml corrects it); MemoryGB 1900 x 1024 MiB; the family names
        # the device, since the API names no GPU model and no memory per GPU
        ("Standard_ND96isr_H100_v5", "gpu", None, "standardNDSH100v5Family", 12.0, None, 96.0, 1945600.0),
        ("Standard_NC40ads_H100_v5", "gpu", None, "standardNCadsH100v5Family", 1.0, None, 40.0, 327680.0),
        ("Standard_D4s_v5", None, None, None, None, None, 4.0, 16384.0),
    ]
    first = rows[0]
    assert (first["region"], first["listing"], first["cpu_architecture"], first["source_ref"]) == (
        "eastus", "resource_skus", "x64", "eastus page 1: value[1]")
    assert "azure skus eastus: kept 3 virtualMachines items of 4 SKU items read" in caplog.text


class FakeArm:
    """A loopback server: each path answers from its own queue; every request's query and headers are kept."""

    def __init__(self):
        self.queues: dict[str, deque] = defaultdict(deque)
        self.requests: list[tuple[str, dict, dict]] = []
        api = self

        class Handler(QuietHandler):
            def do_GET(self):
                split = urllib.parse.urlsplit(self.path)
                api.requests.append((split.path, urllib.parse.parse_qs(split.query), dict(self.headers)))
                status, body = api.queues[split.path].popleft() if api.queues[split.path] else (404, {})
                data = body if isinstance(body, bytes) else json.dumps(body).encode()  # bytes: a page as it is
                self.send_body(data, status)

        self.httpd, self.base = serve_loopback(Handler)

    def add(self, path: str, body: dict | bytes, status: int = 200) -> None:
        self.queues[path].append((status, body))


@pytest.fixture
def server():
    api = FakeArm()
    yield api
    close_loopback(api.httpd)


SKUS_PATH = f"/subscriptions/{AZURE_ENV['AZURE_SUBSCRIPTION_ID']}/providers/Microsoft.Compute/skus"


def test_azure_live_follows_next_link_per_location_with_the_token_in_a_header_only(server, caplog):
    caplog.set_level(logging.INFO)
    next_link = f"{server.base}{SKUS_PATH}?api-version=2021-07-01&$skiptoken=page-2"
    server.add(SKUS_PATH, {"value": [ND_H100], "nextLink": next_link})
    server.add(SKUS_PATH, {"value": [DISK, NC_H100]})
    server.add(SKUS_PATH, {"value": [az_sku("Standard_ND96isr_H100_v5", "standardNDSH100v5Family", vcpus="96",
                                            memory_gb="1900", gpus="8", location="westus3")]})
    rows = azure_skus.fetch_live({"regions": ["eastus", "westus3"], "endpoint": server.base}, environ=AZURE_ENV)
    assert [(r["region"], r["instance_type"], r["device_count"]) for r in rows] == [
        ("eastus", "Standard_ND96isr_H100_v5", 12.0), ("eastus", "Standard_NC40ads_H100_v5", 1.0),
        ("westus3", "Standard_ND96isr_H100_v5", 8.0)]
    queries = [query for _, query, _ in server.requests]
    assert queries == [{"api-version": ["2021-07-01"], "$filter": ["location eq 'eastus'"]},
                       {"api-version": ["2021-07-01"], "$skiptoken": ["page-2"]},
                       {"api-version": ["2021-07-01"], "$filter": ["location eq 'westus3'"]}]
    assert all(headers["Authorization"] == f"Bearer {AZURE_TOKEN}" for _, _, headers in server.requests)
    assert rows[1]["source_ref"] == "azure skus eastus page 2: value[1]"
    assert AZURE_TOKEN not in caplog.text and all(AZURE_TOKEN not in r["source_ref"] for r in rows)


def test_azure_a_location_is_written_into_the_filter_as_an_odata_literal(server):
    """A review's finding: the location went into `$filter` as written, where azure_retail's regions are OData
    literals; a quote in it ended the literal. Doubled, it is the location's text (`location eq 'x'' or 1 eq 1'`)."""
    server.add(SKUS_PATH, {"value": []})
    assert azure_skus.fetch_live({"regions": ["x' or 1 eq 1"], "endpoint": server.base}, environ=AZURE_ENV) == []
    assert [query["$filter"] for _, query, _ in server.requests] == [["location eq 'x'' or 1 eq 1'"]]


def test_azure_next_link_to_another_host_is_not_followed_with_the_token(server):
    port = server.base.rsplit(":", 1)[1]
    server.add(SKUS_PATH, {"value": [ND_H100], "nextLink": f"http://localhost:{port}{SKUS_PATH}?$skiptoken=2"})
    with pytest.raises(SourceFormatError, match=r"^azure skus eastus page 1\.nextLink: the next page's link points "
                                                r"elsewhere than the listing's endpoint"):
        azure_skus.fetch_live({"regions": ["eastus"], "endpoint": server.base}, environ=AZURE_ENV)
    assert len(server.requests) == 1  # page 1 only: the token never went to localhost


def test_azure_a_next_link_back_to_an_earlier_page_stops_the_listing_at_once(server):
    """A nextLink back to a page already fetched, the first included (its URL as requested, however the link writes
    it), would loop until max_pages with the token on every request: the listing stops there."""
    first = f"{server.base}{SKUS_PATH}?%24filter=location+eq+%27eastus%27&api-version=2021-07-01"
    second = f"{server.base}{SKUS_PATH}?api-version=2021-07-01&$skiptoken=page-2"
    for back_to, page in ((first, 1), (second, 2)):
        server.requests.clear()
        server.add(SKUS_PATH, {"value": [ND_H100], "nextLink": second})
        server.add(SKUS_PATH, {"value": [], "nextLink": back_to})
        with pytest.raises(SourceFormatError, match=r"^azure skus eastus page 2\.nextLink: leads back to an earlier "
                                                    r"page \(.*\); stopping instead of looping$"):
            azure_skus.fetch_live({"regions": ["eastus"], "endpoint": server.base}, environ=AZURE_ENV)
        assert len(server.requests) == 2, page  # neither page asked for again


def test_azure_missing_credentials_say_which_variables_to_set(server):
    with pytest.raises(LiveSourceError, match=r"^azure skus: no credentials: set AZURE_ACCESS_TOKEN \("):
        azure_skus.fetch_live({"regions": ["eastus"], "endpoint": server.base},
                              environ={"AZURE_SUBSCRIPTION_ID": "s"})
    with pytest.raises(LiveSourceError, match=r"set AZURE_SUBSCRIPTION_ID and AZURE_ACCESS_TOKEN .*bearer token"):
        azure_skus.fetch_live({"regions": ["eastus"], "endpoint": server.base}, environ={})
    assert server.requests == []


def test_azure_access_denied_names_the_location_and_never_the_token(server):
    server.add(SKUS_PATH, {"error": {"code": "InvalidAuthenticationToken",
                                     "message": f"The access token {AZURE_TOKEN} is invalid."}}, status=401)
    with pytest.raises(LiveSourceError) as err:
        azure_skus.fetch_live({"regions": ["eastus"], "endpoint": server.base}, environ=AZURE_ENV)
    assert str(err.value).startswith("azure skus eastus page 1: access denied (HTTP 401)")
    assert AZURE_TOKEN not in str(err.value) and "The access token *** is invalid" in str(err.value)


def test_a_token_the_server_echoes_reaches_no_log_line_and_no_error_of_any_kind(server, caplog):
    """An error page that quotes the request back (a proxy's, a debug server's): the retry's log line and the
    not-JSON error say *** where the bearer token was. The token is scrubbed in get_json, as the URL's secret
    parameters are, not only from the LiveSourceError azure_skus raises."""
    echo = f"<html>you sent {AZURE_TOKEN} from 10.0.0.1</html>".encode()  # no header name: only the scrub hides it
    server.add(SKUS_PATH, echo, status=503)
    server.add(SKUS_PATH, echo)  # then a 200 that is no JSON
    caplog.set_level(logging.INFO)
    with pytest.raises(SourceFormatError) as err:
        azure_skus.fetch_live({"regions": ["eastus"], "endpoint": server.base}, environ=AZURE_ENV,
                              sleep=lambda s: None)
    assert "is not JSON" in str(err.value) and "you sent *** from 10.0.0.1" in str(err.value)
    assert "HTTP 503: <html>you sent *** from 10.0.0.1" in caplog.text  # the retry's warning quotes the 503
    assert AZURE_TOKEN not in str(err.value) and AZURE_TOKEN not in caplog.text
    assert len(server.requests) == 2


# ---------------------------------------------------------------- GCP: aggregated machineTypes / acceleratorTypes
def gce_machine(name: str, zone: str, cpus: int, memory_mb: int, accelerator: tuple[str, int] | None = None) -> dict:
    item = {"kind": "compute#machineType", "name": name, "guestCpus": cpus, "memoryMb": memory_mb, "zone": zone,
            "isSharedCpu": False}
    if accelerator:
        item["accelerators"] = [{"guestAcceleratorType": accelerator[0], "guestAcceleratorCount": accelerator[1]}]
    return item


def gce_accelerator(name: str, zone: str, description: str, cards: int = 8) -> dict:
    return {"kind": "compute#acceleratorType", "name": name, "description": description,
            "zone": f"https://www.googleapis.com/compute/v1/projects/p/zones/{zone}", "maximumCardsPerInstance": cards}


def aggregated(kind: str, key: str, by_zone: dict[str, list], next_token: str | None = None) -> dict:
    items = {f"zones/{zone}": {key: listed} if listed else {"warning": {"code": "NO_RESULTS_ON_PAGE"}}
             for zone, listed in by_zone.items()}
    page = {"kind": f"compute#{kind}AggregatedList", "items": items}
    return page | ({"nextPageToken": next_token} if next_token else {})


A3 = ("a3-highgpu-8g", 208, 1916928, ("nvidia-h100-80gb", 8))


def test_gcp_machine_and_accelerator_types_by_zone():
    machines = aggregated("machineType", "machineTypes", {
        "us-central1-a": [gce_machine(A3[0], "us-central1-a", *A3[1:]),
                          gce_machine("c4-standard-96", "us-central1-a", 96, 368640)],
        "asia-east1-a": [],  # a zone with nothing: only a warning
    })
    accelerators = aggregated("acceleratorType", "acceleratorTypes", {
        "us-central1-a": [gce_accelerator("nvidia-h100-80gb", "us-central1-a", "NVIDIA H100 80GB")]})
    rows = gcp_machine_types.rows_from_pages([("mt", machines), ("at", accelerators)])
    assert hardware(rows) == [
        ("a3-highgpu-8g", "gpu", None, "nvidia-h100-80gb", 8.0, None, 208.0, 1916928.0),  # no memory per GPU listed
        ("c4-standard-96", None, None, None, None, None, 96.0, 368640.0),
        (None, "gpu", None, "nvidia-h100-80gb", None, None, None, None),
    ]
    assert [(r["listing"], r["region"], r["zone"]) for r in rows] == [
        ("machine_types", "us-central1", "us-central1-a"), ("machine_types", "us-central1", "us-central1-a"),
        ("accelerator_types", "us-central1", "us-central1-a")]  # the zone of a URL, too
    assert (rows[2]["device_description"], rows[2]["max_devices_per_instance"]) == ("NVIDIA H100 80GB", 8.0)
    assert rows[0]["source_ref"] == "mt: items['zones/us-central1-a'].machineTypes[0].accelerators[0]"


def gce_path(listing: str) -> str:
    return f"/compute/v1/projects/{GCP_ENV['GOOGLE_CLOUD_PROJECT']}/aggregated/{listing}"


def test_gcp_live_pages_both_listings_keeps_the_declared_scope_and_hides_the_token(server, caplog):
    caplog.set_level(logging.INFO)
    server.add(gce_path("machineTypes"), aggregated("machineType", "machineTypes", {
        "us-central1-a": [gce_machine(A3[0], "us-central1-a", *A3[1:]),
                          gce_machine("n2-standard-8", "us-central1-a", 8, 32768)],
        "europe-west4-a": [gce_machine(A3[0], "europe-west4-a", *A3[1:])]}, next_token="mt-2"))
    server.add(gce_path("machineTypes"), aggregated("machineType", "machineTypes", {
        "us-east4-a": [gce_machine(A3[0], "us-east4-a", *A3[1:])]}))
    server.add(gce_path("acceleratorTypes"), aggregated("acceleratorType", "acceleratorTypes", {
        "us-central1-a": [gce_accelerator("nvidia-h100-80gb", "us-central1-a", "NVIDIA H100 80GB")]}))
    options = {"endpoint": server.base, "regions": ["us-central1", "us-east4"], "machine_type_prefixes": ["a3-"]}
    rows = gcp_machine_types.fetch_live(options, environ=GCP_ENV, slots=CloudSlots("gcp", 2))
    # kept: a3 in us-central1-a and us-east4-a, the H100 accelerator type; dropped: n2 (prefix), europe-west4 (region)
    assert [(r["listing"], r["zone"], r["instance_type"]) for r in rows] == [
        ("machine_types", "us-central1-a", "a3-highgpu-8g"), ("machine_types", "us-east4-a", "a3-highgpu-8g"),
        ("accelerator_types", "us-central1-a", None)]
    by_path = defaultdict(list)
    for path, query, headers in server.requests:
        by_path[path].append(query)
        assert headers["Authorization"] == f"Bearer {GCP_TOKEN}"
    first = {"maxResults": ["500"], "returnPartialSuccess": ["true"]}
    assert by_path[gce_path("machineTypes")] == [first, first | {"pageToken": ["mt-2"]}]
    assert by_path[gce_path("acceleratorTypes")] == [first]
    assert rows[1]["source_ref"] == "gcp machineTypes page 2: items['zones/us-east4-a'].machineTypes[0].accelerators[0]"
    assert "gcp machine types: kept 3 of 5 machine and accelerator types read; 3 rows" in caplog.text
    assert GCP_TOKEN not in caplog.text


def test_gcp_missing_credentials_and_unknown_options(server):
    with pytest.raises(LiveSourceError, match=r"^gcp machine types: no credentials: set GOOGLE_CLOUD_PROJECT \("):
        gcp_machine_types.fetch_live({"endpoint": server.base}, environ={"GOOGLE_OAUTH_ACCESS_TOKEN": "t"})
    with pytest.raises(LiveSourceError, match=r"set GOOGLE_CLOUD_PROJECT and GOOGLE_OAUTH_ACCESS_TOKEN"):
        gcp_machine_types.fetch_live({"endpoint": server.base}, environ={})
    with pytest.raises(SourceFormatError, match=r"unknown key 'zones' \(allowed: regions, machine_type_prefixes, "
                                                r"endpoint\)"):
        gcp_machine_types.fetch_live({"zones": ["us-central1-a"]}, environ=GCP_ENV)
    assert server.requests == []


# ---------------------------------------------------------------- malformed files name the file and the key
@pytest.mark.parametrize(("module", "page", "message"), [
    (aws_instance_types, {"InstanceTypes": [{"VCpuInfo": {"DefaultVCpus": 8}}]},
     r"^bad\.json: InstanceTypes\[0\]: missing key 'InstanceType'$"),
    (aws_instance_types, {"InstanceTypes": [P5 | {"GpuInfo": {"Gpus": {"Name": "H100"}}}]},
     r"^bad\.json: InstanceTypes\[0\]\.GpuInfo\.Gpus: expected a list, got dict"),
    (aws_instance_types, {"NextToken": "x"}, r"^bad\.json: missing key 'InstanceTypes'$"),
    (azure_skus, {"value": [ND_H100 | {"capabilities": [{"name": "GPUs", "value": {"count": 8}}]}]},
     r"^bad\.json: value\[0\]\.capabilities\[0\]\.value: expected a string, got dict"),
    (azure_skus, {"value": [{"name": "Standard_X"}]}, r"^bad\.json: value\[0\]: missing key 'resourceType'$"),
    # a dict would keep the last: 16 GPUs would land for the 8 listed first
    (azure_skus, {"value": [ND_H100 | {"capabilities": [{"name": "GPUs", "value": "8"}, {"name": "vCPUs", "value": "96"},
                                                       {"name": "GPUs", "value": "16"}]}]},
     (r"^bad\.json: value\[0\]\.capabilities\[2\]\.name: 'GPUs' again, first given at capabilities\[0\] "
      r"\(expected each capability once\)$")),
    (gcp_machine_types, {"items": {"zones/us-central1-a": [A3]}},
     r"^bad\.json: items\['zones/us-central1-a'\]: expected a scoped list object, got list$"),
    (gcp_machine_types, {"items": {"zones/us-central1-a": {"machineTypes": [{"guestCpus": 8}]}}},
     r"^bad\.json: items\['zones/us-central1-a'\]\.machineTypes\[0\]: missing key 'name'$"),
])
def test_malformed_input_names_the_file_and_the_key(tmp_path, module, page, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(page))
    with pytest.raises(SourceFormatError, match=message):
        module.read_file(path, "bad.json", "us-east-1")


# ---------------------------------------------------------------- landing and staging
def land(con, catalog, kind: str, rows: list[dict], run_id: str, as_of):
    """Validate and land `rows` as source `kind` into raw.instance_types, the way a run does."""
    batch = SourceBatch.of_rows(kind, kind, "instance_types", ["test"], as_of,
                        [r | {"row_no": i, "source_id": kind, "data_as_of": as_of} for i, r in enumerate(rows)])
    return land_batch(con, batch, run_id, as_of, catalog)


STAGED = ("cloud", "instance_type", "regions", "hardware_variants", "device_kind", "device_manufacturer", "device_name",
          "device_count", "device_memory_mib", "vcpu", "memory_mib")


def test_fractional_accelerators_are_quarantined_wrong_figures_land(fresh_db, catalog):
    g6f = ec2_type("g6f.large", 2, 8192, cpu="AMD", gpus=[("L4", "NVIDIA", "0.25", 5722)])
    rows = aws_instance_types.rows_from_pages([("p", {"InstanceTypes": [TRN2, g6f]}, "us-east-1")])
    load = land(fresh_db, catalog, "aws_instance_types", rows, "run-1", AS_OF)
    assert (load.rows_landed, load.rows_quarantined) == (1, 1)  # trn2's 524,288 MiB lands, as listed
    assert fresh_db.execute("select expectation, unexpected_value from ops.quarantine").fetchall() == [
        ("whole_device_count", "0.25")]


def test_figures_past_their_bound_are_quarantined_not_left_to_overflow_staging(fresh_db, catalog):
    """A listing's memory of 1e30 MiB, or 3,000,000,000 devices, overflowed staging's bigint cast and failed every
    build, naming neither the listing nor the row: they are quarantined with the bound."""
    huge_memory = ec2_type("p5.48xlarge", 192, 1e30, cpu="AMD", gpus=[("H100", "NVIDIA", 8, 81920)])
    many = ec2_type("p4d.24xlarge", 96, 1179648, cpu="Intel", gpus=[("A100", "NVIDIA", 3000000000, 1e8)])
    rows = aws_instance_types.rows_from_pages([("p", {"InstanceTypes": [TRN2, huge_memory, many]}, "us-east-1")])
    load = land(fresh_db, catalog, "aws_instance_types", rows, "run-1", AS_OF)
    assert (load.rows_landed, load.rows_quarantined) == (1, 2)
    assert fresh_db.execute("select row_no, expectation, unexpected_value from ops.quarantine "
                            "order by row_no, expectation").fetchall() == [
        (1, "memory_bounded", "1e+30"),
        (2, "device_count_bounded", "3000000000.0"),
        (2, "device_memory_bounded", "100000000.0")]


@pytest.mark.slow  # a whole build of the snapshot's or a round's rows (~3 s): make test-slow and CI run it
def test_staging_has_one_row_per_instance_type_hardware_with_its_regions_and_variants(fresh_db, catalog):
    p5_other = ec2_type("p5.48xlarge", 192, 2097152, cpu="AMD", gpus=[("H100", "NVIDIA", 8, 81920)])
    p5_disagrees = ec2_type("p5.48xlarge", 192, 1048576, cpu="AMD", gpus=[("H100", "NVIDIA", 8, 81920)])
    aws = aws_instance_types.rows_from_pages([
        ("east", {"InstanceTypes": [P5, INF2, C8G]}, "us-east-1"),
        ("west", {"InstanceTypes": [p5_other, INF2]}, "us-west-2"),
        ("north", {"InstanceTypes": [p5_disagrees]}, "eu-north-1"),  # host memory listed differently
    ])
    gcp = gcp_machine_types.rows_from_pages([
        ("mt", aggregated("machineType", "machineTypes", {
            "us-central1-a": [gce_machine(A3[0], "us-central1-a", *A3[1:])],
            "us-central1-b": [gce_machine(A3[0], "us-central1-b", *A3[1:])],
            "us-east4-a": [gce_machine(A3[0], "us-east4-a", *A3[1:])]})),
        ("at", aggregated("acceleratorType", "acceleratorTypes", {
            "us-central1-a": [gce_accelerator("nvidia-h100-80gb", "us-central1-a", "NVIDIA H100 80GB")]})),
    ])
    azure = azure_skus.rows_from_pages([("az", {"value": [ND_H100]})], "eastus")
    loads = [land(fresh_db, catalog, kind, rows, "run-1", AS_OF) for kind, rows in
             (("aws_instance_types", aws), ("gcp_machine_types", gcp), ("azure_skus", azure))]
    assert [(ld.rows_landed, ld.rows_quarantined) for ld in loads] == [(6, 0), (4, 0), (1, 0)]
    transform.build_models(fresh_db, "run-1", AS_OF)
    staged = fetch_dicts(fresh_db, "select * from staging.stg_instance_types__hardware "
                                   "order by cloud, instance_type, memory_mib")
    assert list(staged[0]) == ["source_id", "data_as_of", "source_ref", "cloud", "instance_type", "regions",
                               "hardware_variants", "device_kind", "device_manufacturer", "device_name",
                               "device_count", "device_memory_mib", "vcpu", "memory_mib", "cpu_manufacturer",
                               "cpu_architecture"]
    assert [tuple(r[c] for c in STAGED) for r in staged] == [
        ("aws", "c8g.48xlarge", ["us-east-1"], 1, None, None, None, None, None, 192, 393216),
        ("aws", "inf2.48xlarge", ["us-east-1", "us-west-2"], 1, "neuron", "AWS", "Inferentia2", 12, 32768, 192, 786432),
        # two hardware listings of p5.48xlarge: eu-north-1 says 1 TiB of host memory, the others 2 TiB
        ("aws", "p5.48xlarge", ["eu-north-1"], 2, "gpu", "NVIDIA", "H100", 8, 81920, 192, 1048576),
        ("aws", "p5.48xlarge", ["us-east-1", "us-west-2"], 2, "gpu", "NVIDIA", "H100", 8, 81920, 192, 2097152),
        ("azure", "Standard_ND96isr_H100_v5", ["eastus"], 1, "gpu", None, "standardNDSH100v5Family", 12, None, 96,
         1945600),
        # two zones of us-central1 and one of us-east4; the vendor from the accelerator type's description
        ("gcp", "a3-highgpu-8g", ["us-central1", "us-east4"], 1, "gpu", "NVIDIA", "nvidia-h100-80gb", 8, None, 208,
         1916928),
    ]
    assert staged[3]["source_ref"] == "east: InstanceTypes[0].GpuInfo.Gpus[0]"
    assert (staged[0]["source_id"], staged[0]["data_as_of"], staged[0]["cpu_manufacturer"],
            staged[0]["cpu_architecture"]) == ("aws_instance_types", AS_OF, "AWS", "arm64")


@pytest.mark.slow  # a whole build of the snapshot's or a round's rows (~3 s): make test-slow and CI run it
def test_the_embedded_snapshot_lands_whole_and_covers_the_priced_instance_types(fresh_db, catalog):
    for source_id in ("aws_instance_types", "azure_skus", "gcp_machine_types"):
        load = land_batch(fresh_db, fetch_source(catalog, source_id), "run-1", AS_OF, catalog)
        assert (load.status, load.rows_quarantined) == ("landed", 0), source_id
    transform.build_models(fresh_db, "run-1", AS_OF)
    staged = {(c, t): (n, mib, variants) for c, t, n, mib, variants in fresh_db.execute(
        "select cloud, instance_type, device_count, device_memory_mib, hardware_variants "
        "from staging.stg_instance_types__hardware").fetchall()}
    priced = {("aws", t) for t in (
        "p5.48xlarge", "p5.4xlarge", "p5en.48xlarge", "p5e.48xlarge", "p6-b200.48xlarge", "p6-b300.48xlarge",
        "p4d.24xlarge", "p4de.24xlarge", "g6e.12xlarge", "g6.2xlarge", "g5.2xlarge", "trn1.32xlarge", "trn1.2xlarge",
        "trn1n.32xlarge", "trn2.48xlarge", "inf2.xlarge", "inf2.8xlarge", "inf2.48xlarge", "c8g.48xlarge",
        "c8i.48xlarge", "c8a.48xlarge")} | {("azure", t) for t in (
        "Standard_ND96isr_H100_v5", "Standard_NC40ads_H100_v5", "Standard_ND96isr_MI300X_v5",
        "Standard_ND96isr_H200_v5", "Standard_NC4as_T4_v3")} | {("gcp", t) for t in (
        "a3-highgpu-8g", "a3-ultragpu-8g", "a4-highgpu-8g", "g2-standard-8", "c4-standard-96")}
    assert priced <= set(staged)
    listed = {(i.cloud, i.instance_type) for i in catalog.instances.instances}
    assert staged[("aws", "trn2.48xlarge")] == (16, 524288, 1)  # the trap, as listed
    assert staged[("aws", "g6e.48xlarge")] == (8, 45776, 1)  # a GPU type instances.yaml does not list
    assert ("aws", "g6e.48xlarge") not in listed
    assert staged[("azure", "Standard_ND96isr_H100_v5")] == (12, None, 1)  # listed with 12 GPUs: it has 8
    assert staged[("gcp", "c4-standard-96")] == (None, None, 1)
    assert all(variants == 1 for _, _, variants in staged.values())
    assert dt.date(2026, 8, 22) in {r[0] for r in fresh_db.execute(
        "select data_as_of from staging.stg_instance_types__hardware").fetchall()}


def test_gcp_unreachable_locations_the_listing_asks_for_fail_it_and_others_are_logged(caplog):
    # returnPartialSuccess: a listing answers without the zones it could not reach, and names them
    page = aggregated("machineType", "machineTypes", {"us-central1-a": [gce_machine(A3[0], "us-central1-a", *A3[1:])]})
    page["unreachables"] = ["zones/us-east5-a", "zones/asia-east1-b"]
    asks_east5 = gcp_machine_types.Scope(regions=["us-central1", "us-east5"])
    with pytest.raises(LiveSourceError, match=r"^mt: 1 location\(s\) the listing asks for were unreachable "
                                              r"\(returnPartialSuccess\): \['zones/us-east5-a'\]; their types would "
                                              r"be missing$"):
        gcp_machine_types.rows_from_pages([("mt", page)], asks_east5)
    # every region asked for (no `regions`): any unreachable zone fails the listing
    with pytest.raises(LiveSourceError, match=r"^mt: 2 location\(s\) the listing asks for were unreachable"):
        gcp_machine_types.rows_from_pages([("mt", page)], gcp_machine_types.Scope())
    # zones outside the regions asked for, or a saved listing read from a file (no scope), only make a warning
    for scope in (gcp_machine_types.Scope(regions=["us-central1"]), None):
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            rows = gcp_machine_types.rows_from_pages([("mt", page)], scope)
        assert [r["zone"] for r in rows] == ["us-central1-a"]
        assert "mt: 2 locations were unreachable and are missing from the listing (none the run asks for)" in caplog.text
