"""AWS EC2 bulk offer file (`index.csv`, public, no credentials) -> rows of raw.aws_pricing.

The file is what `https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/{region}/index.csv`
serves: 5 metadata lines (`"FormatVersion","v1.0"`, Disclaimer, Publication Date, Version, OfferCode), a header
line, then one line per price dimension (a SKU's on-demand hourly price, each reserved term's hourly price and
upfront fee, ...). A region's file is hundreds of MB (us-east-1: several GB), so DuckDB scans it and only the rows of
accelerated instances (instance family "GPU instance" or "Machine Learning ASIC Instances") and of the CPU baseline
types (_aws.CPU_BASELINE_INSTANCE_TYPES), product family "Compute Instance", every term type, are kept: as one Arrow
table whose columns are the keys of `aws_pricing.price_rows` (`read_table`, what a run reads), or as a dict a row
(`read_file`, the same rows).

Columns are read by name: their order changes between versions. "NA" is a value ("Pre Installed S/W" = "NA" means
no pre-installed software) and stays the string "NA"; only empty fields become None.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import logging
import re
import tempfile
import time
from collections.abc import Callable
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from flows import cache, duckdb_settings
from flows.redaction import redact_text, redact_url
from flows.sources._aws import CPU_BASELINE_INSTANCE_TYPES
from flows.sources._common import (
    GIB,
    SourceFormatError,
    SourceLimits,
    check_number_option,
    excerpt,
    name_list,
    to_float,
)
from flows.sources._concurrency import CloudSlots, in_order
from flows.sources._download import download

TABLE = "aws_pricing"
MAX_NAMED = 10  # header columns a message names (they are the file's data)
SPLIT_BY = "regions"  # the live options list whose items are fetched independently: a fan-out task each
CLOUD = "aws"  # whose fetch_concurrency slots its regions hold

log = logging.getLogger(__name__)

# row key -> offer-file column, in the order aws_pricing.price_rows yields its keys
PRODUCT_FIELDS = {
    "instance_type": "Instance Type",
    "region_code": "Region Code",
    "location": "Location",
    "instance_family": "Instance Family",
    "operating_system": "Operating System",
    "license_model": "License Model",
    "pre_installed_sw": "Pre Installed S/W",
    "tenancy": "Tenancy",
    "capacity_status": "CapacityStatus",
    "market_option": "MarketOption",
    "usage_type": "usageType",
    "vcpu": "vCPU",
    "gpu": "GPU",
}
PRICE_FIELDS = {
    "sku": "SKU",
    "term_type": "TermType",
    "offer_term_code": "OfferTermCode",
    "lease_contract_length": "LeaseContractLength",
    "purchase_option": "PurchaseOption",
    "offering_class": "OfferingClass",
    "rate_code": "RateCode",
    "unit": "Unit",
    "price_text": "PricePerUnit",
    "currency": "Currency",
    "description": "PriceDescription",
}
FIELDS = PRODUCT_FIELDS | PRICE_FIELDS
# every header column read_file needs: the fields above and the product family it filters on
REQUIRED_COLUMNS = (*FIELDS.values(), "Product Family")

ACCELERATED_FAMILIES = ("GPU instance", "Machine Learning ASIC Instances")
# an instance's product family; the bare-metal types (c8i.metal-48xl, one of the CPU baselines) have their own
PRODUCT_FAMILIES = ("Compute Instance", "Compute Instance (bare metal)")
METADATA_KEYS = ("FormatVersion", "Disclaimer", "Publication Date", "Version", "OfferCode")
HEADER_LINE = len(METADATA_KEYS) + 1  # 1-based line number of the header; data starts on the next line

DEFAULT_ENDPOINT = "https://pricing.us-east-1.amazonaws.com"
OFFER_PATH = "/offers/v1.0/aws/AmazonEC2/current/{region}/index.csv"
LIVE_OPTIONS = {"regions", "endpoint", "timeout_s"}
MAX_TIMEOUT_S = 3600  # the most `timeout_s` may wait for one read of a download before a retry: an hour
# A region's offer file is hundreds of MB (us-east-1 several GB): DuckDB scans it from disk, never whole in memory.
DEFAULT_LIMITS = SourceLimits(max_file_bytes=8 * GIB)


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _sql_name(value: str) -> str:
    return '"' + value.replace('"', '""') + '"'


def read_preamble(path: Path, label: str, limits: SourceLimits = DEFAULT_LIMITS) -> tuple[dict[str, str], list[str]]:
    """The 5 metadata lines as {key: value} and the header's column names; SourceFormatError if the file is not
    an offer file (names `label`, the line and what was expected)."""
    try:
        size = path.stat().st_size
        if size > limits.max_file_bytes:
            raise limits.exceeded(label, "max_file_bytes", f"the file ({size:,} bytes) is larger")
        with path.open("rb") as f:
            raw = [f.readline(limits.max_line_bytes + 2) for _ in range(HEADER_LINE)]  # room for "\r\n"
    except OSError as exc:
        raise SourceFormatError(f"{label}: cannot be read ({exc.strerror})") from None
    for n, data in enumerate(raw, start=1):
        if len(data.rstrip(b"\r\n")) > limits.max_line_bytes:
            raise limits.exceeded(label, "max_line_bytes", f"line {n} is longer")
    if not raw[0]:
        raise SourceFormatError(f"{label}: empty file, expected an AWS offer file ({len(METADATA_KEYS)} metadata "
                                f"lines starting with \"FormatVersion\", a header, rows)")
    lines = []
    for n, data in enumerate(raw, start=1):
        if not data:
            break
        try:
            text = data.decode("utf-8-sig" if n == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise SourceFormatError(f"{label}: line {n}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
        try:
            lines.append(next(csv.reader([text.rstrip("\r\n")]), []))
        except csv.Error as exc:  # e.g. a bare carriage return inside a line
            raise SourceFormatError(f"{label}: line {n}: not a CSV line ({exc})") from None
    if not lines[0] or lines[0][0] != "FormatVersion":
        raise SourceFormatError(f"{label}: not an AWS offer file: line 1 must be \"FormatVersion\",\"v1.0\", "
                                f"got {','.join(lines[0])[:60]!r}")
    if len(lines) < HEADER_LINE:
        raise SourceFormatError(f"{label}: ends after {len(lines)} lines, expected {len(METADATA_KEYS)} metadata "
                                f"lines and a header line before the rows")
    metadata = {}
    for n, fields in enumerate(lines[:-1], start=1):
        if len(fields) != 2:
            raise SourceFormatError(
                f"{label}: line {n}: expected {len(METADATA_KEYS)} metadata lines (\"key\",\"value\") before the "
                f"header, got {len(fields)} fields (is a metadata line missing?)")
        metadata[fields[0]] = fields[1]
    if "Publication Date" not in metadata:
        raise SourceFormatError(f"{label}: no \"Publication Date\" metadata line in lines 1-{len(METADATA_KEYS)} "
                                f"(found {', '.join(excerpt(key) for key in metadata)})")
    header = lines[-1]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise SourceFormatError(f"{label}: line {HEADER_LINE} (header): missing required column(s) "
                                f"{', '.join(repr(c) for c in missing)}")
    duplicates = sorted({c for c in header if header.count(c) > 1})
    if duplicates:
        named = ", ".join(excerpt(c) if len(c) > 60 else c for c in duplicates[:MAX_NAMED])
        more = f" and {len(duplicates) - MAX_NAMED:,} more" if len(duplicates) > MAX_NAMED else ""
        raise SourceFormatError(f"{label}: line {HEADER_LINE} (header): duplicate column(s) {named}{more}")
    return metadata, header


def _scan_query(path: Path, header: list[str], region: str | None, max_line_bytes: int) -> str:
    """SQL that numbers every data line (in file order) and keeps the accelerated and CPU baseline Compute Instance
    ones."""
    columns = "{" + ", ".join(f"{_sql_text(c)}: 'VARCHAR'" for c in header) + "}"
    wanted = ", ".join(_sql_name(c) for c in REQUIRED_COLUMNS)
    fields = ", ".join(_sql_name(c) for c in FIELDS.values())
    families = ", ".join(_sql_text(f) for f in ACCELERATED_FAMILIES)
    products = ", ".join(_sql_text(f) for f in PRODUCT_FAMILIES)
    cpu_types = ", ".join(_sql_text(t) for t in CPU_BASELINE_INSTANCE_TYPES)
    region_filter = f" and {_sql_name('Region Code')} = {_sql_text(region)}" if region else ""
    # The header is parsed above and passed as `columns`: no sniffing, strict parsing, a ragged line is an error. An
    # empty field, quoted ("") or not, is NULL ("NA" is a value and stays).
    # row_number() over () is a streaming window: it sees the scan in file order and the filter stays above it.
    return (
        f"with numbered as (select row_number() over () + {HEADER_LINE} as line_no, {wanted} "
        f"from read_csv({_sql_text(str(path))}, skip={HEADER_LINE}, header=false, auto_detect=false, "
        f"columns={columns}, all_varchar=true, delim=',', quote='\"', escape='\"', strict_mode=true, "
        f"encoding='utf-8', allow_quoted_nulls=true, max_line_size={int(max_line_bytes)})) "
        f"select line_no, {fields} from numbered where {_sql_name('Product Family')} in ({products}) "
        f"and ({_sql_name('Instance Family')} in ({families}) or {_sql_name('Instance Type')} in ({cpu_types}))"
        f"{region_filter} order by line_no"
    )


def _first_non_utf8_line(path: Path, chunk_bytes: int = 1 << 20) -> int | None:
    """The 1-based number of the first line of `path` that is not UTF-8 text, or None; read in chunks (only after
    DuckDB's scan failed, to name the line its error does not)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    lines_before = 0
    with path.open("rb") as handle:
        while chunk := handle.read(chunk_bytes):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                return lines_before + chunk.count(b"\n", 0, max(exc.start, 0)) + 1
            lines_before += chunk.count(b"\n")
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return lines_before + 1
    return None


def _format_error(label: str, header: list[str], exc: duckdb.Error, limits: SourceLimits) -> SourceFormatError:
    """DuckDB's CSV error as a SourceFormatError naming the file, the line and the problem."""
    message = str(exc)
    line = re.search(r"CSV Error on Line: (\d+)", message)
    where = f"{label}: line {line.group(1)}" if line else label
    if "Maximum line size" in message:
        return limits.exceeded(label, "max_line_bytes", f"line {line.group(1) if line else '?'} is longer")
    if "Invalid unicode" in message:
        return SourceFormatError(f"{where}: not UTF-8 text")
    counts = re.search(r"Expected Number of Columns: (\d+) Found: (\d+)", message)
    if counts:
        expected, found = int(counts.group(1)), int(counts.group(2))
        found_text = f"more than {expected}" if found > expected else str(found)
        return SourceFormatError(f"{where}: {found_text} fields, expected {len(header)} (the header's)")
    detail = next((s.strip() for s in message.splitlines() if s.strip()), message)
    return SourceFormatError(f"{where}: not a valid offer-file CSV line ({detail[:200]})")


def read_file(path: Path, label: str, region: str | None = None, *,
              limits: SourceLimits = DEFAULT_LIMITS) -> list[dict]:
    """The accelerated-instance price rows of one offer file, one per price dimension, as dicts (`read_table`'s rows);
    `region`, when given, keeps only that Region Code's rows. `source_ref` is `"{label}: line N"`, N the 1-based line
    in the file. N counts CSV records, each as one line: a quoted field holding a line break (the scan accepts one)
    would put the later rows' N that many lines early. Counting the line breaks of every field of every row to mend
    that would slow the scan of every file, for a case not seen in AWS's files."""
    return read_table(path, label, region, limits=limits).to_pylist()


def read_table(path: Path, label: str, region: str | None = None, *,
               limits: SourceLimits = DEFAULT_LIMITS) -> pa.Table:
    """`read_file`'s rows as one Arrow table, its columns in their keys' order (text as Arrow strings, an empty field
    null, `price_usd` a float64 or null): DuckDB's scan handed over as Arrow and converted column by column, not a
    Python object a field. On `make bench`'s 1e6-line file (51,034 rows kept) the dicts took 0.4 s to make and
    SourceBatch.of_rows 0.9 s to type, and ~180 MiB at their peak (stop 62, measured).

    Why DuckDB's scan (stop 69, measured on that file): the query takes ~1.5 s, against 0.61 s for the bench's bare
    count, as it reads the 25 columns it keeps, not 3. Polars 2.1's `scan_csv` read the same columns with the filter
    and a row index in 0.70 s, but it fills the missing fields of a line with too few with nulls and has no option
    to refuse one (`missing_columns="raise"` is about a file's header), so a ragged file would pass where
    strict_mode refuses it. pyarrow.csv's streaming reader, strict, took 1.4 s."""
    metadata, header = read_preamble(path, label, limits)
    started = time.monotonic()
    con = duckdb.connect(config=duckdb_settings.config(preserve_insertion_order=True))
    try:
        scanned = con.execute(_scan_query(path, header, region, limits.max_line_bytes)).to_arrow_table()
    except duckdb.OutOfMemoryException as exc:  # the machine's or HWEVAL_DUCKDB_MEMORY_LIMIT's doing, not the file's
        raise duckdb_settings.out_of_memory(f"{label}: scanning the offer file", exc) from None
    except duckdb.Error as exc:
        bad_line = None if "Invalid unicode" in str(exc) else _first_non_utf8_line(path)
        if bad_line is not None:  # DuckDB 1.5 reports some invalid bytes as an internal error without the line
            raise SourceFormatError(f"{label}: line {bad_line}: not UTF-8 text") from None
        raise _format_error(label, header, exc, limits) from None
    finally:
        con.close()
    publication_date = metadata["Publication Date"]
    table = _rows_table(scanned, label, publication_date)
    if region and not table.num_rows:
        log.warning("%s: no accelerated Compute Instance rows for region %s (is it that region's offer file?)",
                    label, region)
    log.info("%s: kept %d accelerated-instance price rows (published %s) in %.1f s",
             label, table.num_rows, publication_date, time.monotonic() - started)
    return table


def _rows_table(scanned: pa.Table, label: str, publication_date: str) -> pa.Table:
    """The scan's columns (line_no, then FIELDS' offer-file columns in their order) as the rows' columns, in the order
    `aws_pricing.price_rows` yields its keys; one chunk a column."""
    def text(key: str) -> pa.Array:  # an empty field is already null (the scan's allow_quoted_nulls)
        return scanned.column(FIELDS[key]).combine_chunks().cast(pa.string())

    rows = scanned.num_rows
    columns = {key: text(key) for key in PRODUCT_FIELDS}
    line_no = scanned.column("line_no").combine_chunks().cast(pa.string())
    columns["source_ref"] = pc.binary_join_element_wise(f"{label}: line ", line_no, "")
    columns["sku"] = text("sku")
    columns["publication_date"] = pa.repeat(pa.scalar(publication_date, pa.string()), rows)
    columns |= {key: text(key) for key in PRICE_FIELDS if key not in ("sku", "description")}
    # a price in another currency (the China regions' files are in CNY) keeps its figure and currency: the suite
    # quarantines it (currency_usd); it is never read as USD. to_float's reading, one value of one column at a time
    columns["price_usd"] = pa.array([to_float(text_) for text_ in columns["price_text"].to_pylist()], pa.float64())
    columns["description"] = text("description")
    return pa.table(columns)


def offer_file_url(region: str, endpoint: str = DEFAULT_ENDPOINT) -> str:
    """Where the public EC2 offer file of `region` is served."""
    return endpoint.rstrip("/") + OFFER_PATH.format(region=region)


@lru_cache(maxsize=1)
def _reading_code() -> str:
    """Digest of what makes a download's kept rows: this module (the scan, its filter and columns), the modules it
    reads rows with, flows/redaction.py (every row's source_ref is the URL as it redacts it), and DuckDB's and
    pyarrow's versions. Another digest is another cache entry: nothing kept by other code is read."""
    here = Path(__file__)
    modules = [here, here.with_name("_aws.py"), here.with_name("_common.py"), here.parent.parent / "redaction.py"]
    return hashlib.sha256(b"".join(path.read_bytes() for path in modules)
                          + f"{version('duckdb')} {version('pyarrow')}".encode()).hexdigest()


def _download_key(url: str, region: str, limits: SourceLimits) -> str:
    """The download cache's key for `url`'s rows read for `region`: the code and the limits that read them too (rows
    kept under looser limits are not read under tighter ones)."""
    return (f"aws_offer_file {url} {region} {_reading_code()} max_file_bytes={limits.max_file_bytes} "
            f"max_line_bytes={limits.max_line_bytes}")


def check_live_options(options: dict) -> None:
    """SourceFormatError for a `live:` block this source cannot use (also run by `hweval check`)."""
    unknown = sorted(set(options) - LIVE_OPTIONS)
    if unknown:
        raise SourceFormatError(f"aws_offer_file options: unknown key(s) {', '.join(map(repr, unknown))}; "
                                f"allowed: {', '.join(sorted(LIVE_OPTIONS))}")
    name_list(options, "regions", "aws_offer_file options", required=True, hint=" (region codes, e.g. us-east-1)")
    check_number_option(options, "timeout_s", MAX_TIMEOUT_S, "aws_offer_file",
                        "MAX_TIMEOUT_S: seconds one read of a download may wait")


def fetch_live(options: dict, *, limits: SourceLimits = DEFAULT_LIMITS,
               sleep: Callable[[float], None] = time.sleep, slots: CloudSlots | None = None) -> list[dict]:
    """`fetch_live_table`'s rows, as dicts."""
    return fetch_live_table(options, limits=limits, sleep=sleep, slots=slots).to_pylist()


def fetch_live_table(options: dict, *, limits: SourceLimits = DEFAULT_LIMITS,
                     sleep: Callable[[float], None] = time.sleep, slots: CloudSlots | None = None) -> pa.Table:
    """Download each region's public offer file to a temporary file, read it with `read_table` (label = the URL)
    and delete it; the regions' rows as one Arrow table. options: `regions` (list of region codes), optional
    `endpoint` and `timeout_s`. With `slots`, regions are fetched side by side, each holding one of AWS's slots; rows
    come in region order either way.

    The temporary files go to the default temp directory (TMPDIR): us-east-1's file needs several GB there, and as
    many region files as AWS's `fetch_concurrency` lie there at once.

    Each region's GET is conditional once a download of it was kept (flows/cache.py, `downloads/`): with the ETag and
    Last-Modified its server sent, and on HTTP 304 its kept rows are read instead, nothing downloaded or scanned.
    Kept under `_download_key`: rows read by other code or under other limits are never used.
    """
    check_live_options(options)
    endpoint = options.get("endpoint", DEFAULT_ENDPOINT)
    timeout_s = float(options.get("timeout_s", 60.0))

    def region_table(region: str) -> pa.Table:
        url = offer_file_url(region, endpoint)
        shown = redact_text(redact_url(url))
        key = _download_key(url, region, limits)
        kept = cache.kept_download(key)
        with tempfile.NamedTemporaryFile(prefix=f"aws-offer-{region}-", suffix=".csv", delete=False) as tmp:
            target = Path(tmp.name)
        try:
            got = download(url, target, timeout_s=timeout_s, sleep=sleep, limits=limits,
                           validators=kept[0] if kept else None)
            if got.not_modified:
                table = kept[1]
                log.info("%s: unchanged on the server since it was last downloaded: its %d kept rows are read from "
                         "the download cache (flows/cache.py), nothing downloaded or scanned", shown, table.num_rows)
            else:
                table = read_table(target, shown, region, limits=limits)
                if got.validators:
                    cache.keep_download(key, got.validators, table)
        finally:
            target.unlink(missing_ok=True)
        log.info("%s: %d rows kept", shown, table.num_rows)
        return table

    return pa.concat_tables(in_order(region_table, name_list(options, "regions", "aws_offer_file options",
                                                             required=True), slots))
