"""Small builders for source payloads in their real shapes (written for the tests, not copied samples), the
warehouse copies that tests/conftest.py and the modules' built warehouses hand to each test, the pieces of the
loopback HTTP servers that stand in for the sources' APIs, and a check of the links of a published Data Docs folder."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import threading
import time
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import duckdb

from flows import warehouse


def aws_product(instance_type: str, usd: str, *, region: str = "us-east-1", os: str = "Linux",
                market: str = "OnDemand", sku: str = "SKU0000000000001", vcpu: str = "192", gpu: str = "8",
                reserved: list[tuple[str, str, str, str]] | None = None) -> str:
    """One PriceList item as the API returns it: a JSON *string*. `reserved`: (length, option, hourly, upfront)."""
    attributes = {
        "instanceType": instance_type, "regionCode": region, "location": "US East (N. Virginia)",
        "instanceFamily": "GPU instance", "operatingSystem": os, "licenseModel": "No License required",
        "preInstalledSw": "NA", "tenancy": "Shared", "capacitystatus": "Used", "marketoption": market,
        "usagetype": f"BoxUsage:{instance_type}", "vcpu": vcpu, "gpu": gpu,
    }
    terms = {"OnDemand": {f"{sku}.JRTCKXETXF": {
        "priceDimensions": {f"{sku}.JRTCKXETXF.6YS6EN2CT7": {
            "unit": "Hrs", "endRange": "Inf", "description": f"${usd} per On Demand {os} {instance_type} Instance Hour",
            "appliesTo": [], "rateCode": f"{sku}.JRTCKXETXF.6YS6EN2CT7", "beginRange": "0",
            "pricePerUnit": {"USD": usd}}},
        "sku": sku, "effectiveDate": "2026-09-01T00:00:00Z", "offerTermCode": "JRTCKXETXF", "termAttributes": {}}}}
    for n, (length, option, hourly, upfront) in enumerate(reserved or []):
        code = f"RESERVED{n}"
        dims = {f"{sku}.{code}.6YS6EN2CT7": {"unit": "Hrs", "pricePerUnit": {"USD": hourly},
                                              "description": "reserved hourly"}}
        if upfront is not None:
            dims[f"{sku}.{code}.2TG2D8R56U"] = {"unit": "Quantity", "pricePerUnit": {"USD": upfront},
                                                 "description": "Upfront Fee"}
        terms.setdefault("Reserved", {})[f"{sku}.{code}"] = {
            "priceDimensions": dims, "sku": sku, "offerTermCode": code,
            "termAttributes": {"LeaseContractLength": length, "PurchaseOption": option, "OfferingClass": "standard"}}
    return json.dumps({"product": {"productFamily": "Compute Instance", "attributes": attributes, "sku": sku},
                       "serviceCode": "AmazonEC2", "terms": terms, "version": "20260910195514",
                       "publicationDate": "2026-09-10T19:55:14Z"})


def aws_page(*items: str, next_token: str | None = None) -> dict:
    page = {"FormatVersion": "aws_v1", "PriceList": list(items)}
    if next_token:
        page["NextToken"] = next_token
    return page


def azure_item(sku: str, price: float, *, product: str, meter: str, price_type: str = "Consumption",
               region: str = "eastus") -> dict:
    return {"currencyCode": "USD", "tierMinimumUnits": 0.0, "retailPrice": price, "unitPrice": price,
            "armRegionName": region, "location": "US East", "effectiveStartDate": "2024-09-01T00:00:00Z",
            "meterId": "m-1", "meterName": meter, "productId": "p-1", "skuId": "s-1", "productName": product,
            "skuName": meter, "serviceName": "Virtual Machines", "serviceId": "DZH313Z7MMC8",
            "serviceFamily": "Compute", "unitOfMeasure": "1 Hour", "type": price_type,
            "isPrimaryMeterRegion": True, "armSkuName": sku}


def azure_page(*items: dict, next_link: str | None = None) -> dict:
    return {"BillingCurrency": "USD", "CustomerEntityId": "Default", "CustomerEntityType": "Retail",
            "Items": list(items), "NextPageLink": next_link, "Count": len(items)}


def gcp_sku(description: str, units: str, nanos: int, *, regions=("us-central1",), group: str = "GPU",
            usage: str = "OnDemand", unit: str = "h") -> dict:
    return {
        "name": "services/6F81-5844-456A/skus/TEST-0000-0001", "skuId": "TEST-0000-0001", "description": description,
        "category": {"serviceDisplayName": "Compute Engine", "resourceFamily": "Compute", "resourceGroup": group,
                     "usageType": usage},
        "serviceRegions": list(regions),
        "pricingInfo": [{"summary": "", "pricingExpression": {
            "usageUnit": unit, "displayQuantity": 1,
            "tieredRates": [{"startUsageAmount": 0, "unitPrice": {"currencyCode": "USD", "units": units, "nanos": nanos}}],
            "usageUnitDescription": "hour", "baseUnit": "s", "baseUnitConversionFactor": 3600,
            "baseUnitDescription": "second"}, "currencyConversionRate": 1, "effectiveTime": "2026-10-01T00:00:00Z"}],
        "serviceProviderName": "Google", "geoTaxonomy": {"type": "REGIONAL", "regions": list(regions)},
    }


def mlperf_inference_result(result_id: str, accelerator: str, model: str, scenario: str, tokens_per_s: float, *,
                            per_node: float = 8.0, nodes: int = 1, precision: str = "fp16") -> dict:
    return {"ID": result_id, "Submitter": "Test", "Availability": "available", "Category": "closed",
            "Suite": "datacenter", "System": f"Test system ({int(per_node)}x {accelerator})", "Platform": "p",
            "UsedModel": model, "Model": model, "Scenario": scenario, "Accuracy": "ROUGE1: 44.4", "Nodes": nodes,
            "Processor": "cpu", "Accelerator": accelerator, "a#": per_node, "version": "v4.1", "has_power": False,
            "weight_data_types": precision, "Performance_Result": tokens_per_s, "Performance_Units": "Tokens/s"}


TRAINING_HEADER = [
    "division", "availability", "submitter", "system", "number_of_nodes", "host_processor_model_name",
    "host_processors_count", "accelerator_model_name", "accelerators_count", "framework", "notes", "private_id",
    "gpt3:time_to_train", "gpt3:Energy", "gpt3:GBS", "gpt3:samples_to_converge", "gpt3:RCP", "gpt3:rcp_scaling_factor",
    "llama2_70b_lora:time_to_train", "llama2_70b_lora:Energy", "llama2_70b_lora:GBS",
    "llama2_70b_lora:samples_to_converge", "llama2_70b_lora:RCP", "llama2_70b_lora:rcp_scaling_factor",
    "details_url", "code_url",
]


def training_csv_row(system: str, accelerator: str, chips: int, nodes: int, *, gpt3: str = "",
                     lora: str = "") -> dict:
    row = dict.fromkeys(TRAINING_HEADER, "")
    row.update({"division": "closed", "availability": "Available on-premise", "submitter": "Test", "system": system,
                "number_of_nodes": str(nodes), "accelerator_model_name": accelerator, "accelerators_count": str(chips),
                "gpt3:time_to_train": gpt3, "llama2_70b_lora:time_to_train": lora})
    return row


def landed_training_row(system: str, accelerator: str, chips: int, nodes: int, benchmark: str, minutes: float,
                        samples_to_converge: float | None = None) -> dict:
    """One row of raw.mlperf_training as the parser produces it (before run tags)."""
    return {"source_ref": f"t.csv ({system}, {benchmark})", "division": "closed", "availability": "available",
            "submitter": "Test", "system": system, "accelerator": accelerator,
            "accelerator_key": accelerator.casefold(), "accelerators_count": float(chips),
            "number_of_nodes": float(nodes), "framework": "f", "details_url": None, "benchmark": benchmark,
            "time_to_train_text": str(minutes), "time_to_train_minutes": minutes, "energy": None, "energy_text": None,
            "global_batch_size": None, "global_batch_size_text": None, "samples_to_converge": samples_to_converge,
            "samples_to_converge_text": None if samples_to_converge is None else str(samples_to_converge)}


def land(con, catalog, kind: str, rows: list[dict], run_id: str, as_of):
    """Validate and land `rows` as source `kind` (the kind's own table), the way a run does."""
    from flows.land import land_batch
    from flows.source_batches import SourceBatch

    batch = SourceBatch.of_rows(kind, kind, kind, ["test"], as_of,
                        [r | {"row_no": i, "source_id": kind, "data_as_of": as_of} for i, r in enumerate(rows)])
    return land_batch(con, batch, run_id, as_of, catalog)


class QuietHandler(BaseHTTPRequestHandler):
    """The request handler of a loopback server standing in for an API: no line on stderr for each request, and
    `send_body` for the answer every such server writes."""

    def log_message(self, *args) -> None:
        pass

    def send_body(self, body: bytes, status: int = 200, content_type: str | None = "application/json", *,
                  length: bool = True, headers: dict[str, str] | None = None, reason: str | None = None) -> None:
        """Answer `status` (`reason` None: the standard phrase) with `body`, after a Content-Type (None: none),
        `headers` and a Content-Length (unless `length` is false: the client then reads to the connection's end)."""
        self.send_response(status, reason)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def serve_loopback(handler_class: type[BaseHTTPRequestHandler]) -> tuple[ThreadingHTTPServer, str]:
    """Serve `handler_class` on 127.0.0.1 at a free port from a daemon thread, polling every 0.05 s (so that
    close_loopback returns at once): the server and its base URL, http://127.0.0.1:PORT."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler_class)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


def close_loopback(httpd: ThreadingHTTPServer) -> None:
    """Stop a server of serve_loopback and close its socket."""
    httpd.shutdown()
    httpd.server_close()


def replace_once(path: Path, old: str, new: str) -> None:
    """Edit a copied catalog file: `old`, which must occur exactly once, becomes `new`."""
    text = path.read_text()
    assert text.count(old) == 1, f"{path.name}: {old!r} occurs {text.count(old)} times"
    path.write_text(text.replace(old, new))


def open_copy(template: Path, target: Path) -> duckdb.DuckDBPyConnection:
    """A connection to a copy of the warehouse file `template` at `target`: a test's own, to change as it likes."""
    if target.exists():
        raise FileExistsError(f"{target} exists: a test gets one warehouse under each name")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(template, target)
    return warehouse.connect(target)


def discard(con: duckdb.DuckDBPyConnection) -> None:
    """Close a test's warehouse without the checkpoint that writes its tables into a file no one reads again (~0.1 s
    a test); a connection the test closed itself is left as it is, and one the pragma cannot reach (a transaction
    the test left aborted) is closed all the same."""
    try:
        con.execute("pragma disable_checkpoint_on_shutdown")
    except duckdb.ConnectionException:
        return
    except duckdb.Error:
        pass
    con.close()


def module_warehouse(tmp_path_factory, empty_warehouse: Path, name: str) -> tuple[Path, duckdb.DuckDBPyConnection]:
    """A module's own copy of the empty warehouse, for its module-scoped fixture to land and build in: close the
    connection and return the path."""
    path = tmp_path_factory.mktemp(name) / "test.duckdb"
    return path, open_copy(empty_warehouse, path)


def worker_outlives_its_killed_run(program: str, env: dict[str, str] | None = None, wait_s: float = 30.0) -> bool:
    """Run `program` in a Python process of its own (it starts a worker process, prints the worker's pid, then
    sleeps), kill it (SIGKILL: no atexit, no executor shutdown) and wait up to `wait_s` for the worker to exit; whether
    the worker is still alive then."""
    import os
    import select
    import signal
    import subprocess
    import sys

    from flows.paths import PROJECT_ROOT

    run = subprocess.Popen([sys.executable, "-c", program], cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True,
                           env=env)
    # the worker held by a pid file descriptor, taken while its run still lives (so it is that worker): it reads as
    # ready once the worker has ended, and a signal sent through it cannot reach another process given its pid since
    worker = os.pidfd_open(int(run.stdout.readline()))
    try:
        run.send_signal(signal.SIGKILL)
        run.wait()
        outlived = not select.select([worker], [], [], wait_s)[0]
        if outlived:  # (the test fails) not left behind: a mutation that keeps workers alive would leave one a run
            signal.pidfd_send_signal(worker, signal.SIGKILL)
    finally:
        os.close(worker)
    return outlived


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.links += [value for name, value in attrs if name in ("href", "src") and value]


def site_links(site: Path) -> tuple[int, list[tuple[str, str]]]:
    """Every relative href and src of every HTML page under `site` (a published data-docs folder), as a browser
    opening the page from disk reads them: how many there are, and (page, link) of each that is not a file inside
    `site`. Links with a scheme (https:, data:), a fragment alone or a path from the root are not the site's."""
    site = Path(os.path.normpath(site.resolve()))
    count, unresolved = 0, []
    for page in sorted(site.rglob("*.html")):
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or not parts.path or parts.path.startswith("/"):
                continue
            count += 1
            target = Path(os.path.normpath(page.parent / unquote(parts.path)))
            if not (target.is_relative_to(site) and target.is_file()):
                unresolved.append((page.relative_to(site).as_posix(), link))
    return count, unresolved


def favicon_links(site: Path) -> set[str]:
    """The favicon link of each validation page of a data-docs folder."""
    return {match for page in site.glob("validations/*/*/*/*.html")
            for match in re.findall(r'<link rel="shortcut icon" href="([^"]+)"', page.read_text(encoding="utf-8"))}


def proc_file(pid: int | str, name: str) -> str:
    """/proc/<pid>/<name>'s text, or "" when the process or thread has ended (or was reaped) since it was listed."""
    try:
        return Path(f"/proc/{pid}/{name}").read_bytes().decode(errors="replace")
    except (FileNotFoundError, ProcessLookupError):
        return ""


def gone(pid: int, within_s: float = 15.0) -> bool:
    """Whether process `pid` has ended (or is a zombie) within `within_s`."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        stat = proc_file(pid, "stat")
        if not stat or stat.rsplit(") ", 1)[1].startswith("Z"):
            return True
        time.sleep(0.2)
    return False


def raw_server(*responses: bytes, trickle_s: float = 0.0, trickle_from: bytes | None = None) -> str:
    """A server on 127.0.0.1 that answers a request (a connection) with each of `responses` in turn, exactly as written
    (its body a byte every `trickle_s` when given, after the head at once; with `trickle_from`, from where that text
    begins in it), then closes it; its base URL."""
    listener = socket.create_server(("127.0.0.1", 0))

    def answer():
        with listener:
            for response in responses:
                with listener.accept()[0] as conn:
                    request = b""
                    while b"\r\n\r\n" not in request:
                        request += conn.recv(4096)
                    head, blank, body = response.partition(b"\r\n\r\n")
                    if trickle_from is not None:
                        at = response.index(trickle_from)
                        head, blank, body = response[:at], b"", response[at:]
                    try:
                        conn.sendall(head + blank + (b"" if trickle_s else body))
                        for i in range(len(body) if trickle_s else 0):
                            conn.sendall(body[i:i + 1])
                            time.sleep(trickle_s)
                    except OSError:  # the client gave up
                        pass

    threading.Thread(target=answer, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}"
