"""The user's price sheet: private quotes, discounts off public prices and on-prem systems, priced by hand."""

from __future__ import annotations

import datetime as dt
import textwrap

import pytest
from builders import aws_page, aws_product
from conftest import AS_OF, CATALOGS

from flows import land as landing  # the module, beside the helpers named land and land_all
from flows import transform
from flows.source_batches import SourceBatch
from flows.sources import aws_pricing, price_sheet
from flows.sources._common import SourceFormatError


def land(con, catalog, source_id: str, kind: str, table: str, rows: list[dict], run_id: str = "run-1"):
    rows = [r | {"row_no": i, "source_id": source_id, "data_as_of": AS_OF} for i, r in enumerate(rows)]
    return SourceBatch.of_rows(source_id, kind, table, ["test"], AS_OF, rows)


def land_all(con, catalog, batches):
    return {load.source_id: load for load in landing.land_all(con, catalog, batches, "run-1", AS_OF)}


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_the_example_sheet_prices_quotes_a_discount_and_an_on_prem_system(fresh_db, catalog):
    rows = price_sheet.read_file(CATALOGS / "price_sheet.example.yaml", "price_sheet.example.yaml")
    assert [r["entry_kind"] for r in rows] == ["quote", "quote", "discount", "on_prem"]
    aws = aws_pricing.rows_from_pages([("p", aws_page(aws_product("p5.48xlarge", "55.0400000000")))])
    azure_rows = [{"arm_region_name": "eastus", "location": "US East", "arm_sku_name": "Standard_ND96isr_H100_v5",
                   "sku_name": "ND96isr H100 v5", "meter_name": "ND96isr H100 v5",
                   "product_name": "Virtual Machines NDsr H100 v5 Series", "service_name": "Virtual Machines",
                   "price_type": "Consumption", "unit_of_measure": "1 Hour", "currency_code": "USD",
                   "reservation_term": None, "effective_start_date": "2024-09-01T00:00:00Z", "sku_id": "s",
                   "meter_id": "m", "is_primary_meter_region": True, "retail_price": 98.32, "unit_price": 98.32,
                   "source_ref": "az"}]
    loads = land_all(fresh_db, catalog, [
        land(fresh_db, catalog, "aws_pricing", "aws_pricing", "aws_pricing", aws),
        land(fresh_db, catalog, "azure_retail", "azure_retail", "azure_retail", azure_rows),
        land(fresh_db, catalog, "price_sheet", "price_sheet", "price_sheet", rows),
    ])
    assert (loads["price_sheet"].rows_landed, loads["price_sheet"].rows_quarantined) == (4, 0)
    transform.build_models(fresh_db, "run-1", AS_OF)
    offers = {r[0]: r[1:] for r in fresh_db.execute(
        "select offer_id, pricing_term, round(usd_per_hour, 4), accelerator_id, accelerator_count "
        "from intermediate.int_offers_priced order by offer_id").fetchall()}
    # quote: 30.00 USD/h + 50,000 USD upfront over 12 months x 730 h = 30 + 50,000 / 8,760 = 35.7078
    assert offers["aws:us-east-1:p5.48xlarge:private:illustrative-a-1-year-private-pricing-agreement-12-month-term"] == (
        "private", 35.7078, "h100-sxm-80gb", 8)
    # a quote for a box the catalog does not list: its own hardware, at its plain 19.92 USD/h
    assert offers["neocloud:us-west:8x-h100-sxm-box:private:illustrative-a-neocloud-s-on-demand-list-price-for-an-8-x-"
                  "h100-sxm-box"] == ("private", 19.92, "h100-sxm-80gb", 8)
    # discount: 15% off Azure's public on-demand 98.32 = 98.32 x 0.85 = 83.572
    assert offers["azure:eastus:Standard_ND96isr_H100_v5:private:on-demand-less-15.0"] == (
        "private", 83.572, "h100-sxm-80gb", 8)
    # on-prem: 320,000 / (48 x 730) + 10.2 kW x 1.35 x 0.11 + 2,000 / 730
    #        = 9.132420 + 1.514700 + 2.739726 = 13.386846
    assert offers["on_prem:home-dc:dgx-h100-01:owned"] == ("owned", 13.3868, "h100-sxm-80gb", 8)
    # the public prices stay as they are, beside the private ones
    assert offers["aws:us-east-1:p5.48xlarge:on_demand"][1] == 55.04
    assert offers["azure:eastus:Standard_ND96isr_H100_v5:on_demand"][1] == 98.32


def test_a_csv_sheet_reads_like_the_yaml_one(tmp_path):
    path = write(tmp_path, "prices.csv", """\
        kind,cloud,region,instance_type,usd_per_hour,source,site,name,accelerator,accelerator_count,capex_usd,life_months,power_kw,usd_per_kwh,pue
        quote,gcp,us-central1,a3-highgpu-8g,30.5,broker quote 42,,,,,,,,,
        on_prem,,,,,PO 17,lab,box-1,l40s-48gb,4,60000,36,2.1,0.2,1.2
        """)
    rows = price_sheet.read_file(path, "prices.csv")
    assert [(r["entry_kind"], r["cloud"], r["region"], r["instance_type"], r["usd_per_hour"], r["source_ref"])
            for r in rows] == [
        ("quote", "gcp", "us-central1", "a3-highgpu-8g", 30.5, "prices.csv: line 2"),
        ("on_prem", "on_prem", "lab", "box-1", None, "prices.csv: line 3")]
    assert rows[1]["accelerator_count"] == 4.0 and rows[1]["quoted_source"] == "PO 17"


@pytest.mark.parametrize("text, message", [
    ("entries:\n  - {kind: rebate, cloud: aws}\n",
     r"s.yaml: entries\[0\].kind: 'rebate', expected one of discount, on_prem, quote"),
    ("entries:\n  - {kind: quote, cloud: aws, usd_per_hr: 3}\n",
     r"s.yaml: entries\[0\]: unknown field\(s\) usd_per_hr \(expected some of: kind, cloud"),
    ("entries:\n  - {kind: quote, cloud: aws, usd_per_hour: thirty}\n",
     r"s.yaml: entries\[0\].usd_per_hour: 'thirty' is not a number"),
    ("quotes: []\n", r"s.yaml: expected a mapping with an `entries:` list"),
    # a pasted per-GPU price after the box price: the last would win, at a tenth of the quote
    ("entries:\n  - kind: quote\n    usd_per_hour: 19.92\n    source: q\n    usd_per_hour: 1.992\n",
     r"^s.yaml: not valid YAML at line 5 column 5: key 'usd_per_hour' appears twice \(first on line 3\)$"),
    ("entries:\n  - {kind: discount, cloud: azure, region: [eastus, westus3], percent_off: 15}\n",
     (r"^s.yaml: entries\[0\]\.region: expected one value, got list \['eastus', 'westus3'\] \(for several, write "
      r"one entry each\)$")),
    ("entries:\n  - {kind: quote, cloud: aws, note: {by: finance}}\n",
     r"^s.yaml: entries\[0\]\.note: expected one value, got dict \{'by': 'finance'\}"),
    ("entries: [\n", r"s.yaml: not valid YAML at line 2"),
    # the source went stale saying "ValueError: day is out of range for month", naming no file, entry or line (a text
    # field such as `note` takes it as written)
    ("entries:\n  - {kind: quote, cloud: aws, usd_per_hour: 2026-02-30}\n",
     (r"^s.yaml: entries\[0\]\.usd_per_hour: 2026-02-30 is not a date \(day is out of range for month\), at line 2 "
      r"column 45$")),
])
def test_malformed_sheets_name_the_entry_and_what_was_expected(tmp_path, text, message):
    with pytest.raises(SourceFormatError, match=message):
        price_sheet.read_file(write(tmp_path, "s.yaml", text), "s.yaml")


# YAML 1.1 read these as 24.0 USD/h, 10 months, 90.0 USD/h, 31% and 1200 USD, silently
@pytest.mark.parametrize("text, message", [
    ("entries:\n  - {kind: quote, usd_per_hour: 030}\n",
     ('entries[0].usd_per_hour: 030 is read by YAML 1.1 as octal 24, not 30: write 30 for the number, or "030" for '
      'text, at line 2 column 33')),
    ("entries:\n  - {kind: quote, term_months: 012}\n",
     ('entries[0].term_months: 012 is read by YAML 1.1 as octal 10, not 12: write 12 for the number, or "012" for '
      'text, at line 2 column 32')),
    ("entries:\n  - {kind: quote, usd_per_hour: 1:30}\n",
     ('entries[0].usd_per_hour: 1:30 is read by YAML 1.1 as sexagesimal (base 60) 90: write 90 for the number, or '
      '"1:30" for text, at line 2 column 33')),
    ("entries:\n  - {kind: discount, percent_off: 0x1F}\n",
     ('entries[0].percent_off: 0x1F is read by YAML 1.1 as hexadecimal 31: write 31 for the number, or "0x1F" for '
      'text, at line 2 column 35')),
    ("entries:\n  - {kind: quote, upfront_usd: 1_200}\n",
     ('entries[0].upfront_usd: 1_200 is read by YAML 1.1 as 1200, its _ dropped: write 1200 for the number, or '
      '"1_200" for text, at line 2 column 32')),
    # in a block of defaults merged into an entry: named where it is written
    ("defaults: &d {usd_per_hour: 030}\nentries:\n  - {<<: *d, kind: quote}\n",
     ('defaults.usd_per_hour: 030 is read by YAML 1.1 as octal 24, not 30: write 30 for the number, or "030" for '
      'text, at line 1 column 29')),
], ids=["octal", "octal-months", "sexagesimal", "hexadecimal", "underscore", "merged-default"])
def test_a_number_yaml_1_1_reads_other_than_as_decimal_is_refused_naming_its_line(tmp_path, text, message):
    with pytest.raises(SourceFormatError) as refused:
        price_sheet.read_file(write(tmp_path, "s.yaml", text), "s.yaml")
    assert str(refused.value) == f"s.yaml: {message}"


# a tab: read by PyYAML alone, not libyaml (which writes a plain scalar's style "", not None)
@pytest.mark.parametrize("tail", ["", "# a\ttab\n"], ids=["libyaml", "pyyaml-alone"])
def test_a_text_field_holds_its_value_as_written_not_as_yaml_1_1_types_it(tmp_path, tail):
    # YAML 1.1 typed these as 1200, octal 34, 1.5, a date, hexadecimal 31, 42, True and sexagesimal 90, and the rows
    # held '1200', '34', '1.5', '2026-01-05', '31', '42', 'True' and '90'
    path = write(tmp_path, "s.yaml", """\
        defaults: &lab {kind: on_prem, site: 1_200, source: 2026-1-5}
        entries:
          - {<<: *lab, name: 0042, note: 1.50, accelerator: h100-sxm-80gb, accelerator_count: 8, capex_usd: 320000,
             life_months: 48, power_kw: 10.2, usd_per_kwh: 0.11, pue: 1.35}
          - {kind: quote, cloud: neocloud, region: 0x1F, instance_type: 42, usd_per_hour: 19.92,
             accelerator: h100-sxm-80gb, accelerator_count: 8, source: yes, note: 1:30}
        """ + tail)
    on_prem, quote = price_sheet.read_file(path, "s.yaml")
    assert (on_prem["region"], on_prem["instance_type"], on_prem["note"], on_prem["quoted_source"]) == (
        "1_200", "0042", "1.50", "2026-1-5")
    assert (quote["region"], quote["instance_type"], quote["quoted_source"], quote["note"]) == (
        "0x1F", "42", "yes", "1:30")
    # numbers written as decimals are read as before
    assert (on_prem["capex_usd"], on_prem["life_months"], on_prem["power_kw"], on_prem["pue"]) == (
        320000.0, 48.0, 10.2, 1.35)
    assert (quote["usd_per_hour"], quote["accelerator_count"]) == (19.92, 8.0)
    assert "check_number_given_as_text" not in on_prem and "check_number_given_as_text" not in quote


def test_a_default_merged_in_may_be_given_again_to_override_it(tmp_path):
    path = write(tmp_path, "s.yaml", """\
        defaults: &aws {kind: quote, cloud: aws, region: us-east-1, source: invoice 7}
        entries:
          - {<<: *aws, region: us-west-2, instance_type: p5.48xlarge, usd_per_hour: 40}
        """)
    [row] = price_sheet.read_file(path, "s.yaml")
    assert (row["cloud"], row["region"], row["usd_per_hour"]) == ("aws", "us-west-2", 40.0)


def test_a_csv_sheet_naming_a_column_twice_is_refused(tmp_path):
    path = write(tmp_path, "s.csv", """\
        kind,cloud,region,instance_type,usd_per_hour,accelerator,accelerator_count,usd_per_hour,source
        quote,neocloud,us-west,8x-h100-sxm-box,19.92,h100-sxm-80gb,8,1.992,q
        """)
    with pytest.raises(SourceFormatError, match=r"^s.csv: line 1 \(header\): column 'usd_per_hour' appears twice "
                                                r"\(columns 5 and 8\); expected each column once$"):
        price_sheet.read_file(path, "s.csv")


def test_a_csv_entry_is_named_by_the_line_it_starts_on(tmp_path):
    path = write(tmp_path, "s.csv", """\
        kind,cloud,region,instance_type,usd_per_hour,source
        quote,neocloud,us-west,box-a,19.92,"a note
        over two lines"

        quote,neocloud,us-west,box-b,20,q
        quote,neocloud,us-west,box-c,"1,234.5",q
        """)  # box-a: lines 2-3; line 4 blank; box-b line 5; box-c line 6
    with pytest.raises(SourceFormatError, match=r"^s.csv: line 6\.usd_per_hour: '1,234.5' is not a number$"):
        price_sheet.read_file(path, "s.csv")
    path.write_text(path.read_text().replace('"1,234.5"', "21"))
    assert [(r["instance_type"], r["source_ref"]) for r in price_sheet.read_file(path, "s.csv")] == [
        ("box-a", "s.csv: line 2"), ("box-b", "s.csv: line 5"), ("box-c", "s.csv: line 6")]


def test_a_discount_off_spot_stays_spot_capacity(fresh_db, catalog, tmp_path):
    path = write(tmp_path, "s.yaml", """\
        entries:
          - {kind: discount, cloud: aws, instance_type: p5.48xlarge, region: us-east-1, applies_to: spot,
             percent_off: 5, source: a negotiated spot discount}
        """)
    spot = [{"availability_zone": "us-east-1a", "instance_type": "p5.48xlarge", "product_description": "Linux/UNIX",
             "price_usd": 10.24, "price_text": "10.240000", "price_timestamp": "2026-11-29T12:00:00Z", "region": "us-east-1",
             "source_ref": "s"}]
    loads = land_all(fresh_db, catalog, [
        land(fresh_db, catalog, "aws_spot", "aws_spot", "aws_spot", spot),
        land(fresh_db, catalog, "price_sheet", "price_sheet", "price_sheet", price_sheet.read_file(path, "s.yaml")),
    ])
    assert [loads[s].rows_landed for s in ("aws_spot", "price_sheet")] == [1, 1]
    transform.build_models(fresh_db, "run-1", AS_OF)
    # 10.24 x 0.95 = 9.728 USD/h, on the spot term: reclaimable, as the capacity it discounts
    [twin] = fresh_db.execute("select offer_id, pricing_term, round(usd_per_hour, 4) from intermediate.int_offers_priced "
                              "where price_source_id = 'price_sheet'").fetchall()
    assert twin == ("aws:us-east-1:p5.48xlarge:spot:spot-less-5.0", "spot", 9.728)
    # a service that does not buy spot does not buy it (it bought the 'private' twin before); one that does pays its
    # spare unit: llama2-70b-chat does not, llama2-70b-batch (offline) does and loses reclaimed work
    bought = {w for (w,) in fresh_db.execute("select distinct workload_id from marts.rankings where offer_id = ?",
                                              [twin[0]]).fetchall()}
    assert "llama2-70b-chat" not in bought and "llama2-70b-batch" in bought
    [(reason,)] = fresh_db.execute("select distinct exclusion_reason from marts.excluded_candidates "
                                   "where workload_id = 'llama2-70b-chat' and offer_id = ?", [twin[0]]).fetchall()
    assert "spot" in reason


def test_a_discount_that_matches_no_public_offer_is_listed_not_lost(fresh_db, catalog, tmp_path):
    from flows import offers_page

    path = write(tmp_path, "s.yaml", """\
        entries:
          - {kind: discount, cloud: aws, instance_type: p5.48xlarg, applies_to: on_demand, percent_off: 10,
             source: a typo in the instance type}
          - {kind: discount, cloud: aws, instance_type: p5.48xlarge, applies_to: on_demand, percent_off: 10,
             source: the right one}
        """)
    aws = aws_pricing.rows_from_pages([("p", aws_page(aws_product("p5.48xlarge", "55.0400000000")))])
    loads = land_all(fresh_db, catalog, [
        land(fresh_db, catalog, "aws_pricing", "aws_pricing", "aws_pricing", aws),
        land(fresh_db, catalog, "price_sheet", "price_sheet", "price_sheet", price_sheet.read_file(path, "s.yaml"))])
    assert loads["price_sheet"].rows_landed == 2
    transform.build_models(fresh_db, "run-1", AS_OF)
    # the typo lands (nothing in it is wrong on its own) but prices nothing: it is listed with why, the other prices
    # p5.48xlarge's private twin at 55.04 x 0.9 = 49.536
    assert fresh_db.execute("select source_ref, unused_reason from intermediate.int_prices_unused").fetchall() == [
        ("s.yaml: entries[0]", "a 10.0% discount off aws on_demand prices of p5.48xlarg in every region that matches "
                               "no public offer of this run")]
    assert fresh_db.execute("select round(usd_per_hour, 3) from intermediate.int_offers_priced "
                            "where pricing_term = 'private'").fetchall() == [(49.536,)]
    page = offers_page.render(fresh_db, AS_OF)[0]["offers.md"]
    assert "## Prices that priced no offer" in page
    assert ("| price_sheet: s.yaml: entries\\[0\\] | a 10.0% discount off aws on_demand prices of p5.48xlarg in every "
            "region that matches no public offer of this run |") in page.splitlines()


def test_implausible_entries_are_quarantined_with_their_expectation(fresh_db, catalog, tmp_path):
    path = write(tmp_path, "s.yaml", """\
        entries:
          - {kind: discount, cloud: aws, instance_type: "*", applies_to: on_demand, percent_off: 100, source: typo}
          - {kind: on_prem, site: lab, name: box, accelerator: h100-sxm-80gb, accelerator_count: 8, capex_usd: 1,
             life_months: 12, power_kw: 10200, usd_per_kwh: 0.11, source: watts typed as kW}
          - {kind: on_prem, site: lab, name: box2, accelerator: h100-pcie-80gb, accelerator_count: 8, capex_usd: 1,
             life_months: 12, power_kw: 10, usd_per_kwh: 11, source: "cents typed as dollars, unknown part"}
          - {kind: quote, cloud: aws, region: us-east-1, instance_type: p5.48xlarge, usd_per_hour: 40}
        """)
    rows = price_sheet.read_file(path, "s.yaml")
    loads = land_all(fresh_db, catalog, [land(fresh_db, catalog, "price_sheet", "price_sheet", "price_sheet", rows)])
    assert (loads["price_sheet"].rows_in, loads["price_sheet"].rows_landed,
            loads["price_sheet"].rows_quarantined) == (4, 0, 4)
    failed = set(fresh_db.execute("select source_ref, expectation from ops.quarantine").fetchall())
    assert {("s.yaml: entries[0]", "discount_percent_a_share"),
            ("s.yaml: entries[1]", "power_plausible"),
            ("s.yaml: entries[2]", "usd_per_kwh_plausible"),
            ("s.yaml: entries[2]", "accelerator_in_catalog"),
            ("s.yaml: entries[3]", "quoted_source_present")} <= failed


def test_counts_and_months_that_are_not_whole_or_past_their_bound_are_quarantined(fresh_db, catalog, tmp_path):
    """2.5 accelerators, a 12.5-month term or 7.6 chips were cast to whole numbers in staging (2 chips; the upfront
    fee amortised over 12 months: 35.7078 USD/h where 12.5 months give 30 + 50,000 / (12.5 x 730) = 35.4795); and
    3,000,000,000 chips overflowed staging's integer cast and failed every build, naming no entry. Each is now
    quarantined with the reason; the whole entry beside them lands."""
    path = write(tmp_path, "s.yaml", """\
        entries:
          - {kind: quote, cloud: neocloud, region: r, instance_type: box-a, accelerator: h100-sxm-80gb,
             accelerator_count: 2.5, usd_per_hour: 5, source: q1}
          - {kind: quote, cloud: aws, region: us-east-1, instance_type: p5.48xlarge, usd_per_hour: 30,
             upfront_usd: 50000, term_months: 12.5, source: q2}
          - {kind: on_prem, site: lab, name: box-1, accelerator: h100-sxm-80gb, accelerator_count: 7.6,
             capex_usd: 250000, life_months: 36, power_kw: 10, usd_per_kwh: 0.11, pue: 1.2, source: q3}
          - {kind: on_prem, site: lab, name: box-2, accelerator: h100-sxm-80gb, accelerator_count: 3000000000,
             capex_usd: 250000, life_months: 36.5, power_kw: 10, usd_per_kwh: 0.11, pue: 1.2, source: q4}
          - {kind: on_prem, site: lab, name: box-3, accelerator: h100-sxm-80gb, accelerator_count: 8,
             capex_usd: 250000, life_months: 36, power_kw: 10, usd_per_kwh: 0.11, pue: 1.2, source: q5}
        """)
    rows = price_sheet.read_file(path, "s.yaml")
    loads = land_all(fresh_db, catalog, [land(fresh_db, catalog, "price_sheet", "price_sheet", "price_sheet", rows)])
    assert (loads["price_sheet"].rows_landed, loads["price_sheet"].rows_quarantined) == (1, 4)
    assert fresh_db.execute("select source_ref, expectation, unexpected_value from ops.quarantine "
                            "order by row_no, expectation").fetchall() == [
        ("s.yaml: entries[0]", "accelerator_count_whole", "2.5"),
        ("s.yaml: entries[1]", "term_months_whole", "12.5"),
        ("s.yaml: entries[2]", "accelerator_count_whole", "7.6"),
        ("s.yaml: entries[3]", "accelerator_count_bounded", "3000000000.0"),
        ("s.yaml: entries[3]", "life_months_whole", "36.5")]
    transform.build_models(fresh_db, "run-1", AS_OF)  # builds: nothing past an integer's range reaches staging
    assert fresh_db.execute("select instance_type, accelerator_count from staging.stg_price_sheet__entries"
                            ).fetchall() == [("box-3", 8)]


def test_example_sheet_as_of_date_is_declared():
    from flows.catalog import load_catalog

    source = load_catalog(CATALOGS).sources.sources["price_sheet"]
    assert source.enabled is False and source.files[0].as_of == dt.date(2026, 11, 30)


def test_a_kind_that_is_a_list_is_a_format_error_not_a_type_error(tmp_path):
    path = write(tmp_path, "s.yaml", "entries:\n  - {kind: [quote], cloud: aws}\n")
    with pytest.raises(SourceFormatError, match=r"^s.yaml: entries\[0\].kind: \['quote'\], expected one of discount"):
        price_sheet.read_file(path, "s.yaml")


def quarantined(con) -> list[tuple]:
    """(source_ref, expectation, unexpected value) of every quarantined failure, in entry order."""
    return con.execute("select source_ref, expectation, unexpected_value from ops.quarantine "
                       "order by row_no, expectation").fetchall()


def offer_prices(con) -> dict[str, float]:
    return dict(con.execute("select offer_id, round(usd_per_hour, 4) from intermediate.int_offers_priced "
                            "where price_source_id = 'price_sheet'").fetchall())


def test_amounts_past_their_ceiling_are_quarantined_and_amounts_at_it_are_priced(fresh_db, catalog, tmp_path):
    """capex, opex and an upfront fee of 1.0e+308 priced offers at inf (capex over one month: 1e308 / 730) and 2.7e305
    USD/h, which every page printed. Each amount now has a ceiling, the 2,000 USD/h no instance costs more than paid
    over the longest period it can cover: capex 2,000 x 730 x 240 months = 350,400,000 USD, an upfront fee 2,000 x 730
    x 120 months = 175,200,000 USD, opex 2,000 x 730 = 1,460,000 USD a month."""
    path = write(tmp_path, "s.yaml", """\
        entries:
          - {kind: on_prem, site: lab, name: huge, accelerator: h100-sxm-80gb, accelerator_count: 8,
             capex_usd: 1.0e+308, life_months: 1, power_kw: 10, usd_per_kwh: 0.1, pue: 1.2,
             opex_usd_per_month: 1.0e+308, source: q1}
          - {kind: quote, cloud: aws, region: us-east-1, instance_type: p5.48xlarge, usd_per_hour: 30,
             upfront_usd: 1.0e+308, term_months: 1, source: q2}
          - {kind: on_prem, site: lab, name: at-ceiling, accelerator: h100-sxm-80gb, accelerator_count: 8,
             capex_usd: 350400000, life_months: 240, power_kw: 10, usd_per_kwh: 0.1, pue: 1.2,
             opex_usd_per_month: 1460000, source: q3}
          - {kind: quote, cloud: aws, region: us-east-1, instance_type: p5.48xlarge, usd_per_hour: 30,
             upfront_usd: 175200000, term_months: 120, source: q4}
          - {kind: on_prem, site: lab, name: just-past, accelerator: h100-sxm-80gb, accelerator_count: 8,
             capex_usd: 350400001, life_months: 240, power_kw: 10, usd_per_kwh: 0.1, pue: 1.2,
             opex_usd_per_month: 1460001, source: q5}
        """)
    loads = land_all(fresh_db, catalog, [land(fresh_db, catalog, "price_sheet", "price_sheet", "price_sheet",
                                              price_sheet.read_file(path, "s.yaml"))])
    assert (loads["price_sheet"].rows_landed, loads["price_sheet"].rows_quarantined) == (2, 3)
    assert quarantined(fresh_db) == [
        ("s.yaml: entries[0]", "capex_below_ceiling", "1e+308"),
        ("s.yaml: entries[0]", "opex_below_ceiling", "1e+308"),
        ("s.yaml: entries[1]", "upfront_below_ceiling", "1e+308"),
        ("s.yaml: entries[4]", "capex_below_ceiling", "350400001.0"),
        ("s.yaml: entries[4]", "opex_below_ceiling", "1460001.0")]
    transform.build_models(fresh_db, "run-1", AS_OF)
    # at the ceilings: 350,400,000 / (240 x 730 = 175,200 h) = 2,000 + 10 kW x 1.2 x 0.1 = 1.2 + 1,460,000 / 730 =
    # 2,000 -> 4,001.2 USD/h; the quote 30 + 175,200,000 / (120 x 730 = 87,600 h) = 30 + 2,000 = 2,030 USD/h
    assert offer_prices(fresh_db) == {"on_prem:lab:at-ceiling:owned": 4001.2,
                                      "aws:us-east-1:p5.48xlarge:private:q4-120-month-term": 2030.0}


def test_an_upfront_fee_without_its_term_is_quarantined_not_left_out(fresh_db, catalog, tmp_path):
    """A quote's upfront fee is amortised over term_months; without a term the quote was priced at its plain 30.00
    USD/h and the 5,000,000 USD fee was left out without a word."""
    path = write(tmp_path, "s.yaml", """\
        entries:
          - {kind: quote, cloud: aws, region: us-east-1, instance_type: p5.48xlarge, usd_per_hour: 30,
             upfront_usd: 5000000, source: no term}
          - {kind: quote, cloud: aws, region: us-east-1, instance_type: p5.48xlarge, usd_per_hour: 30,
             upfront_usd: 5000000, term_months: 60, source: five years}
        """)
    loads = land_all(fresh_db, catalog, [land(fresh_db, catalog, "price_sheet", "price_sheet", "price_sheet",
                                              price_sheet.read_file(path, "s.yaml"))])
    assert (loads["price_sheet"].rows_landed, loads["price_sheet"].rows_quarantined) == (1, 1)
    assert quarantined(fresh_db) == [("s.yaml: entries[0]", "upfront_with_term", "5000000.0")]
    [(reason,)] = fresh_db.execute("select reason from ops.quarantine").fetchall()
    assert "without term_months it would be left out of the price" in reason
    transform.build_models(fresh_db, "run-1", AS_OF)
    # 30 + 5,000,000 / (60 x 730 = 43,800 h) = 30 + 114.1553 = 144.1553 USD/h
    assert offer_prices(fresh_db) == {"aws:us-east-1:p5.48xlarge:private:five-years-60-month-term": 144.1553}


def test_a_yaml_number_written_as_text_is_quarantined_with_its_field_not_converted(fresh_db, catalog, tmp_path):
    """`usd_per_hour: "19.92"` landed as 19.92 and `1e3` (text to YAML: its floats take a dot) would have landed as
    1,000, though a value is never converted (README, Changing what is evaluated). Each such entry is quarantined,
    naming the field and its text; the entry written with numbers lands. A CSV's numbers are text: read as numbers."""
    path = write(tmp_path, "s.yaml", """\
        entries:
          - {kind: quote, cloud: aws, region: us-east-1, instance_type: p5.48xlarge, usd_per_hour: 30.00, source: q1}
          - {kind: quote, cloud: neocloud, region: us-west, instance_type: box, usd_per_hour: "19.92",
             accelerator: h100-sxm-80gb, accelerator_count: 8, source: q2}
          - {kind: quote, cloud: aws, region: us-east-1, instance_type: p5.48xlarge, usd_per_hour: 30,
             upfront_usd: 1e3, term_months: '12', source: q3}
        """)
    rows = price_sheet.read_file(path, "s.yaml")
    loads = land_all(fresh_db, catalog, [land(fresh_db, catalog, "price_sheet", "price_sheet", "price_sheet", rows)])
    assert (loads["price_sheet"].rows_landed, loads["price_sheet"].rows_quarantined) == (1, 2)
    assert quarantined(fresh_db) == [
        ("s.yaml: entries[1]", "numbers_not_text", "usd_per_hour: expected a number, got the text '19.92'"),
        ("s.yaml: entries[2]", "numbers_not_text",
         "upfront_usd: expected a number, got the text '1e3'; term_months: expected a number, got the text '12'")]
    assert fresh_db.execute("select source_ref, usd_per_hour from raw.price_sheet").fetchall() == [
        ("s.yaml: entries[0]", 30.0)]
    csv_path = write(tmp_path, "s.csv", """\
        kind,cloud,region,instance_type,usd_per_hour,source
        quote,aws,us-east-1,p5.48xlarge,"19.92",q1
        """)
    [row] = price_sheet.read_file(csv_path, "s.csv")
    assert row["usd_per_hour"] == 19.92 and "check_number_given_as_text" not in row


def test_a_quote_on_a_public_term_is_quarantined_not_ranked_as_that_term(fresh_db, catalog, tmp_path):
    """A quote is a private offer. `pricing_term: on_demand` at 1.00 USD/h put a p4d.24xlarge on-demand offer beside
    the public 21.96 one and ranked it first; any text was taken as a term."""
    path = write(tmp_path, "s.yaml", """\
        entries:
          - {kind: quote, cloud: aws, region: us-east-1, instance_type: p4d.24xlarge, pricing_term: on_demand,
             usd_per_hour: 1.0, source: posing as on-demand}
          - {kind: quote, cloud: aws, region: us-east-1, instance_type: g6e.12xlarge, pricing_term: "x | <b>w</b>",
             usd_per_hour: 1.0, source: any text}
          - {kind: quote, cloud: aws, region: us-east-1, instance_type: p5.48xlarge, pricing_term: private,
             usd_per_hour: 30.0, source: private}
        """)
    loads = land_all(fresh_db, catalog, [land(fresh_db, catalog, "price_sheet", "price_sheet", "price_sheet",
                                              price_sheet.read_file(path, "s.yaml"))])
    assert (loads["price_sheet"].rows_landed, loads["price_sheet"].rows_quarantined) == (1, 2)
    assert quarantined(fresh_db) == [("s.yaml: entries[0]", "quote_term_private", "on_demand"),
                                     ("s.yaml: entries[1]", "quote_term_private", "x | <b>w</b>")]
    transform.build_models(fresh_db, "run-1", AS_OF)
    assert offer_prices(fresh_db) == {"aws:us-east-1:p5.48xlarge:private:private": 30.0}


@pytest.mark.parametrize("entry, message", [
    # a quote's percent_off landed unused; its site and name were dropped
    ("{kind: quote, cloud: aws, region: us-east-1, instance_type: p5.48xlarge, usd_per_hour: 30, percent_off: 50, "
     "site: lab}",
     r"field\(s\) percent_off, site do not apply to a quote \(it takes: kind, cloud, region, instance_type, "
     r"pricing_term, accelerator, source, note, usd_per_hour, upfront_usd, term_months, accelerator_count\)$"),
    # a discount's usd_per_hour and pricing_term landed unused
    ("{kind: discount, cloud: azure, instance_type: '*', applies_to: on_demand, percent_off: 15, usd_per_hour: 0.01, "
     "pricing_term: spot}",
     r"field\(s\) usd_per_hour, pricing_term do not apply to a discount \(it takes: kind, cloud, region, "
     r"instance_type, applies_to, source, note, percent_off\)$"),
    # an on_prem system's region and instance_type were overwritten by its site and name, its cloud by on_prem
    ("{kind: on_prem, site: home-dc, region: other-dc, name: box-a, instance_type: box-b, cloud: aws}",
     r"field\(s\) region, instance_type, cloud do not apply to an on_prem entry \(it takes: kind, site, name, "
     r"accelerator, source, note, accelerator_count, capex_usd, life_months, power_kw, usd_per_kwh, pue, "
     r"opex_usd_per_month\)$"),
])
def test_a_field_of_another_kind_of_entry_is_refused_naming_file_entry_and_field(tmp_path, entry, message):
    path = write(tmp_path, "s.yaml", f"entries:\n  - {{kind: quote, cloud: aws, source: ok}}\n  - {entry}\n")
    with pytest.raises(SourceFormatError, match=r"^s.yaml: entries\[1\]: " + message):
        price_sheet.read_file(path, "s.yaml")


def test_a_csv_entry_may_leave_other_kinds_columns_empty_but_not_fill_them(tmp_path):
    path = write(tmp_path, "s.csv", """\
        kind,cloud,region,instance_type,usd_per_hour,percent_off,applies_to,source
        quote,aws,us-east-1,p5.48xlarge,30,,,q
        discount,azure,,*,,15,on_demand,d
        quote,aws,us-east-1,p5.4xlarge,5,10,,q
        """)
    with pytest.raises(SourceFormatError, match=r"^s.csv: line 4: field\(s\) percent_off do not apply to a quote "):
        price_sheet.read_file(path, "s.csv")
    path.write_text(path.read_text().replace(",5,10,,q", ",5,,,q"))
    assert [r["entry_kind"] for r in price_sheet.read_file(path, "s.csv")] == ["quote", "discount", "quote"]


def test_a_second_list_of_entries_is_refused_not_ignored(tmp_path):
    path = write(tmp_path, "s.yaml", """\
        entries:
          - {kind: quote, cloud: aws, region: us-east-1, instance_type: p5.48xlarge, usd_per_hour: 30, source: q}
        more_entries:
          - {kind: quote, cloud: aws, region: us-east-1, instance_type: p5.48xlarge, usd_per_hour: 1, source: lost}
        """)
    with pytest.raises(SourceFormatError, match=r"^s.yaml: unknown top-level key\(s\) more_entries \(expected "
                                                r"`entries:`, and `defaults:` for blocks that entries merge in"):
        price_sheet.read_file(path, "s.yaml")


def test_an_on_prem_system_without_its_pue_is_quarantined_not_taken_at_1(fresh_db, catalog, tmp_path):
    """A missing pue was taken as 1.0: 250,000 / (36 x 730) + 10 kW x 1.0 x 0.11 = 9.5129 + 1.1 = 10.6129 USD/h, the
    cooling left out without a word. It is quarantined; with pue 1.3 the system costs 9.5129 + 10 x 1.3 x 0.11 =
    9.5129 + 1.43 = 10.9429 USD/h."""
    path = write(tmp_path, "s.yaml", """\
        entries:
          - {kind: on_prem, site: lab, name: no-pue, accelerator: h100-sxm-80gb, accelerator_count: 8,
             capex_usd: 250000, life_months: 36, power_kw: 10, usd_per_kwh: 0.11, source: q1}
          - {kind: on_prem, site: lab, name: with-pue, accelerator: h100-sxm-80gb, accelerator_count: 8,
             capex_usd: 250000, life_months: 36, power_kw: 10, usd_per_kwh: 0.11, pue: 1.3, source: q2}
        """)
    loads = land_all(fresh_db, catalog, [land(fresh_db, catalog, "price_sheet", "price_sheet", "price_sheet",
                                              price_sheet.read_file(path, "s.yaml"))])
    assert (loads["price_sheet"].rows_landed, loads["price_sheet"].rows_quarantined) == (1, 1)
    assert quarantined(fresh_db) == [("s.yaml: entries[0]", "on_prem_pue_present", None)]
    transform.build_models(fresh_db, "run-1", AS_OF)
    assert offer_prices(fresh_db) == {"on_prem:lab:with-pue:owned": 10.9429}


def test_a_provider_name_past_100_characters_is_quarantined_not_printed(fresh_db, catalog, tmp_path):
    """A quote for unlisted hardware may name any provider slug; a 300,000-character one was printed whole on every
    page. At most 100 characters, as a catalog id (and as a region or instance type)."""
    path = write(tmp_path, "s.yaml", f"""\
        entries:
          - {{kind: quote, cloud: {"c" * 101}, region: r, instance_type: box, usd_per_hour: 10,
             accelerator: h100-sxm-80gb, accelerator_count: 8, source: q1}}
          - {{kind: quote, cloud: {"c" * 100}, region: r, instance_type: box, usd_per_hour: 10,
             accelerator: h100-sxm-80gb, accelerator_count: 8, source: q2}}
        """)
    loads = land_all(fresh_db, catalog, [land(fresh_db, catalog, "price_sheet", "price_sheet", "price_sheet",
                                              price_sheet.read_file(path, "s.yaml"))])
    assert (loads["price_sheet"].rows_landed, loads["price_sheet"].rows_quarantined) == (1, 1)
    assert quarantined(fresh_db) == [("s.yaml: entries[0]", "cloud_short", "c" * 101)]


def test_a_source_or_note_past_its_bound_is_quarantined_not_printed(fresh_db, catalog, tmp_path):
    """An entry's `source` (part of its offer's term detail) and `note` had no bound: a 300,000-character source
    reached offers.csv whole. At most 200 and 1,000 characters; entries at the bounds land."""
    path = write(tmp_path, "s.yaml", f"""\
        entries:
          - {{kind: quote, cloud: aws, region: us-east-1, instance_type: p5.48xlarge, usd_per_hour: 40,
             source: {"s" * 201}}}
          - {{kind: quote, cloud: aws, region: us-east-1, instance_type: p5en.48xlarge, usd_per_hour: 40,
             source: q1, note: {"n" * 1001}}}
          - {{kind: quote, cloud: aws, region: us-east-1, instance_type: p4d.24xlarge, usd_per_hour: 20,
             source: {"s" * 200}, note: {"n" * 1000}}}
        """)
    loads = land_all(fresh_db, catalog, [land(fresh_db, catalog, "price_sheet", "price_sheet", "price_sheet",
                                              price_sheet.read_file(path, "s.yaml"))])
    assert (loads["price_sheet"].rows_landed, loads["price_sheet"].rows_quarantined) == (1, 2)
    assert quarantined(fresh_db) == [("s.yaml: entries[0]", "quoted_source_short", "s" * 201),
                                     ("s.yaml: entries[1]", "note_short", "n" * 1001)]


def test_a_no_upfront_rate_needs_no_term_and_an_on_prem_entry_may_write_its_own_cloud(fresh_db, catalog, tmp_path):
    """`upfront_usd: 0` (a no-upfront private rate) has no fee to amortise: it lands without term_months, priced at
    its 30.00 USD/h. An on_prem entry's cloud is on_prem whatever it says: writing `cloud: on_prem` (and
    `pricing_term: owned`) out is no field of another kind; another cloud still is (the parametrized test above)."""
    path = write(tmp_path, "s.csv", """\
        kind,cloud,region,instance_type,usd_per_hour,upfront_usd,source
        quote,aws,us-east-1,p5.48xlarge,30,0,no-upfront private rate
        """)
    loads = land_all(fresh_db, catalog, [land(fresh_db, catalog, "price_sheet", "price_sheet", "price_sheet",
                                              price_sheet.read_file(path, "s.csv"))])
    assert (loads["price_sheet"].rows_landed, loads["price_sheet"].rows_quarantined) == (1, 0)
    transform.build_models(fresh_db, "run-1", AS_OF)
    # the offer named by its source, as a private term is (its term detail); no fee: 30.00 USD/h as quoted
    assert offer_prices(fresh_db) == {"aws:us-east-1:p5.48xlarge:private:no-upfront-private-rate": 30.0}
    own = write(tmp_path, "own.yaml", """\
        entries:
          - {kind: on_prem, cloud: on_prem, pricing_term: owned, site: lab, name: box, accelerator: h100-sxm-80gb,
             accelerator_count: 8, capex_usd: 250000, life_months: 36, power_kw: 10, usd_per_kwh: 0.11, pue: 1.3,
             source: q}
        """)
    [row] = price_sheet.read_file(own, "own.yaml")
    assert (row["cloud"], row["region"], row["instance_type"], row["pricing_term"]) == ("on_prem", "lab", "box",
                                                                                          "owned")
