"""A corpus of malformed inputs across the source kinds: each names the file, the row or key, and what was expected."""

import json

import pytest
from builders import TRAINING_HEADER, aws_page, aws_product, azure_item, azure_page, gcp_sku, mlperf_inference_result

from flows.sources import SOURCE_KINDS
from flows.sources._common import SourceFormatError

AWS_OK = json.dumps(aws_page(aws_product("p5.48xlarge", "55.0400000000")))
HEADER = ",".join(TRAINING_HEADER)


def aws_with(mutate):
    item = json.loads(aws_product("p5.48xlarge", "55.0400000000"))
    mutate(item)
    return json.dumps(aws_page(json.dumps(item)))


def inference_with(**changes):
    result = mlperf_inference_result("x", "NVIDIA L40S", "llama2-70b-99", "Offline", 3717.74)
    for key, value in changes.items():
        if value is ...:
            del result[key]
        else:
            result[key] = value
    return json.dumps([result])


def bedrock_with_inference_type(value) -> bytes:
    item = {"product": {"attributes": {"inferenceType": value, "model": "Llama 3.1 8B Instruct"}}, "terms": {}}
    return json.dumps({"PriceList": [json.dumps(item)]}).encode()


def gcp_with(mutate):
    sku = gcp_sku("TPU v5e chip running in Iowa", "1", 200000000, group="TPU")
    mutate(sku)
    return json.dumps({"skus": [sku]})


CASES = [
    # (kind, file name, content, expected message)
    ("aws_pricing", "p.json", b"", r"f: not valid JSON at line 1 column 1"),
    ("aws_pricing", "p.json", AWS_OK[:-40].encode(), r"f: not valid JSON at line 1"),
    ("aws_pricing", "p.json", b"\xff\xfe{}", r"f: not UTF-8 text \(byte 0"),
    ("aws_pricing", "p.json", b"[]", r"f: expected an object with key 'PriceList', got list"),
    ("aws_pricing", "p.json", b'{"FormatVersion": "aws_v1"}', r"f: missing key 'PriceList'"),
    ("aws_pricing", "p.json", b'{"PriceList": "not a list"}', r"f.PriceList: expected list, got str"),
    ("aws_pricing", "p.json", b'{"PriceList": ["{not json"]}', r"f: PriceList\[0\]: not valid JSON"),
    ("aws_pricing", "p.json", aws_with(lambda i: i.pop("product")).encode(), r"f: PriceList\[0\]: missing key 'product'"),
    ("aws_pricing", "p.json", aws_with(lambda i: i["product"].pop("attributes")).encode(),
     r"f: PriceList\[0\].product: missing key 'attributes'"),
    ("aws_pricing", "p.json", aws_with(lambda i: i.pop("terms")).encode(), r"f: PriceList\[0\]: missing key 'terms'"),
    ("aws_pricing", "p.json",
     aws_with(lambda i: [t.pop("priceDimensions") for t in i["terms"]["OnDemand"].values()]).encode(),
     r"f: PriceList\[0\].terms.OnDemand.SKU0000000000001.JRTCKXETXF: missing key 'priceDimensions'"),
    ("aws_pricing", "p.json",
     aws_with(lambda i: [d.pop("pricePerUnit") for t in i["terms"]["OnDemand"].values()
                         for d in t["priceDimensions"].values()]).encode(),
     r"f: PriceList\[0\].terms.OnDemand.SKU0000000000001.JRTCKXETXF.SKU0000000000001.JRTCKXETXF.6YS6EN2CT7: "
     r"missing key 'pricePerUnit'"),
    ("aws_pricing", "p.json", aws_with(lambda i: i["terms"]["OnDemand"].update(
        {"SKU0000000000001.JRTCKXETXF": "withdrawn"})).encode(),
     (r"^f: PriceList\[0\]\.terms\.OnDemand\.SKU0000000000001\.JRTCKXETXF: expected an object with key "
      r"'priceDimensions', got str$")),
    ("aws_pricing", "p.json", aws_with(lambda i: i["terms"]["OnDemand"]["SKU0000000000001.JRTCKXETXF"].update(
        termAttributes=["LeaseContractLength", "1yr"])).encode(),
     (r"^f: PriceList\[0\]\.terms\.OnDemand\.SKU0000000000001\.JRTCKXETXF\.termAttributes: expected an object "
      r"of name: value, got list \['LeaseContractLength', '1yr'\]$")),
    # a key given twice inside a PriceList item (a JSON string of its own): where in that string
    ("aws_pricing", "p.json", json.dumps({"PriceList": ['{"product": {"sku": "A", "sku": "B"}}']}).encode(),
     (r"^f: PriceList\[0\]: line 1 column 26: key 'sku' appears twice in one object \(first at line 1 column 14\); "
      r"expected each key once$")),
    ("azure_retail", "a.json", b'{"NextPageLink": null}', r"f: missing key 'Items'"),
    ("azure_retail", "a.json", b'{"Items": {}}', r"f.Items: expected list, got dict"),
    ("azure_retail", "a.json", json.dumps(azure_page({"retailPrice": 1.0})).encode(),
     r"f: Items\[0\]: missing key 'armSkuName'"),
    ("azure_retail", "a.json", json.dumps(azure_page(azure_item(1, 1.0, product="p", meter="m"))).encode(),
     r"f: Items\[0\].armSkuName: expected str, got int"),
    ("azure_retail", "a.json", b'{"Items": [', r"f: not valid JSON at line 1 column 12"),
    ("gcp_billing", "g.json", b'{"nextPageToken": ""}', r"f: missing key 'skus'"),
    ("gcp_billing", "g.json", gcp_with(lambda s: s.pop("category")).encode(), r"f: skus\[0\]: missing key 'category'"),
    ("gcp_billing", "g.json", gcp_with(lambda s: s.pop("serviceRegions")).encode(),
     r"f: skus\[0\]: missing key 'serviceRegions'"),
    ("gcp_billing", "g.json", gcp_with(lambda s: s.update(pricingInfo=[])).encode(),
     r"f: skus\[0\].pricingInfo: empty, expected at least one pricing entry"),
    ("gcp_billing", "g.json",
     gcp_with(lambda s: s["pricingInfo"][0]["pricingExpression"]["tieredRates"][0].pop("unitPrice")).encode(),
     r"tieredRates\[0\]: missing key 'unitPrice'"),
    ("gcp_billing", "g.json",
     gcp_with(lambda s: s["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["unitPrice"].update(
         units="one")).encode(),
     r"unitPrice: units 'one' / nanos 200000000 are not integers"),
    ("mlperf_inference", "s.json", b'{"ID": "x"}', r"f: expected a JSON list of result objects, got dict"),
    ("mlperf_inference", "s.json", inference_with(**{"a#": ...}).encode(), r"f: \[0\]: missing key 'a#'"),
    ("mlperf_inference", "s.json", inference_with(Scenario=...).encode(), r"f: \[0\]: missing key 'Scenario'"),
    ("mlperf_inference", "s.json", inference_with(Performance_Units=...).encode(),
     r"f: \[0\]: missing key 'Performance_Units'"),
    ("mlperf_inference", "s.json", b"[1, 2]", r"f: \[0\]: expected an object with key 'ID', got int"),
    ("mlperf_training", "t.csv", b"", r"f: empty CSV, expected a header line"),
    ("mlperf_training", "t.csv", b"division,system\nclosed,x\n",
     r"f: no '<benchmark>:time_to_train' column; not a summarizer detailed output"),
    ("mlperf_training", "t.csv", (HEADER + "\n" + ",".join(["x"] * (len(TRAINING_HEADER) + 1)) + "\n").encode(),
     rf"f: line 2: {len(TRAINING_HEADER) + 1} fields, expected {len(TRAINING_HEADER)}"),
    # a short row too: its cells may have moved left, and the missing ones would read as figures left out
    ("mlperf_training", "t.csv", (HEADER + "\n" + ",".join(["x"] * (len(TRAINING_HEADER) - 1)) + "\n").encode(),
     rf"^f: line 2: {len(TRAINING_HEADER) - 1} fields, expected {len(TRAINING_HEADER)} \(the header's\)$"),
    ("mlperf_training", "t.csv",
     (HEADER + "\n" + ",".join(["closed"] + [""] * (len(TRAINING_HEADER) - 1)) + "\n").replace(
         "accelerator_model_name", "accelerator").encode(),
     (r"^f: unknown column\(s\) 'accelerator': expected the result summarizer's `<benchmark>:<figure>` .* or one "
      r"of its system columns \(division, .*accelerator_model_name")),
    # the column left out altogether: each row is missing it
    ("mlperf_training", "t.csv",
     (HEADER.replace("accelerator_model_name,", "") + "\n" + ",".join(["closed"] + [""] * (len(TRAINING_HEADER) - 2))
      + "\n").encode(),
     r"^f: row 2: missing key 'accelerator_model_name'"),
    ("mlperf_training", "t.json", b'{"bert": 5.0}', r"f: expected a JSON list of systems, got dict"),
    ("mlperf_training", "t.xlsx", b"PK", r"f: unknown file type '.xlsx'; expected .csv \(detailed\) or .json"),
    ("benchmark_runs", "r.json", b"[]", r"f: expected a vLLM benchmark_serving result object, got list"),
    ("benchmark_runs", "r.json", b'{"completed": 1}', r"f: missing key 'num_prompts'"),
    ("benchmark_runs", "r.csv", b"accelerator,chips\ninferentia2,1\n", r"f: missing column\(s\) model, precision"),
    ("benchmark_runs", "r.csv",
     b"kind,accelerator,chips,model,precision,workload,time_to_train_minutes,source,date\n"
     b"training,h100-sxm-80gb,8,llama-2-70b,bf16,llama2-70b-lora-finetune,27.0,our run\n",
     r"^f: line 2: 8 fields, expected 9 \(the header's\)$"),
    ("benchmark_runs", "r.txt", b"x", r"f: unknown file type '.txt'; expected .json \(vLLM\) or .csv \(generic\)"),
    ("benchmark_runs", "r.csv", b"accelerator,chips,model,chips\nh100-sxm-80gb,8,llama-3.1-8b,16\n",
     r"^f: line 1 \(header\): column 'chips' appears twice \(columns 2 and 4\); expected each column once$"),
    ("aws_spot", "s.json", b"[]", r"f: expected a describe_spot_price_history response object"),
    ("aws_spot", "s.json", b'{"NextToken": ""}', r"f: missing key 'SpotPriceHistory'"),
    # a price point without its zone or time is quarantined (tests/test_source_aws_live.py); one that is no object,
    # or whose zone is no text, is no price point
    ("aws_spot", "s.json", b'{"SpotPriceHistory": ["us-east-1a"]}',
     r"f: SpotPriceHistory\[0\]: expected an object, got str 'us-east-1a'"),
    ("aws_spot", "s.json", b'{"SpotPriceHistory": [{"AvailabilityZone": ["us-east-1a"], "SpotPrice": "1.0"}]}',
     r"f: SpotPriceHistory\[0\].AvailabilityZone: expected a string, got list \['us-east-1a'\]"),
    # last wins, in json.loads: 3.85 would land for 38.50
    ("aws_spot", "s.json", (b'{"SpotPriceHistory": [{"AvailabilityZone": "us-east-1a", "SpotPrice": "38.5", '
                            b'"SpotPrice": "3.85", "Timestamp": "2026-11-30T00:00:00Z"}]}'),
     (r"^f: line 1 column 79: key 'SpotPrice' appears twice in one object \(first at line 1 column 58\); expected "
      r"each key once$")),
    ("aws_offer_file", "index.csv", b"", r"f: empty file, expected an AWS offer file \(5 metadata lines"),
    ("aws_offer_file", "index.csv", b'"SKU","OfferTermCode"\n"A","B"\n',
     r'f: not an AWS offer file: line 1 must be "FormatVersion","v1.0"'),
    ("aws_offer_file", "index.csv",
     b'"FormatVersion","v1.0"\n"Disclaimer","x"\n"Publication Date","2026-09-10T00:00:00Z"\n"Version","1"\n'
     b'"OfferCode","AmazonEC2"\n"SKU","OfferTermCode"\n"A","B"\n',
     r"f: line 6 \(header\): missing required column\(s\)"),
    # the keys found are data, quoted as data is (a fuzzed file's 1,000-character key made a 2,000-character message)
    ("aws_offer_file", "index.csv",
     (b'"FormatVersion","v1.0"\n"Disclaimer","x"\n"' + b"k" * 1000 + b'","2026-09-10T00:00:00Z"\n"Version","1"\n'
      b'"OfferCode","AmazonEC2"\n"SKU","OfferTermCode"\n"A","B"\n'),
     r"^f: no \"Publication Date\" metadata line in lines 1-5 \(found 'FormatVersion', 'Disclaimer', 'k{200}'\.\.\. "
     r"\(1,000 characters\), 'Version', 'OfferCode'\)$"),
    ("price_sheet", "p.yaml", b"entries:\n  - {kind: rebate}\n",
     r"f: entries\[0\].kind: 'rebate', expected one of discount, on_prem, quote"),
    ("price_sheet", "p.yaml", b"entries:\n  - {kind: quote, usd_per_hour: thirty}\n",
     r"f: entries\[0\].usd_per_hour: 'thirty' is not a number"),
    ("price_sheet", "p.csv", b"kind,cloud\nquote,aws,extra\n", r"f: line 2: 3 fields, expected 2"),
    ("price_sheet", "p.csv", b"kind,cloud,region\nquote,aws\n", r"^f: line 2: 2 fields, expected 3 \(the header's\)$"),
    ("price_sheet", "p.json", b"{}", r"f: a price sheet is a .csv or .yaml file"),
    # a review's findings: a CSV saved as UTF-16 without a byte-order mark decodes as UTF-8 (NUL beside each letter)
    # and was "line 3: 1 fields, expected 6"; classic Mac line ends were Python's "new-line character seen in
    # unquoted field - do you need to open the file in universal-newline mode?"
    ("price_sheet", "p.csv", "kind,cloud\nquote,aws\n".encode("utf-16-le"),
     r"^f: line 1: not UTF-8 text \(byte 1 is a NUL; UTF-16 or UTF-32 writes NUL bytes; expected UTF-8: save the file "
     r"as UTF-8\)$"),
    ("price_sheet", "p.csv", b"kind,cloud\rquote,aws\r",
     r"^f: line 1: its lines end in a bare carriage return \(as classic Mac OS wrote\); expected LF or CRLF line ends$"),
    ("aws_pricing", "p.json", AWS_OK.encode("utf-16-le"), r"^f: line 1: not UTF-8 text \(byte 1 is a NUL; UTF-16"),
    ("bedrock_pricing", "b.json", b'{"FormatVersion": "aws_v1"}', r"f: missing key 'PriceList'"),
    ("bedrock_pricing", "b.json", b'{"PriceList": ["{\\"product\\": {}}"]}',
     r"f: PriceList\[0\].product: missing key 'attributes'"),
    ("bedrock_pricing", "b.json", bedrock_with_inference_type(["Input tokens"]),
     r"^f: PriceList\[0\]\.product\.attributes\.inferenceType: expected str, got list \['Input tokens'\]$"),
    ("azure_model_prices", "z.json", b'{"Items": [{"retailPrice": 1.0}]}', r"f: Items\[0\]: missing key 'meterName'"),
    ("vertex_model_prices", "v.json", b'{"skus": [{"description": "Llama Input Tokens"}]}',
     r"f: skus\[0\]: missing key 'category'"),
    ("aws_instance_types", "i.json", b'{"InstanceTypes": [{"VCpuInfo": {"DefaultVCpus": 8}}]}',
     r"f: InstanceTypes\[0\]: missing key 'InstanceType'"),
    ("azure_skus", "k.json", b'{"value": [{"name": "Standard_ND96isr_H100_v5"}]}',
     r"f: value\[0\]: missing key 'resourceType'"),
    ("azure_skus", "k.json", json.dumps({"value": [{"resourceType": "virtualMachines", "name": "Standard_ND96isr_H100_v5",
                                                    "capabilities": [{"name": "GPUs", "value": "8"},
                                                                     {"name": "GPUs", "value": "16"}]}]}).encode(),
     (r"^f: value\[0\]\.capabilities\[1\]\.name: 'GPUs' again, first given at capabilities\[0\] \(expected "
      r"each capability once\)$")),
    ("gcp_machine_types", "m.json", b'{"items": {"zones/us-central1-a": {"machineTypes": [{"guestCpus": 8}]}}}',
     r"f: items\['zones/us-central1-a'\]\.machineTypes\[0\]: missing key 'name'"),
]


@pytest.mark.parametrize(("kind", "name", "content", "message"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_malformed_input_names_file_and_place(tmp_path, kind, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(SourceFormatError, match=message):
        SOURCE_KINDS[kind].read_file(path, "f")


def test_a_utf8_byte_order_mark_is_read_past_in_json_as_in_csv_and_yaml(tmp_path):
    """A review's finding: a JSON file that opens with a UTF-8 byte-order mark (as some editors save it) was refused
    ("Unexpected UTF-8 BOM (decode using utf-8-sig)") where a CSV or YAML file with one is read."""
    path = tmp_path / "p.json"
    path.write_bytes(b"\xef\xbb\xbf" + AWS_OK.encode())
    without = tmp_path / "q.json"
    without.write_bytes(AWS_OK.encode())
    rows = SOURCE_KINDS["aws_pricing"].read_file(path, "f")
    assert len(rows) == 1 and rows == SOURCE_KINDS["aws_pricing"].read_file(without, "f")


def test_the_corpus_covers_every_source_kind_with_at_least_30_inputs():
    assert len(CASES) >= 30
    assert {c[0] for c in CASES} == set(SOURCE_KINDS)


SOURCE_OF_KIND = {"aws_pricing": "aws_pricing", "aws_spot": "aws_spot", "aws_offer_file": "aws_offer_file",
                  "azure_retail": "azure_retail", "gcp_billing": "gcp_billing", "price_sheet": "price_sheet",
                  "mlperf_inference": "mlperf_inference_snapshot", "mlperf_training": "mlperf_training_snapshot",
                  "benchmark_runs": "published_benchmarks", "bedrock_pricing": "bedrock_pricing",
                  "azure_model_prices": "azure_model_prices", "vertex_model_prices": "vertex_model_prices",
                  "aws_instance_types": "aws_instance_types", "azure_skus": "azure_skus",
                  "gcp_machine_types": "gcp_machine_types"}


@pytest.mark.parametrize("kind", sorted(SOURCE_KINDS))
def test_a_malformed_file_writes_nothing_and_only_its_source_is_stale(tmp_path, fresh_db, catalog, kind):
    """Through the run's own steps: the source that reads a malformed file fails as a whole (no partial rows) and
    is stale; the good file of another source lands beside it."""
    from conftest import AS_OF

    from flows import pipeline
    from flows.land import land_all
    from flows.source_batches import failed_batch, fetch_source

    _, name, content, message = next(c for c in CASES if c[0] == kind)
    path = tmp_path / name
    path.write_bytes(content)
    source_id = SOURCE_OF_KIND[kind]
    run_catalog = pipeline.with_source_files(catalog, {source_id: [str(path)]}, AS_OF)
    with pytest.raises(SourceFormatError, match=name):
        fetch_source(run_catalog, source_id)
    failed = failed_batch(run_catalog, source_id, SourceFormatError(f"{path}: broken"))
    good_id = "gcp_billing" if kind != "gcp_billing" else "aws_spot"
    loads = {load.source_id: load for load in land_all(
        fresh_db, run_catalog, [failed, fetch_source(run_catalog, good_id)], "run-1", AS_OF)}
    assert (loads[source_id].status, loads[source_id].rows_in) == ("stale", 0)
    assert loads[good_id].status == "landed" and loads[good_id].rows_landed > 0
    table = SOURCE_KINDS[kind].TABLE
    assert fresh_db.execute(f"select count(*) from raw.{table} where source_id = ?", [source_id]).fetchall() == [(0,)]
