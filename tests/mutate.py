"""`make mutate`: plant one small bug at a time in the cost SQL and a few Python spots; count the ones tests catch.

Each mutation is a text replacement in one file, made in a scratch copy of the project: the working tree is never
touched, so a suite running beside it is not disturbed, and Ctrl-C leaves nothing to restore. The copy runs only
the fast test modules that exercise the mutated code (no Prefect server), stopping at the first failure. A
mutation is *caught* when a test fails, *survives* when they all pass. Exit status: 0 all caught, 1 some survived,
2 the list no longer matches the code, the unmutated copy fails its tests or a mutation's tests could not run.

    .venv/bin/python tests/mutate.py                        # every mutation
    .venv/bin/python tests/mutate.py --list                 # names only
    .venv/bin/python tests/mutate.py reserved-rows-swapped  # some, by name
    .venv/bin/python tests/mutate.py NAME -v --tests tests/test_x.py::test_y  # which line of that test fails
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MACROS = "sql/macros.sql"
OFFERS = "sql/intermediate/int_offers_priced.sql"
INFERENCE = "sql/intermediate/int_inference_estimates_computed.sql"
TRAINING = "sql/intermediate/int_training_estimates_computed.sql"
MEASURED = "sql/intermediate/int_training_measured.sql"
PRICE_SHEET_SUITE = "catalogs/expectations/price_sheet.json"
KILLED = "tests/test_killed_runs.py::test_"
HOSTED_API_CAVEATS = ("tests/test_model_api_prices.py::test_the_hosted_api_section_says_each_caveat_of_the_compared_"
                      "offer_only_where_it_applies")
REGEX_GROUP_TEST = ("tests/test_guards.py::test_a_regex_with_a_group_validates_as_written_without_a_warning_and_"
                    "the_shipped_suites_have_none")
CANCELLED_BEFORE_PUBLISH = ("tests/test_cancellation.py::test_hweval_run_cancelled_from_prefect_stops_before_its_"
                            "publish_changes_nothing_and_is_marked_cancelled")
FRONTIER_COUNT_TEST = ("tests/test_charts.py::test_the_frontier_counts_offers_not_lines_and_names_the_region_of_a_"
                       "type_sold_in_two")
NO_UPFRONT_OWN_CLOUD = ("tests/test_price_sheet.py::test_a_no_upfront_rate_needs_no_term_and_an_on_prem_entry_may_"
                        "write_its_own_cloud")
AMOUNT_CEILINGS = ("tests/test_price_sheet.py::test_amounts_past_their_ceiling_are_quarantined_and_amounts_at_it_are_"
                   "priced")
LEASE_TRAP = "tests/test_traps.py::test_a_reserved_lease_that_is_no_whole_number_of_years_is_quarantined"
SPOT_FUTURE_TRAP = "tests/test_traps.py::test_a_spot_price_dated_after_its_data_is_quarantined_not_taken_as_the_latest"

COST_TESTS = ("tests/test_macros.py", "tests/test_cost_model.py", "tests/test_marts.py")
CALIBRATION_TESTS = ("tests/test_calibration.py", "tests/test_cost_model.py")
OFFER_FILE_RUN = ("tests/test_source_aws_offer_file.py::"
                  "test_an_offer_file_given_to_a_run_prices_on_demand_and_reserved_offers")
OFFER_TESTS = ("tests/test_macros.py", OFFER_FILE_RUN, "tests/test_price_sheet.py", "tests/test_marts.py",
               "tests/test_traps.py")
CATALOG_TESTS = ("tests/test_traps.py",)
AWS_PARSER_TESTS = ("tests/test_source_aws_pricing.py",)
HARDWARE_TESTS = ("tests/test_instance_hardware.py",)
# its whole-run tests are marked slow, which pyproject.toml's addopts leave out: this later -m takes them in
INCREMENTAL_TESTS = ("tests/test_incremental.py", "-m", "not live and not fuzz")
DEADLINE_REASONS = ("tests/test_communication.py::test_deadline_reasons_write_the_deadline_thousands_separated_and_"
                    "below_the_hours_needed")
COMM_TESTS = ("tests/test_communication.py", "tests/test_energy.py")
ESTIMATES_PAGE = "flows/estimates_page.py"
ESTIMATES_PAGE_TESTS = "tests/test_estimates_page.py"
ESTIMATES_LISTED_TEST = "test_every_comparison_lists_the_first_comparisons_listed_and_says_where_the_rest_are"
INFERENCE_COSTS = "sql/intermediate/int_inference_costs_computed.sql"
TRAINING_COSTS = "sql/intermediate/int_training_costs_computed.sql"
REPORTS_TESTS = "tests/test_reports.py"
PROVISIONED_ENERGY_TEST = (f"{REPORTS_TESTS}::test_a_services_provisioned_energy_is_its_instances_month_at_the_energy_"
                           "columns_power")


@dataclass(frozen=True)
class Mutation:
    name: str
    path: str
    old: str  # must occur exactly once in the file
    new: str
    tests: tuple[str, ...]


# tests marked slow, which pyproject.toml's addopts leave out, are taken in by this later -m
SLOW_TOO = ("-m", "not live and not fuzz")
BEDROCK_CURRENCY = ("tests/test_model_api_prices.py::test_a_bedrock_price_in_another_currency_or_none_is_quarantined_"
                    "and_its_neighbours_land")
AZURE_TIERS_LOGGED = ("tests/test_model_api_prices.py::test_azure_prices_the_on_demand_tier_only_and_logs_the_meters_"
                      "read_kept_and_skipped")
AZURE_TIER_REFUSED = "tests/test_model_api_prices.py::test_an_azure_tier_that_is_no_number_is_refused_naming_the_item"
VERTEX_LOGGED = ("tests/test_model_api_prices.py::test_vertex_logs_the_skus_read_kept_and_skipped_and_the_tiers_not_"
                 "priced")
CATALOG_AHEAD = ("tests/test_run_startup.py::test_the_catalog_check_begun_while_the_server_starts_is_what_the_run_"
                 "and_the_flow_take")
CATALOG_AHEAD_REFUSED = ("tests/test_run_startup.py::test_a_catalog_figure_that_fails_the_check_begun_ahead_is_refused_"
                         "before_the_flow")
# the GX process's tests, with those that start it again (marked slow)
GX_PROCESS_TESTS = ("tests/test_gx_process.py", *SLOW_TOO)
# the lake tests need PostgreSQL and the S3 server (marked slow; this -m takes them in)
LAKE_TESTS = ("tests/test_lake.py", "-m", "not live and not fuzz")
FANOUT_TESTS = ("tests/test_fanout.py",)
AUTOMATION_TESTS = "tests/test_automations.py"
# a deployment's run killed outright, marked Crashed by flows/automations.yaml on a real server, then told (~50 s)
SILENT_RUN = "tests/test_deployments.py::test_a_nightly_run_that_died_with_its_worker_is_crashed_by_the_automation_and_told"
STALE_RUN = "tests/test_changes.py::test_a_source_stale_past_its_limit_publishes_fails_and_notifies"
CHANGES = "sql/marts/changes.sql"
SENTENCES = "flows/templates/_sentences.j2"
CHEAPER_EXCLUDED = ("tests/test_reports.py::test_the_cheapest_chip_hour_is_said_to_be_of_the_ranked_candidates_"
                    "where_cheaper_ones_were_excluded")
UNRANKED_MEASUREMENT = "tests/test_reports.py::test_a_measured_result_the_workload_keeps_out_is_named_with_what_excludes_it"
API_TIE = ("tests/test_model_api_prices.py::test_a_unit_whose_bill_only_ties_the_apis_at_its_capacity_is_no_"
           "break_even")
UNRANKED_PRECISION_FIRST = ("tests/test_reports.py::test_the_unranked_measurement_named_is_of_the_settling_"
                            "candidates_precision_first")
CHART_CHEAPER_EXCLUDED = ("tests/test_charts.py::test_the_cheapest_chip_hour_is_of_the_ranked_candidates_where_cheaper_"
                          "ones_were_excluded")
CAPTION_REGION = "tests/test_charts.py::test_a_caption_names_the_region_of_an_offer_the_workload_ranks_in_two"
UNDECLARED_PRECISION_PAGE = ("tests/test_reports.py::test_a_measured_result_of_no_declared_precision_is_said_so_"
                             "not_given_one")
UNDECLARED_PRECISION_SENTENCE = ("tests/test_reports.py::test_a_measured_pick_of_no_declared_precision_is_said_so_"
                                 "where_the_workload_asks_one")
HAND_MADE_CHANGES = ("tests/test_changes.py::test_changes_of_hand_made_days_name_each_reason_a_fall_in_price_and_sources_"
                     "stale_or_fresh")
HAND_MADE_WHAT_CHANGED = "tests/test_changes.py::test_what_changed_on_hand_made_days_says_each_change_in_words"
LABEL_MOVED = ("tests/test_changes.py::test_a_catalog_edit_that_moves_a_figure_in_a_picks_label_is_no_new_result_a_"
               "row_measured_anew_is")
RELEASE_WORDED = "tests/test_changes.py::test_a_label_that_a_release_words_otherwise_is_no_new_result"
SAME_TO_THE_DIGIT = ("tests/test_reports.py::test_a_runner_up_equal_to_the_digits_shown_and_a_price_no_run_refreshed_"
                     "are_said_so")
CHIP_HOUR_MAY_BE_CHEAPER = ("tests/test_reports.py::test_the_cheapest_chip_hour_that_may_be_cheaper_is_said_so_in_the_"
                            "mart_the_index_table_and_the_chart")
CHIP_HOUR_SENTENCE = ("tests/test_reports.py::test_the_cheapest_chip_hour_gives_its_likely_range_and_says_where_it_may_"
                      "be_cheaper")
FP16_AS_BF16 = ("tests/test_reports.py::test_a_page_that_ranks_fp16_says_once_that_it_counts_as_the_bf16_its_"
                "workload_lists")
UNTESTED_BAND_MART = ("tests/test_calibration.py::test_a_calibrated_row_whose_factor_no_leave_one_out_comparison_"
                      "tested_says_its_band_is_untested")
UNTESTED_BAND_PAGE = ("tests/test_reports.py::test_a_calibrated_row_whose_factor_comes_from_one_setup_says_its_range_"
                      "is_not_back_tested")
# no Prefect server of their own but one test's session server (the real API answering the warm-up)
SERVER_TESTS = ("tests/test_prefect_server.py",)
# one whole run (the session's flow_run), then schema analytics kept or made again on a copy of its warehouse
ANALYTICS_KEPT = ("tests/test_analytics.py::test_the_schema_is_kept_when_nothing_it_is_made_from_changed_and_made_again_when"
                  "_something_did",)

# the workload pages' bounds, on the session's flow_run (one whole run) and a copy of its warehouse
REPORT_BOUNDS = ("tests/test_reports.py::test_a_workload_page_lists_its_ranking_and_exclusions_up_to_its_bounds_and_"
                 "says_where_the_rest_is", "tests/test_reports.py::test_offers_excluded_alike_are_named_once_with_"
                 "their_number")
GOLDEN_PAGES = ("tests/test_flow.py::test_golden_report",)
DATA_DOCS_LINKS = ("tests/test_flow.py::test_every_link_of_the_data_docs_resolves_in_its_own_folder_and_in_the_site_"
                   "of_a_run_that_reuses_it")
# the offers page: one row per instance type, bounded, every offer in offers.csv
OFFERS_PAGE = ("tests/test_reports.py::test_the_offers_page_lists_each_instance_type_once_at_its_cheapest_term_and_says_"
               "where_every_offer_is",)

RUNS_SUITE = "catalogs/expectations/benchmark_runs.json"
RUN_BOUNDS = ("tests/test_source_benchmark_runs.py::test_a_figure_past_its_plausibility_bound_is_quarantined_and_the_"
              "build_goes_on")
IMPLIED_MFU = ("tests/test_source_benchmark_runs.py::test_a_training_throughput_that_implies_an_mfu_past_1_is_"
               "quarantined_naming_it")
HWEVAL_AUTOMATIONS = ("tests/test_automations.py::test_hweval_automations_creates_once_then_updates_in_place_and_"
                      "refuses_copies")
TIME_IMPLIED_MFU = ("tests/test_source_benchmark_runs.py::test_an_own_run_whose_time_implies_an_mfu_past_1_is_"
                    "quarantined_naming_it")
SERVING_COUNTS = ("tests/test_source_benchmark_runs.py::test_a_serving_run_that_completed_nothing_or_offered_a_"
                  "negative_rate_is_quarantined_with_the_reason")
LABELS_UNCAST = ("tests/test_source_benchmark_runs.py::test_figures_landed_before_their_bounds_are_labelled_without_"
                 "an_integer_cast")

SPLIT_UNCHARGED_SENTENCE = ("tests/test_reports.py::test_a_runner_up_whose_split_is_not_charged_says_so_and_the_"
                            "price_source_is_escaped")
DECISION_AS_OF = "tests/test_reports.py::test_the_decision_says_where_and_as_of_when_its_prices_and_benchmarks_are"

OFFER_UNCHANGED = "tests/test_source_aws_offer_file.py::test_an_offer_file_unchanged_on_the_server_is_not_downloaded_again"
OFFER_KEY = ("tests/test_source_aws_offer_file.py::test_the_download_key_names_the_url_region_limits_and_the_code_"
             "that_read_the_rows")
OFFER_CACHE_DENIED = ("tests/test_source_aws_offer_file.py::test_a_download_cache_it_cannot_look_into_or_half_written_"
                      "entries_cost_nothing_more")
OFFER_CACHE_UNUSABLE = ("tests/test_source_aws_offer_file.py::test_a_download_cache_it_cannot_use_costs_a_download_and_"
                        "a_304_never_asked_for_is_an_error")

MUTATIONS = (
    # ---------------------------------------------------------------- issue 15, stop 70: the offer file's conditional
    # GET (the API's own validators) and the download cache
    Mutation("an-unchanged-offer-file-downloaded-again", "flows/sources/_download.py",
             "    conditions = {VALIDATOR_HEADERS[name]: value for name, value in _validators(validators or {}).items()}",
             "    conditions = {}", (OFFER_UNCHANGED,)),
    Mutation("offer-file-rows-kept-under-other-limits-read", "flows/sources/aws_offer_file.py",
             'f"max_line_bytes={limits.max_line_bytes}")', '"")', (OFFER_UNCHANGED,)),
    Mutation("kept-offer-rows-carry-the-validators-in-their-schema", "flows/cache.py",
             "        table = table.replace_schema_metadata(None)\n", "\n",
             (OFFER_UNCHANGED,)),
    Mutation("a-304-never-asked-for-read-as-unchanged", "flows/sources/_download.py",
             "                if not conditions:\n", "                if False:\n", (OFFER_CACHE_UNUSABLE,)),
    Mutation("the-download-cache-never-pruned", "flows/cache.py",
             '        _prune(path.parent, "*.arrow", DOWNLOADS_KEPT)\n', "        pass\n",
             ("tests/test_source_aws_offer_file.py::test_the_download_cache_keeps_the_downloads_used_last",)),
    Mutation("kept-offer-rows-for-another-endpoint-read", "flows/sources/aws_offer_file.py",
             '    return (f"aws_offer_file {url} {region} {_reading_code()}', '    return (f"aws_offer_file {region} {_reading_code()}',
             (OFFER_KEY,)),
    Mutation("kept-offer-rows-of-other-redaction-read", "flows/sources/aws_offer_file.py",
             ', here.parent.parent / "redaction.py"]', "]", (OFFER_KEY,)),
    Mutation("damaged-kept-rows-read", "flows/cache.py",
             "        if stored.pop(_ROWS_DIGEST, None) != arrow_digest(table):",
             "        if stored.pop(_ROWS_DIGEST, None) is None:", (OFFER_CACHE_UNUSABLE,)),
    Mutation("a-download-cache-it-cannot-look-into-fails-the-source", "flows/cache.py",
             "    try:\n        if path is None or not path.is_file():\n            return None\n",
             "    if path is None or not path.is_file():\n        return None\n    try:\n", (OFFER_CACHE_DENIED,)),
    Mutation("half-written-downloads-never-removed", "flows/cache.py",
             "        _remove_old_partials(path.parent)\n", "\n", (OFFER_CACHE_DENIED,)),
    Mutation("a-non-ascii-etag-sent-back", "flows/sources/_download.py",
             " and value.isascii() and value.isprintable():", ":", (OFFER_CACHE_UNUSABLE,)),
    Mutation("an-overlong-etag-kept-and-sent-back", "flows/sources/_download.py",
             "        if value and len(value) <= MAX_VALIDATOR_CHARS and ", "        if value and ",
             (OFFER_CACHE_UNUSABLE,)),
    # ---------------------------------------------------------------- issue 15, stop 44: a review of the cost model,
    # the live fetches and the failures after the publish
    Mutation("a-workloads-fp16-misses-fp16-results", "sql/intermediate/int_serving_results_matched.sql",
             "        and precision_class(accepted.precision) = precision_class(results.precision)\n",
             "        and accepted.precision = precision_class(results.precision)\n",
             ("tests/test_cost_model.py::test_a_workload_that_accepts_fp16_takes_fp16_results_and_estimates_at_the_"
              "bf16_peak",)),
    Mutation("fp16-has-no-peak-where-only-bf16-is-listed", "sql/intermediate/int_accelerator_precisions_listed.sql",
             "    where precision = 'bf16'\n", "    where false and precision = 'bf16'\n",
             ("tests/test_cost_model.py::test_a_workload_that_accepts_fp16_takes_fp16_results_and_estimates_at_the_"
              "bf16_peak",)),
    Mutation("a-spanning-replicas-chips-counted-twice", "sql/marts/rankings.sql",
             "replica_chips as chips,", "replica_chips * instances_per_replica as chips,",
             ("tests/test_cost_model.py::test_a_replica_that_spans_instances_counts_its_chips_once",)),
    Mutation("fp8-gradients-reduced-in-one-byte", MACROS,
             "    greatest(bytes_per_value(prec), bytes_per_value('bf16'));", "    bytes_per_value(prec);",
             ("tests/test_communication.py::test_fp8_training_reduces_its_gradients_in_16_bits",
              "tests/test_macros.py::test_gradient_bytes_are_16_bits_at_least")),
    Mutation("a-backfill-runs-on-a-later-dates-prices", "flows/land.py",
             "where l.source_id = ? and l.used_run_id is not null and l.as_of <= ? ",
             "where l.source_id = ? and l.used_run_id is not null and ? is not null ",
             ("tests/test_guards.py::test_a_backfill_whose_source_fails_runs_on_the_last_good_rows_before_its_date_"
              "not_after",
              # the row-count and price checks read the same last good load
              "tests/test_price_jump.py::test_a_backfill_is_checked_against_the_last_load_on_or_before_its_date")),
    Mutation("a-next-page-link-followed-anywhere", "flows/sources/azure_retail.py",
             '            _http.same_origin_link(next_link, endpoint, f"{where}.NextPageLink")\n', "            pass\n",
             ("tests/test_source_http_live.py::test_only_http_urls_are_fetched_and_a_next_page_link_elsewhere_is_not_"
              "followed",)),
    Mutation("a-bearer-token-follows-a-redirect", "flows/sources/_http.py",
             "        request.add_unredirected_header(name, value)\n", "        request.add_header(name, value)\n",
             ("tests/test_source_http_live.py::test_credentials_go_to_the_url_asked_for_never_on_to_a_redirect",)),
    Mutation("a-response-read-to-its-end-however-slow", "flows/sources/_http.py",
             "        if time.monotonic() > deadline:\n", "        if False:\n",
             ("tests/test_source_http_live.py::test_a_response_that_trickles_in_is_given_up_at_its_deadline",)),
    Mutation("a-discount-off-spot-sold-as-safe-capacity", "sql/intermediate/int_offers_priced.sql",
             "        case when public.pricing_term in ('spot', 'low_priority') then public.pricing_term else 'private' end",
             "        'private'", ("tests/test_price_sheet.py::test_a_discount_off_spot_stays_spot_capacity",)),
    Mutation("a-deadline-met-without-the-rework", "sql/intermediate/int_training_costs_computed.sql",
             "        case when run_hours * (1 + interruption_overhead) > deadline_hours then",
             "        case when run_hours > deadline_hours then",
             ("tests/test_communication.py::test_a_deadline_counts_the_rework_of_a_runs_reclaims",)),
    Mutation("an-api-break-even-without-the-spare-unit", "sql/marts/api_comparisons.sql",
             "        coalesce(costs.spare_deployments, 0) as spare_deployments,", "        0 as spare_deployments,",
             ("tests/test_model_api_prices.py::test_a_pick_on_spot_breaks_even_with_its_spare_unit_paid",)),
    Mutation("api-break-even-at-a-tie-with-the-api", "sql/marts/api_comparisons.sql",
             ("             then cast(floor(spare_deployments * one_unit_break_even_requests_per_s\n"
              "                             / (one_unit_mean_requests_per_s - one_unit_break_even_requests_per_s)) "
              "as bigint) + 1\n"),
             ("             then greatest(1, cast(ceil(spare_deployments * one_unit_break_even_requests_per_s\n"
              "                             / (one_unit_mean_requests_per_s - one_unit_break_even_requests_per_s)) "
              "as bigint))\n"),
             (API_TIE,)),
    Mutation("api-never-cheaper-only-above-the-tie", "sql/marts/api_comparisons.sql",
             "one_unit_break_even_requests_per_s >= one_unit_mean_requests_per_s as is_self_hosting_never_cheaper",
             "self_hosted_usd_per_request_at_full_load > api_usd_per_request as is_self_hosting_never_cheaper",
             (API_TIE,)),
    Mutation("calibrated-mfu-without-its-effective-figure", TRAINING,
             "                || case when scaling < 1 then\n", "                || case when false then\n",
             (("tests/test_cost_model.py::test_a_calibrated_mfu_says_what_it_comes_to_after_the_flat_loss_between_"
               "instances"),)),
    Mutation("index-quotes-an-error-over-too-few-comparisons", "flows/templates/index.md.j2",
             "{% if g.comparisons >= min_comparisons %}", "{% if g.comparisons %}",
             (("tests/test_reports.py::test_the_index_quotes_no_error_where_too_few_comparisons_give_a_pick_no_likely_"
               "range"),)),
    Mutation("api-cheaper-from-the-first-break-even-on", "sql/marts/api_comparisons.sql",
             "            {'from_requests_per_s': (cheaper_throughout_units - 1 + spare_deployments)",
             "            {'from_requests_per_s': (break_even_units + spare_deployments)",
             (("tests/test_model_api_prices.py::test_the_api_beside_the_best_self_hosted_offer_with_the_break_even_"
               "traffic"),)),
    Mutation("api-comparison-settled-whatever-the-likely-range", "flows/templates/_hosted_api.md.j2",
             "{%- if a.is_api_within_likely_range %}", "{%- if false %}",
             (("tests/test_model_api_prices.py::test_which_is_cheaper_is_not_settled_when_the_likely_range_holds_"
               "the_apis_cost"),)),
    Mutation("hosted-api-verdict-without-the-compared-offers-caveats", "flows/templates/_hosted_api.md.j2",
             "{%- if caveats %}", "{%- if false %}",
             (HOSTED_API_CAVEATS,)),
    Mutation("hosted-api-unverified-price-not-carried", "sql/marts/api_comparisons.sql",
             "        rankings.price_unverified, rankings.split_uncharged, rankings.chips\n",
             "        false as price_unverified, rankings.split_uncharged, rankings.chips\n",
             (HOSTED_API_CAVEATS,)),
    Mutation("hosted-api-uncharged-split-not-carried", "sql/marts/api_comparisons.sql",
             "        rankings.price_unverified, rankings.split_uncharged, rankings.chips\n",
             "        rankings.price_unverified, false as split_uncharged, rankings.chips\n",
             (HOSTED_API_CAVEATS,)),
    Mutation("a-history-chart-mixing-usd-and-kwh", "flows/charts.py",
             "    inner join current_pick on current_pick.outcome_metric = picks.outcome_metric\n",
             "    inner join current_pick on true\n",
             ("tests/test_charts.py::test_history_query_looks_back_over_the_last_runs_not_the_last_picks",)),
    Mutation("a-lifetime-without-its-training-passing-for-whole", "sql/intermediate/int_inference_costs_computed.sql",
             "        case when monthly_usd is not null and (trained_by is null or training_usd is not null)\n"
             "             then lifetime_usd(",
             "        case when monthly_usd is not null\n             then lifetime_usd(",
             ("tests/test_cost_model.py::test_lifetime_cost_adds_the_cheapest_training_run",)),
    Mutation("a-cpu-without-power-reads-as-no-cpu-offer", "sql/marts/cpu_baselines.sql",
             "        and (excluded.exclusion_reason like 'no published power for %'",
             "        and (excluded.exclusion_reason like 'no such reason %'",
             ("tests/test_cpu_baseline.py::test_a_cpu_without_a_figure_in_the_workloads_objective_says_so",)),
    Mutation("a-quote-priced-on-another-chip", "catalogs/expectations/price_sheet.json",
             '"column_A": "check_quoted_accelerator"', '"column_A": "check_catalog_accelerator"',
             ("tests/test_traps.py::test_quote_naming_another_accelerator_than_the_instance_has_is_quarantined",)),
    Mutation("a-discount-that-prices-nothing-unseen", "sql/intermediate/int_prices_unused.sql",
             "    where not exists (\n        select 1 from offers", "    where false and not exists (\n        select 1 from offers",
             ("tests/test_price_sheet.py::test_a_discount_that_matches_no_public_offer_is_listed_not_lost",)),
    Mutation("a-percent-escaped-lake-password-accepted", "flows/lake.py",
             "for text in (catalog, unquote(catalog)))", "for text in (catalog,))",
             ("tests/test_lake.py::test_a_lake_setting_that_cannot_work_names_the_variable",)),
    Mutation("a-migration-dropping-history-without-rankings", "flows/migrations.py",
             "    if orphans:\n", "    if False:\n",
             ("tests/test_migrations.py::test_history_rows_without_their_rankings_rows_refuse_the_migration_and_"
              "nothing_is_dropped",)),
    Mutation("a-manifest-of-any-size-checked", "flows/object_store.py",
             "    if not isinstance(objects, list) or len(objects) > MAX_OBJECTS:",
             "    if not isinstance(objects, list):",
             ("tests/test_object_store.py::test_a_manifest_past_its_bounds_or_out_of_shape_is_refused_in_one_line",)),
    Mutation("a-body-cut-short-read-as-whole", "flows/sources/_http.py",
             '    if body is not None and getattr(response, "length", None):', "    if False:",
             ("tests/test_source_http_live.py::test_a_body_cut_short_of_its_content_length_is_retried",)),
    Mutation("an-aws-5xx-fails-the-source-at-once", "flows/sources/_aws.py",
             "            if (code in THROTTLING_CODES or server_error) and throttled < attempts - 1:\n",
             "            if code in THROTTLING_CODES and throttled < attempts - 1:\n",
             ("tests/test_source_aws_live.py::test_a_service_still_failing_after_every_retry_fails_the_source",)),
    Mutation("a-failed-fan-out-fails-the-run", "flows/fetching.py",
             "            except Exception as exc:  # noqa: BLE001 (the fan-out itself",
             "            except ZeroDivisionError as exc:  # noqa: BLE001 (the fan-out itself",
             ("tests/test_fanout.py::test_a_fan_out_that_fails_whole_leaves_the_live_sources_stale_and_reads_the_"
              "files",)),
    Mutation("a-cloud-share-not-taken-fails-every-cloud", "flows/fetching.py",
             "                refused[cloud] = (\"not taken\" if kind == \"share\" else \"lost while its fetches ran\", what)\n",
             "                raise what\n",
             ("tests/test_fanout.py::test_a_cloud_whose_share_another_run_holds_leaves_only_its_own_sources_stale",
              *SLOW_TOO)),
    Mutation("an-offer-files-empty-field-kept-as-empty-text", "flows/sources/aws_offer_file.py",
             "allow_quoted_nulls=true", "allow_quoted_nulls=false",
             ("tests/test_source_aws_offer_file.py::test_a_run_reads_offer_files_into_arrow_and_types_them_as_the_rows_dicts_"
              "would_be",)),
    Mutation("an-offer-files-price-read-by-arrow-not-to-float", "flows/sources/aws_offer_file.py",
             'pa.array([to_float(text_) for text_ in columns["price_text"].to_pylist()], pa.float64())',
             'pc.cast(columns["price_text"], pa.float64(), safe=False)',
             ("tests/test_source_aws_offer_file.py::test_a_run_reads_offer_files_into_arrow_and_types_them_as_the_rows_dicts_"
              "would_be",)),
    Mutation("a-run-reads-offer-files-into-dicts", "flows/source_batches.py",
             "                if arrow:", "                if False:",
             ("tests/test_source_aws_offer_file.py::test_a_run_reads_offer_files_into_arrow_and_types_them_as_the_rows_dicts_"
              "would_be",)),
    Mutation("a-live-offer-file-fetched-into-dicts", "flows/source_batches.py",
             "        if arrow:  # into Arrow", "        if False:  # into Arrow",
             ("tests/test_source_aws_offer_file.py::test_a_live_offer_file_is_fetched_into_arrow_whole_or_as_a_fan_out_"
              "part",)),
    Mutation("a-live-offer-file-part-fetched-into-dicts", "flows/source_batches.py",
             "    if reads_tables(part.kind):  # into Arrow", "    if False:  # into Arrow",
             ("tests/test_source_aws_offer_file.py::test_a_live_offer_file_is_fetched_into_arrow_whole_or_as_a_fan_out_"
              "part",)),
    Mutation("an-arrow-batch-left-in-its-files-chunks", "flows/warehouse.py",
             "        column = data.column(name).combine_chunks()\n", "        column = data.column(name)\n",
             ("tests/test_source_aws_offer_file.py::test_a_run_reads_offer_files_into_arrow_and_types_them_as_the_rows_dicts_"
              "would_be",)),
    Mutation("an-arrow-batch-cast-from-any-type", "flows/warehouse.py",
             "            if not any(taken(column.type) for taken in _TAKEN[types[name]]):",
             "            if False:",
             ("tests/test_source_aws_offer_file.py::test_an_arrow_batch_a_column_cannot_take_is_rejected_whole_as_a_"
              "batch_of_dicts_is",)),
    Mutation("an-arrow-batch-not-cast-to-its-columns-types", "flows/warehouse.py",
             "        if arrow_type is not None and column.type != arrow_type:", "        if False:",
             ("tests/test_source_aws_offer_file.py::test_an_arrow_batch_a_column_cannot_take_is_rejected_whole_as_a_"
              "batch_of_dicts_is",)),
    Mutation("offer-file-drops-bare-metal", "flows/sources/aws_offer_file.py",
             'PRODUCT_FAMILIES = ("Compute Instance", "Compute Instance (bare metal)")',
             'PRODUCT_FAMILIES = ("Compute Instance",)',
             ("tests/test_cpu_baseline.py::test_the_offer_file_keeps_cpu_baseline_rows_and_drops_other_cpus",)),
    Mutation("offer-file-currency-not-checked", "catalogs/expectations/aws_pricing.json",
             '"name": "currency_usd"', '"name": "currency_usd_unused", "x": 1',
             ("tests/test_source_aws_offer_file.py::test_a_price_in_another_currency_is_quarantined_not_read_as_usd",)),
    Mutation("mlperf-float8-not-fp8", "flows/names.py", '"float8": "fp8", ', "",
             ("tests/test_source_mlperf.py::test_a_precision_spelled_float8_is_fp8_and_one_unknown_is_quarantined",)),
    Mutation("spot-timestamps-compared-as-text", "flows/sources/aws_spot.py",
             "            parsed = dt.datetime.fromisoformat(stamp.strip())\n",
             "            return stamp\n",
             ("tests/test_traps.py::test_the_latest_spot_price_is_the_latest_instant_however_its_timestamp_is_written",)),
    Mutation("digest-blind-to-column-names", "flows/transform.py",
             'return f"{count}:{total or 0}:{hashlib.sha256(repr(shape).encode()).hexdigest()[:16]}"',
             'return f"{count}:{total or 0}"',
             ("tests/test_incremental.py::test_a_model_that_only_swapped_two_column_names_rebuilds_the_models_reading_it",)),
    Mutation("mart-type-change-cast-down", "flows/transform.py",
             "            _widen(con, name, column, existing[column], data_type)\n", "            pass\n",
             ("tests/test_incremental.py::test_a_mart_column_whose_type_changed_is_widened_or_refused_never_cast_down",)),
    Mutation("reused-source-pages-not-kept", "flows/data_docs.py",
             "        shutil.copyfile(page, site_dir / relative)\n", "",
             ("tests/test_incremental.py::test_a_reused_sources_validation_page_is_kept_from_the_run_that_validated_it",)),
    Mutation("gx-favicon-left-one-folder-too-shallow", "flows/data_docs.py",
             "        _repoint_static(page, site_dir)\n    _prune_static(site_dir)\n", "    _prune_static(site_dir)\n",
             (DATA_DOCS_LINKS,)),
    Mutation("reused-pages-suite-page-not-kept", "flows/data_docs.py",
             'target.exists() or target == site_dir / "index.html":', 'target.exists() or "static/" not in link:',
             (DATA_DOCS_LINKS,)),
    Mutation("markdown-dollar-not-escaped", "flows/formatting.py", '#~$"}', '#~"}',
             ("tests/test_reports.py::test_a_dollar_sign_from_data_is_no_math",)),
    Mutation("backtest-caption-counts-doubtful-results", "flows/backtest_chart.py",
             "        rows = comparisons.filter(pl.col(\"phase\") == phase, ~DOUBTFUL)\n",
             "        rows = comparisons.filter(pl.col(\"phase\") == phase)\n",
             ("tests/test_charts.py::test_the_backtest_chart_counts_a_precision_doubtful_result_in_no_figure_and_marks_it",)),
    Mutation("query-runs-explain-analyze", "flows/query_command.py",
             "    if i < len(tokens) and word(i) in EXPLAIN_ANALYZE_WORDS:\n", "    if False:\n",
             ("tests/test_query_command.py::test_query_runs_queries_only",)),
    Mutation("workload-model-unchecked-against-its-task", "flows/catalog_models.py",
             "                if task is not None and task.model != wl.model:\n", "                if False:\n",
             ("tests/test_catalog.py::test_a_workload_must_serve_the_model_its_benchmark_task_measures",)),
    Mutation("undelivered-message-not-kept", "flows/notify.py",
             '    if status == "failed" and box is not None:\n', '    if False:\n',
             ("tests/test_notify.py::test_a_message_the_channel_refused_is_kept_and_sent_first_by_the_next_run",)),
    Mutation("kept-message-sent-again-every-run", "flows/outbox.py",
             "        self.path.unlink(missing_ok=True)\n\n    def refused", "        pass\n\n    def refused",
             ("tests/test_notify.py::test_a_message_the_channel_refused_is_kept_and_sent_first_by_the_next_run",)),
    Mutation("kept-messages-not-bounded", "flows/outbox.py",
             "max(0, len(kept) - MAX_KEPT)", "0",
             ("tests/test_notify.py::test_the_outbox_keeps_at_most_max_kept_a_channel_and_says_which_it_removed",)),
    Mutation("a-dead-runs-claim-never-taken-back", "flows/outbox.py",
             "        if taken_at is not None and time.time() - taken_at > CLAIM_STALE_S:\n", "        if False:\n",
             ("tests/test_notify.py::test_a_message_another_run_is_sending_is_left_to_it_until_that_run_is_presumed_"
              "dead",)),
    Mutation("model-only-training-task-calibrates", "sql/intermediate/int_training_backtest.sql",
             "        and tasks.tokens_per_sample is not null\n", "",
             ("tests/test_calibration.py", "tests/test_flow.py")),
    Mutation("a-live-fetchs-clock-never-started", "flows/source_batches.py",
             "limits=limits.started(), slots=cloud_slots", "limits=limits, slots=cloud_slots",
             ("tests/test_source_limits.py::test_max_fetch_s_declared_in_sources_yaml_bounds_a_live_source_from_the_"
              "start_of_its_fetch",)),
    Mutation("an-http-listing-unbounded-in-time", "flows/sources/_http.py",
             "        limits.check_time(what)  # the source's max_fetch_s, retries and their waits included\n", "",
             ("tests/test_source_limits.py::test_a_listing_that_never_ends_in_time_stops_at_max_fetch_s_long_before_"
              "max_pages", "tests/test_source_limits.py::test_a_fetch_past_its_deadline_sends_no_request")),
    Mutation("an-aws-retry-waited-past-max-fetch-s", "flows/sources/_aws.py",
             "                    limits.check_time(what, wait, cause=redact_text(f\"{code}: {message}\"))\n"
             "                    log.warning(\"%s: %s (%s); retrying page",
             "                    log.warning(\"%s: %s (%s); retrying page",
             ("tests/test_source_limits.py::test_a_throttled_aws_listing_does_not_wait_for_a_retry_past_max_fetch_s",)),
    Mutation("an-instance-type-of-any-length-lands", "catalogs/expectations/aws_pricing.json",
             '"column": "instance_type",\n    "max_value": 100\n', '"column": "instance_type",\n    "max_value": 100000\n',
             ("tests/test_traps.py::test_an_instance_type_region_or_zone_past_100_characters_is_quarantined_not_"
              "printed",)),
    Mutation("model-api-prices-checked-by-identity-only", "flows/land.py",
             '    "model_api_prices": ("cloud", "region", "api_model",', '    "_": ("cloud", "region", "api_model",',
             ("tests/test_price_jump.py::test_model_api_prices_that_moved_under_new_skus_are_compared_by_model_region_"
              "and_direction",)),
    Mutation("an-offer-file-download-waits-for-whole-chunks", "flows/sources/_download.py",
             "while chunk := response.read1(CHUNK_BYTES):", "while chunk := response.read(CHUNK_BYTES):",
             ("tests/test_source_http_live.py::test_a_response_that_trickles_in_is_cut_at_the_sources_max_fetch_s",)),
    Mutation("an-http-body-not-cut-at-max-fetch-s", "flows/sources/_http.py",
             "body = _read_body(response, limits.max_file_bytes, started + MAX_RESPONSE_S, limits.deadline)",
             "body = _read_body(response, limits.max_file_bytes, started + MAX_RESPONSE_S, None)",
             ("tests/test_source_http_live.py::test_a_response_that_trickles_in_is_cut_at_the_sources_max_fetch_s",)),
    Mutation("a-fanned-out-parts-clock-never-started", "flows/source_batches.py",
             "    limits = part.limits.started()  # the part's", "    limits = part.limits  # the part's",
             ("tests/test_source_limits.py::test_a_fanned_out_part_starts_its_own_clock",)),
    Mutation("a-kept-message-never-set-aside", "flows/outbox.py",
             "        aside = again.attempts >= MAX_ATTEMPTS\n", "        aside = False\n",
             ("tests/test_notify.py::test_a_message_refused_max_attempts_times_is_set_aside_and_the_next_is_tried",)),
    Mutation("a-claim-judged-by-its-file-time", "flows/outbox.py",
             "        taken_at = _claimed_at_s(claimed.name)\n", "        taken_at = claimed.stat().st_mtime\n",
             ("tests/test_notify.py::test_a_claim_is_judged_by_the_time_in_its_name_not_the_file_time_the_rename_"
              "kept",)),
    Mutation("a-run-dated-by-the-local-clock", "flows/pipeline.py",
             "    return dt.datetime.now(dt.UTC).date()\n", "    return dt.date.today()\n",
             ("tests/test_hostile_runs.py::test_a_run_given_no_as_of_is_dated_by_the_utc_date_whatever_the_machines_"
              "time_zone",)),
    Mutation("a-deployments-run-id-unchecked", "flows/nightly.py",
             "    run_id = pipeline.check_run_id(run_id) if run_id_given", "    run_id = run_id if run_id_given",
             ("tests/test_hostile_runs.py::test_a_deployments_parameters_are_refused_before_any_work",)),
    Mutation("another-dates-run-id-found-only-after-the-fetch", "flows/nightly.py",
             "        pipeline.check_run_id_unused_in(warehouse_path, run_id, as_of)", "        None",
             ("tests/test_hostile_runs.py::test_a_deployment_given_another_dates_run_id_is_refused_before_any_work",)),
    Mutation("another-dates-run-id-unchecked-on-the-copy-built", "flows/nightly.py",
             '        pipeline.check_run_id_unused(con, run_id, as_of, "the warehouse this run builds on")\n', "",
             ("tests/test_lake.py::test_a_run_id_another_date_has_in_the_lake_is_refused_before_landing", *SLOW_TOO)),
    Mutation("a-crashed-run-tells-no-one", "flows/nightly.py",
             "log_prints=True, on_crashed=[crash_notice.tell_of_a_crash])", "log_prints=True)",
             ("tests/test_changes.py::test_a_run_stopped_by_sigterm_is_crashed_and_tells_the_channel", *SLOW_TOO)),
    Mutation("a-signal-in-a-duckdb-query-fails-the-run", "flows/nightly.py",
             "        raise_the_signal_behind(exc)  # a run stopped by a signal", "        None  # ",
             ("tests/test_changes.py::test_a_run_stopped_in_a_duckdb_query_is_crashed_not_failed", *SLOW_TOO)),
    Mutation("a-signal-after-the-publish-is-a-failed-step", "flows/after_publish.py",
             "        raise_the_signal_behind(exc)\n        failed.append(", "        failed.append(",
             (("tests/test_changes.py::test_a_signal_behind_an_interrupted_duckdb_query_is_raised_again_and_an_"
               "interrupt_is_not"),)),
    Mutation("after-the-publish-a-failed-changes-read-drops-the-stale-events", "flows/after_publish.py",
             "    events += step(\"reading the run's changes\"", "    events = step(\"reading the run's changes\"",
             ("tests/test_object_store.py::test_each_step_after_the_publish_that_fails_is_recorded_and_the_steps_after_it_"
               "still_run",)),
    Mutation("after-the-publish-a-failed-artifacts-step-stops-the-upload", "flows/after_publish.py",
             "    step(\"making the Prefect artifacts\", lambda: publish_artifacts(warehouse_file, dated, as_of), failed)",
             "    publish_artifacts(warehouse_file, dated, as_of)",
             ("tests/test_object_store.py::test_each_step_after_the_publish_that_fails_is_recorded_and_the_steps_after_it_"
               "still_run",)),
    Mutation("after-the-publish-the-upload-skipped-after-a-failed-step", "flows/after_publish.py",
             "    if reports_target is not None:\n", "    if reports_target is not None and not failed:\n",
             ("tests/test_object_store.py::test_each_step_after_the_publish_that_fails_is_recorded_and_the_steps_after_it_"
               "still_run",)),
    Mutation("a-crash-notice-dropped-before-the-hook", "flows/crash_notice.py",
             "    except Exception:\n        NOTICES.pop(key, None)\n",
             "    except BaseException:\n        NOTICES.pop(key, None)\n",
             ("tests/test_changes.py::test_a_run_stopped_by_sigterm_is_crashed_and_tells_the_channel", *SLOW_TOO)),
    Mutation("a-crashed-run-not-tagged-as-told", "flows/crash_notice.py",
             "    tag_run(run.id, tags, TOLD_TAG, notice.attempt)\n", "    None\n",
             ("tests/test_changes.py::test_a_run_stopped_by_sigterm_is_crashed_and_tells_the_channel", *SLOW_TOO)),
    Mutation("crash-notice-not-triggered-by-a-crash", "prefect.yaml",
             "          - prefect.flow-run.Crashed\n", "          - prefect.flow-run.Completed\n",
             ("tests/test_deployments.py::test_a_nightly_run_crashed_before_its_flow_is_told_by_the_crash_notice_"
              "deployment", *SLOW_TOO)),
    # the back-test page (flows/estimates_page.py), on a hand-made marts.estimate_backtest
    Mutation("estimates-gpu-goal-counts-every-family", ESTIMATES_PAGE,
             '"and (? is null or family = ?) and loo_measurements > 0',
             '"and (? is null or ? is not null) and loo_measurements > 0',
             (f"{ESTIMATES_PAGE_TESTS}::test_the_gpu_serving_goal_counts_gpu_results_only",)),
    Mutation("estimates-every-comparison-listed", ESTIMATES_PAGE,
             "for c in comparisons[:COMPARISONS_LISTED]])", "for c in comparisons])",
             (f"{ESTIMATES_PAGE_TESTS}::{ESTIMATES_LISTED_TEST}",)),
    Mutation("estimates-unlisted-comparisons-untold", ESTIMATES_PAGE,
             "more_comparisons=max(0, len(comparisons) - COMPARISONS_LISTED),", "more_comparisons=0,",
             (f"{ESTIMATES_PAGE_TESTS}::{ESTIMATES_LISTED_TEST}",)),
    Mutation("estimates-uncalibrated-worst-counts-a-doubtful-result", ESTIMATES_PAGE,
             "max(abs(ratio - 1)) filter (not precision_doubtful) as uncalibrated_worst",
             "max(abs(ratio - 1)) as uncalibrated_worst",
             (f"{ESTIMATES_PAGE_TESTS}::test_the_summary_leaves_a_precision_doubtful_result_out_of_the_uncalibrated_"
              "worst",)),
    Mutation("crash-notice-repeats-a-crash-told", "flows/crash_notice.py",
             "    if told in run.tags:\n", "    if False:\n",
             ("tests/test_deployments.py::test_a_nightly_run_crashed_before_its_flow_is_told_by_the_crash_notice_"
              "deployment", *SLOW_TOO)),
    Mutation("crash-notice-tells-of-a-run-not-crashed", "flows/crash_notice.py",
             "if run.state is None or not (run.state.is_crashed() or run.state.is_cancelled()):",
             "if run.state is None:",
             ("tests/test_deployments.py::test_the_crash_notice_refuses_what_is_no_crashed_nightly_run", *SLOW_TOO)),
    # the quarantine rules that decide which prices land (flows/checks.py)
    Mutation("azure-low-priority-taken-as-on-demand", "flows/checks.py",
             "& ~azure_is_spot() & ~low_priority)", "& ~azure_is_spot())",
             ("tests/test_traps.py::test_an_azure_low_priority_price_is_not_taken_as_the_on_demand_price",)),
    Mutation("spot-checked-against-the-oldest-landed-on-demand", "flows/checks.py",
             "order by as_of desc, run_id desc) = 1", "order by as_of, run_id desc) = 1",
             ("tests/test_traps.py::test_aws_spot_is_compared_with_the_newest_landed_on_demand_price_not_the_oldest",)),
    Mutation("a-listing-overrides-instances-yaml", "flows/checks.py",
             'counts = {**(listed or {}), **{(cloud, t): (n, f) for cloud, t, n, f in reads["catalog_counts"]}}',
             'counts = {**{(cloud, t): (n, f) for cloud, t, n, f in reads["catalog_counts"]}, **(listed or {})}',
             ("tests/test_instance_hardware.py::"
              "test_instances_yaml_corrects_the_same_runs_listing_when_the_gpu_count_is_checked",)),
    Mutation("spot-checked-against-the-highest-price-list-on-demand", "flows/checks.py",
             "price < found[(region, instance_type)]", "price > found[(region, instance_type)]",
             ("tests/test_traps.py::"
              "test_aws_spot_is_checked_against_the_lowest_on_demand_price_across_the_runs_price_lists",)),
    Mutation("windows-spot-checked-against-linux-on-demand", "flows/checks.py",
             '            .filter(pl.col("product_description").is_in(sorted(_AWS_SPOT_LINUX)))\n', "",
             ("tests/test_traps.py::test_a_windows_spot_price_is_not_checked_against_the_linux_on_demand_price",)),
    Mutation("gcp-spot-checked-against-the-highest-on-demand-sku", "flows/checks.py",
             '.group_by(key).agg(_positive("price_usd").min()', '.group_by(key).agg(_positive("price_usd").max()',
             ("tests/test_traps.py::"
              "test_gcp_spot_is_checked_against_the_lowest_of_two_on_demand_skus_of_one_description",)),
    # the lake's settings (flows/lake.py)
    Mutation("a-spaced-lake-password-accepted", "flows/lake.py",
             're.search(r"password\s*=", text', 're.search(r"password=", text',
             ("tests/test_lake.py::test_a_lake_setting_that_cannot_work_names_the_variable",)),
    Mutation("a-line-break-in-a-lake-setting-accepted", "flows/lake.py",
             """if "'" in value or "\\n" in value:""", """if "'" in value:""",
             ("tests/test_lake.py::test_a_lake_setting_that_cannot_work_names_the_variable",)),
    Mutation("a-lake-setting-of-any-length-accepted", "flows/lake.py",
             "if len(value) > MAX_SETTING_CHARS:", "if False:",
             ("tests/test_lake.py::test_a_lake_setting_that_cannot_work_names_the_variable",)),
    Mutation("lake-commit-attempts-unbounded", "flows/lake.py",
             "if not 1 <= attempts <= MAX_COMMIT_ATTEMPTS:", "if not 1 <= attempts:",
             ("tests/test_lake.py::test_a_lake_setting_that_cannot_work_names_the_variable",)),
    # an offer ranked from a measurement, listed as excluded for its estimate too
    Mutation("a-measured-training-offer-also-excluded", "sql/intermediate/int_candidates_excluded.sql",
             "    anti join measured_training using (workload_id, offer_id)\n", "",
             ("tests/test_marts.py::test_an_offer_ranked_from_a_measurement_is_not_also_excluded_for_its_estimate",)),
    Mutation("a-measured-inference-offer-also-excluded", "sql/intermediate/int_candidates_excluded.sql",
             "    anti join measured_inference using (workload_id, offer_id, precision_class)\n", "",
             ("tests/test_marts.py::test_an_offer_ranked_from_a_measurement_is_not_also_excluded_for_its_estimate",)),
    Mutation("the-slowest-cpu-shown-as-closest", "sql/marts/cpu_baselines.sql",
             "run_hours, fastest_tpot_ms, fastest_prefill_ms,", "run_hours, fastest_tpot_ms desc, fastest_prefill_ms,",
             ("tests/test_cpu_baseline.py::test_the_closest_cpu_is_the_one_with_the_lowest_tpot",)),
    Mutation("an-api-with-only-an-input-price-compared", "sql/intermediate/int_api_costs_computed.sql",
             " and count(*) filter (where direction = 'output') > 0", "",
             ("tests/test_model_api_prices.py::test_an_api_that_lists_only_an_input_price_is_not_compared",)),
    Mutation("the-runs-server-in-its-process-group", "flows/prefect_server.py",
             "        own_session = sys.platform == \"linux\" and threading", "        own_session = False and threading",
             ("tests/test_changes.py::test_ctrl_c_at_the_terminal_tells_the_channel_and_stops_the_runs_own_server",
              "tests/test_changes.py::test_the_runs_own_server_ends_when_the_run_is_killed_outright", *SLOW_TOO)),
    Mutation("a-crash-hook-tags-told-before-it-sends", "flows/crash_notice.py",
             "    tags = tag_run(run.id, run.tags, TELLING_TAG, notice.attempt)\n",
             "    tags = tag_run(run.id, run.tags, TOLD_TAG, notice.attempt)\n",
             ("tests/test_deployments.py::test_a_hook_stopped_while_it_tells_leaves_the_crash_to_the_notice", *SLOW_TOO)),
    Mutation("a-run-not-tagged-after-its-own-message", "flows/crash_notice.py",
             "        if self.told_channels:\n", "        if False:\n",
             ("tests/test_changes.py::test_a_run_stopped_after_it_told_its_channel_tells_it_once", *SLOW_TOO)),
    Mutation("crash-notice-tells-of-another-projects-nightly", "flows/crash_notice.py",
             "        if flow_name != NIGHTLY_FLOW or HWEVAL_TAG not in run.tags:\n",
             "        if flow_name != NIGHTLY_FLOW:\n",
             ("tests/test_deployments.py::test_a_nightly_run_crashed_before_its_flow_is_told_by_the_crash_notice_deployment", *SLOW_TOO)),
    Mutation("crash-notice-triggered-by-another-projects-nightly", "prefect.yaml",
             "          - prefect.resource.role: tag\n            prefect.resource.id: prefect.tag.hweval\n", "",
             ("tests/test_deployments.py::test_a_nightly_run_crashed_before_its_flow_is_told_by_the_crash_notice_deployment", *SLOW_TOO)),
    Mutation("crash-notice-takes-a-forged-run-id", "flows/crash_notice.py",
             "given if isinstance(given, str) and RUN_ID_PATTERN.fullmatch(given) else",
             "given if isinstance(given, str) else",
             ("tests/test_deployments.py::test_the_crash_notice_takes_only_what_the_crashed_runs_parameters_may_hold", *SLOW_TOO)),
    Mutation("crash-notice-takes-a-path-of-any-length", "flows/crash_notice.py",
             "    if not isinstance(value, str) or len(value) > MAX_PARAMETER_CHARS or",
             "    if not isinstance(value, str) or",
             ("tests/test_deployments.py::test_the_crash_notice_takes_only_what_the_crashed_runs_parameters_may_hold", *SLOW_TOO)),
    Mutation("crash-notice-quiet-for-a-hook-that-only-began", "flows/crash_notice.py",
             "    if told in run.tags:\n", "    if told in run.tags or telling in run.tags:\n",
             ("tests/test_deployments.py::test_a_hook_stopped_while_it_tells_leaves_the_crash_to_the_notice", *SLOW_TOO)),
    Mutation("crash-notice-does-not-wait-for-a-hook-telling", "flows/crash_notice.py",
             "        while telling in run.tags and told not in run.tags and time.monotonic() < deadline:\n",
             "        while False:\n",
             ("tests/test_deployments.py::test_the_notice_waits_for_a_hook_that_is_telling_and_stays_quiet_once_it_told", *SLOW_TOO)),
    Mutation("crash-marks-of-an-earlier-attempt-taken", "flows/crash_notice.py",
             "    running = [s for s in states[starts[-1] + 1 if starts else 0:] if",
             "    running = [s for s in states if",
             ("tests/test_deployments.py::test_a_retried_run_that_crashes_is_told_though_an_earlier_attempt_told", *SLOW_TOO)),
    Mutation("a-crash-told-again-to-a-channel-that-took-the-message", "flows/crash_notice.py",
             " if c_id not in notice.told_channels", "",
             ("tests/test_changes.py::test_a_run_stopped_while_it_tells_is_told_of_to_the_channels_it_had_not_told", *SLOW_TOO)),
    Mutation("a-crash-hook-logging-without-a-run-context", "flows/crash_notice.py",
             "notify.log_deliveries(flow_run_logger(run),", "notify.log_deliveries(get_run_logger(),",
             ("tests/test_changes.py::test_a_run_stopped_by_sigterm_is_crashed_and_tells_the_channel", *SLOW_TOO)),
    Mutation("a-same-date-rerun-refused-its-run-id", "flows/pipeline.py",
             "where run_id = ? and as_of <> ?\", [run_id, as_of]", "where run_id = ?\", [run_id]",
             ("tests/test_hostile_runs.py::test_a_run_id_names_one_dates_run",)),
    Mutation("a-run-id-ending-in-a-newline-passes", "flows/pipeline.py",
             "RUN_ID_PATTERN.fullmatch(run_id)", "RUN_ID_PATTERN.match(run_id)",
             ("tests/test_hostile_runs.py::test_a_run_id_is_a_file_name_of_at_most_64_characters",)),
    Mutation("a-passing-read-error-sets-a-message-aside", "flows/outbox.py",
             "        except ValueError as exc:  # what it holds is no kept message: set aside, named\n",
             "        except (ValueError, OSError) as exc:\n",
             ("tests/test_notify.py::test_a_read_error_that_may_pass_keeps_the_message_for_the_next_run",)),
    Mutation("a-fifo-in-the-outbox-read-as-a-file", "flows/outbox.py",
             "        if not stat.S_ISREG(mode):\n", "        if False:\n",
             ("tests/test_notify.py::test_a_fifo_or_a_link_in_the_outbox_is_set_aside_unread_and_the_channel_still_"
              "told",)),
    Mutation("notification-secret-decoded-unmasked", "flows/notify.py",
             "from urllib.parse import unquote, unquote_plus\n", "unquote = unquote_plus = str\n",
             ("tests/test_notify.py::test_a_percent_escaped_secret_reaches_the_log_in_no_form",)),
    Mutation("price-check-by-identity-only", "flows/land.py",
             "    things = PRICED_THINGS.get(batch.table)\n", "    things = None\n",
             ("tests/test_price_jump.py::test_prices_that_moved_under_new_skus_are_compared_by_what_they_price",)),
    Mutation("spot-checked-against-quarantined-copies", "flows/checks.py",
             "    return frame.filter(~pl.col(\"row_no\").is_in(duplicates)) if duplicates else frame\n",
             "    return frame\n",
             ("tests/test_traps.py::test_spot_is_not_checked_against_an_on_demand_price_that_is_itself_quarantined",
              "tests/test_traps.py::test_azure_spot_is_not_checked_against_a_quarantined_on_demand_copy")),
    # ---------------------------------------------------------------- issue 15: counted in n log n, scans bounded    # ---------------------------------------------------------------- issue 15: counted in n log n, scans bounded    # ---------------------------------------------------------------- issue 15: counted in n log n, scans bounded    # ---------------------------------------------------------------- issue 15: counted in n log n, scans bounded    # ---------------------------------------------------------------- issue 15: counted in n log n, scans bounded
    Mutation("reversals-count-outcome-ties", MACROS,
             "        and blocks.outcome_value > lookups.outcome_value\n",
             "        and blocks.outcome_value >= lookups.outcome_value\n", ("tests/test_macros.py",)),
    Mutation("reversals-miss-the-largest-block", MACROS,
             "unnest(range(0, cast(ceil(log2(max(cheaper) + 2)) as bigint)))",
             "unnest(range(0, cast(ceil(log2(max(cheaper) + 2)) as bigint) - 1))", ("tests/test_macros.py",)),
    Mutation("reversals-look-in-the-blocks-left-out", MACROS,
             "where by_price.outcome_value is not null and (by_price.place >> levels.level) & 1 = 0\n",
             "where by_price.outcome_value is not null and (by_price.place >> levels.level) & 1 = 1\n",
             ("tests/test_macros.py",)),
    Mutation("reversals-of-a-twice-listed-candidate-not-added", MACROS,
             "select workload_id, candidate_id, coalesce(sum(counted.reversals), 0)::bigint as reversals",
             "select workload_id, candidate_id, coalesce(max(counted.reversals), 0)::bigint as reversals",
             ("tests/test_macros.py",)),
    Mutation("reversals-workloads-numbered-alike", MACROS,
             "case when workload_id is not null then dense_rank() over (order by workload_id) end as workload_key,",
             "1 as workload_key,", ("tests/test_macros.py",)),
    Mutation("reversals-rows-without-a-workload-in-one", MACROS,
             "case when workload_id is not null then dense_rank() over (order by workload_id) end as workload_key,",
             "dense_rank() over (order by workload_id) as workload_key,", ("tests/test_macros.py",)),
    Mutation("memory-limit-not-given-to-the-warehouse", "flows/warehouse.py",
             "config=duckdb_settings.config(**STORAGE_COMPATIBILITY)", "config=STORAGE_COMPATIBILITY",
             ("tests/test_duckdb_settings.py",)),
    Mutation("memory-limit-floor-in-decimal-megabytes", "flows/duckdb_settings.py",
             "MIN_MEMORY_LIMIT_BYTES = 256 * 2**20", "MIN_MEMORY_LIMIT_BYTES = 256 * 10**6",
             ("tests/test_duckdb_settings.py",)),
    Mutation("memory-limit-not-read-by-duckdb-first", "flows/duckdb_settings.py",
             "    refused = _refused_by_duckdb(text)\n", "    refused = None\n", ("tests/test_duckdb_settings.py",)),
    Mutation("offer-scan-out-of-memory-blamed-on-the-file", "flows/sources/aws_offer_file.py",
             "    except duckdb.OutOfMemoryException as exc:", "    except ZeroDivisionError as exc:",
             ("tests/test_duckdb_settings.py",)),
    Mutation("memory-limit-not-checked-before-the-run", "flows/run_command.py",
             "    duckdb_settings.memory_limit()  # an HWEVAL_DUCKDB_MEMORY_LIMIT that is no size DuckDB can run in\n",
             "", ("tests/test_duckdb_settings.py",)),
    Mutation("threads-not-given-to-the-connections", "flows/duckdb_settings.py",
             '| ({"threads": count} if count is not None else {}))', "| {})", ("tests/test_duckdb_settings.py",)),
    Mutation("threads-of-none-accepted", "flows/duckdb_settings.py",
             "and 1 <= int(text) <= MAX_THREADS):", "and 0 <= int(text) <= MAX_THREADS):",
             ("tests/test_duckdb_settings.py",)),
    Mutation("threads-not-checked-before-the-run", "flows/run_command.py",
             "    duckdb_settings.threads()  # an HWEVAL_DUCKDB_THREADS that is no number of threads\n", "",
             ("tests/test_duckdb_settings.py",)),
    Mutation("memory-limit-not-checked-by-the-flow", "flows/nightly.py",
             "    duckdb_settings.memory_limit()  # HWEVAL_DUCKDB_MEMORY_LIMIT, read by each DuckDB connection\n", "",
             ("tests/test_duckdb_settings.py",)),
    Mutation("threads-not-checked-by-the-flow", "flows/nightly.py",
             "    duckdb_settings.threads()  # HWEVAL_DUCKDB_THREADS, likewise\n", "", ("tests/test_duckdb_settings.py",)),
    Mutation("server-ignoring-its-stop-left-running-at-exit", "flows/prefect_server.py",
             "            _kill_if_still_running(process, STOP_WAIT_S)\n", "", ("tests/test_prefect_server.py",)),
    Mutation("server-killed-at-exit-without-its-wait", "flows/prefect_server.py",
             '"if not select.select([fd], [], [], wait_s)[0]:\\n"', '"if True:\\n"', ("tests/test_prefect_server.py",)),
    Mutation("azure-link-back-to-the-first-page-not-seen", "flows/sources/_http.py",
             "        self.keys = {page_key(first_url)}", "        self.keys = set()",
             ("tests/test_source_http_live.py", "tests/test_source_instance_types.py")),
    Mutation("azure-link-back-to-an-earlier-page-followed", "flows/sources/_http.py",
             "        if key in self.keys:\n", "        if False:\n",
             ("tests/test_source_http_live.py", "tests/test_source_instance_types.py")),
    Mutation("headers-that-trickle-in-not-cut", "flows/sources/_http.py",
             "            with _cut_at(*_response_deadline(started + MAX_RESPONSE_S, limits.deadline)) as request_cut:\n",
             "            with contextlib.nullcontext(_Cut(float('inf'))) as request_cut:\n",
             ("tests/test_source_http_live.py::test_a_header_that_trickles_in_is_cut_at_the_responses_deadline",)),
    Mutation("offer-file-headers-that-trickle-in-not-cut", "flows/sources/_http.py",
             "        with _cut_at(*_response_deadline(time.monotonic() + MAX_RESPONSE_S, fetch_deadline)):\n",
             "        with contextlib.nullcontext():\n",
             ("tests/test_source_http_live.py::test_a_response_that_trickles_in_is_cut_at_the_sources_max_fetch_s",)),
    Mutation("a-cut-that-shuts-nothing", "flows/sources/_http.py",
             "        socket.socket.shutdown(sock, socket.SHUT_RDWR)", "        pass",
             ("tests/test_source_http_live.py::test_a_response_that_trickles_in_is_cut_at_the_sources_max_fetch_s",)),
    Mutation("a-late-timer-shuts-a-finished-requests-sockets", "flows/sources/_http.py",
             "            if self.done:\n                return\n", "",
             ("tests/test_source_http_live.py::test_a_cut_whose_timer_fires_as_its_request_ends_shuts_nothing",)),
    Mutation("an-error-body-read-with-its-cut-stopped", "flows/sources/_http.py",
             "                    request_cut.answer_came()\n", "                    request_cut.timer.cancel()\n",
             ("tests/test_source_http_live.py::test_an_error_body_that_stops_coming_is_cut_at_the_responses_deadline_"
              "and_its_status_said",)),
    Mutation("an-error-whose-status-came-turned-into-a-timeout", "flows/sources/_http.py",
             "                    request_cut.answer_came()\n", "",
             ("tests/test_source_http_live.py::test_an_error_body_that_stops_coming_is_cut_at_the_responses_deadline_"
              "and_its_status_said",)),
    Mutation("an-answer-said-after-the-cut-taken-as-in-time", "flows/sources/_http.py",
             "            self.answered = not self.fired\n", "            self.answered = True\n",
             ("tests/test_source_http_live.py::test_an_error_status_whose_headers_trickle_in_is_cut_as_a_timeout_not_"
              "taken_for_the_error",)),
    Mutation("an-http-error-left-open-behind-its-message", "flows/sources/_http.py",
             "            exc.close()\n            status = exc.code\n", "            status = exc.code\n",
             ("tests/test_source_http_live.py::test_an_error_body_that_stops_coming_is_cut_at_the_responses_deadline_"
              "and_its_status_said",)),
    Mutation("a-cut-that-ignores-an-answer-came", "flows/sources/_http.py",
             "        if cut.fired and not cut.answered:\n            if isinstance",
             "        if cut.fired:\n            if isinstance",
             ("tests/test_source_http_live.py::test_a_cut_raises_an_error_answered_in_time_as_it_is_and_turns_any_"
              "other_into_a_timeout_closed",)),
    Mutation("an-error-turned-into-a-timeout-left-open", "flows/sources/_http.py",
             "                exc.close()\n            raise TimeoutError(why) from exc",
             "                pass\n            raise TimeoutError(why) from exc",
             ("tests/test_source_http_live.py::test_a_cut_raises_an_error_answered_in_time_as_it_is_and_turns_any_"
              "other_into_a_timeout_closed",)),
    Mutation("a-tie-at-the-dearest-zone-leads", "sql/marts/decisions.sql",
             "outcome_key(picks.outcome_at_highest_zone) < outcome_key(runners_up.outcome_value)",
             "outcome_key(picks.outcome_at_highest_zone) <= outcome_key(runners_up.outcome_value)",
             ("tests/test_marts.py::test_a_pick_that_ties_the_runner_up_at_its_dearest_zone_does_not_lead_there",)),
    Mutation("hosted-api-tie-goes-to-another-offer-than-the-decisions", "sql/marts/api_comparisons.sql",
             "order by outcome_key(outcome_value), usd_per_chip_hour, candidate_id) = 1",
             "order by outcome_key(outcome_value), usd_per_chip_hour, candidate_id desc) = 1",
             ("tests/test_model_api_prices.py::test_a_tie_for_the_pick_gives_the_api_the_same_self_hosted_offer_as_the_"
              "decision",)),
    Mutation("an-aws-page-not-bounded-by-max-fetch-s", "flows/sources/_aws.py",
             "    if limits.deadline is None:\n        return next(listing, _LAST)",
             "    if True:\n        return next(listing, _LAST)",
             ("tests/test_source_limits.py::test_an_aws_page_that_trickles_in_is_given_up_at_max_fetch_s",)),
    Mutation("an-aws-page-waited-for-past-its-deadline", "flows/sources/_aws.py",
             "    answered.wait(max(0.0, limits.deadline - time.monotonic()))",
             "    answered.wait()",
             ("tests/test_source_limits.py::test_an_aws_page_that_trickles_in_is_given_up_at_max_fetch_s",)),
    Mutation("a-ctrl-c-is-a-traceback", "flows/cli.py",
             "        _ending_by_ctrl_c(INTERRUPTED)\n        raise\n    except BaseException",
             "        raise\n    except BaseException",
             ("tests/test_cli.py::test_a_ctrl_c_ends_a_command_in_one_line_by_sigint_not_a_traceback",)),
    Mutation("a-chart-worker-takes-the-runs-ctrl-c", "flows/chart_workers.py",
             "    leave_ctrl_c_to_the_parent()\n    threading.Thread(target=exit_with_parent, name=\"hweval-chart-worker-parent\"",
             "    threading.Thread(target=exit_with_parent, name=\"hweval-chart-worker-parent\"",
             ("tests/test_charts.py::test_a_chart_worker_leaves_a_ctrl_c_to_the_run",)),
    Mutation("the-gx-process-takes-the-runs-ctrl-c", "flows/gx_process.py",
             "    leave_ctrl_c_to_the_parent()\n", "",
             ("tests/test_gx_process.py::test_the_gx_process_leaves_a_ctrl_c_to_the_run",)),
    Mutation("an-aws-page-given-up-on-parsed-all-the-same", "flows/sources/_aws.py",
             "        if given_up.is_set():  # a page the fetch gave up on", "        if False:  # a page the fetch gave up on",
             ("tests/test_source_limits.py::test_an_aws_page_given_up_on_is_not_parsed_and_the_next_listing_of_its_"
              "client_is",)),
    Mutation("an-aws-page-given-up-on-leaves-its-check-on-the-client", "flows/sources/_aws.py",
             "            if left_behind:\n                when_it_ends()\n", "",
             ("tests/test_source_limits.py::test_an_aws_page_given_up_on_is_not_parsed_and_the_next_listing_of_its_"
              "client_is",)),
    Mutation("a-chart-worker-spawned-open-to-ctrl-c", "flows/worker_processes.py",
             "        with spawning_without_ctrl_c():\n            return super().submit(",
             "        with contextlib.nullcontext():\n            return super().submit(",
             ("tests/test_charts.py::test_a_pool_spawns_its_workers_with_sigint_blocked_and_this_thread_gets_it_back",)),
    Mutation("a-worker-keeps-sigint-blocked", "flows/worker_processes.py",
             "    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})\n", "",
             ("tests/test_charts.py::test_a_chart_worker_leaves_a_ctrl_c_to_the_run",)),
    Mutation("the-gx-process-shares-tqdms-lock", "flows/gx_process.py",
             "    tqdm.tqdm.set_lock(threading.RLock())\n", "",
             ("tests/test_gx_process.py::test_the_gx_process_shares_no_lock_that_its_kill_would_leave_behind",)),
    Mutation("a-ctrl-c-waits-for-the-gx-answer", "flows/gx_process.py",
             "            answer, records = answer_of(future)\n", "            answer, records = future.result()\n",
             ("tests/test_gx_process.py::test_a_ctrl_c_reaches_the_run_as_it_waits_for_the_gx_process",)),
    Mutation("trained-at-said-where-the-workload-asks-none", "flows/reports.py",
             "precision_class(rankings.precision) <> precision_class(workloads.training_precision)",
             "precision_class(rankings.precision) is distinct from precision_class(workloads.training_precision)",
             ("tests/test_reports.py::test_the_rows_trained_at_another_precision_are_mlperf_trainings_of_another_class_"
              "than_their_workload_asks",)),
    Mutation("an-error-a-ctrl-c-caused-is-a-traceback", "flows/cli.py",
             "        read[id(exc)] = (isinstance(exc, KeyboardInterrupt)\n", "        read[id(exc)] = (False\n",
             ("tests/test_cli.py::test_a_ctrl_c_ends_a_command_in_one_line_by_sigint_not_a_traceback",)),
    Mutation("a-ctrl-c-behind-any-error-read-one-cause-deep", "flows/cli.py",
             "    if depth > MAX_CAUSES:", "    if depth > 1:",
             ("tests/test_cli.py::test_a_ctrl_c_ends_a_command_in_one_line_by_sigint_not_a_traceback",)),
    Mutation("every-error-read-as-a-ctrl-c", "flows/cli.py",
             "        if isinstance(exc, SystemExit) or not _is_ctrl_c(exc):\n            raise\n", "",
             ("tests/test_cli.py::test_a_ctrl_c_ends_a_command_in_one_line_by_sigint_not_a_traceback",)),
    Mutation("a-group-holding-one-ctrl-c-read-as-a-ctrl-c", "flows/cli.py",
             "and all(_is_ctrl_c(member, depth + 1, read)", "and any(_is_ctrl_c(member, depth + 1, read)",
             ("tests/test_cli.py::test_a_ctrl_c_ends_a_command_in_one_line_by_sigint_not_a_traceback",)),
    Mutation("a-group-of-ctrl-cs-a-traceback", "flows/cli.py",
             "                         or (isinstance(exc, BaseExceptionGroup)\n", "                         or (False\n",
             ("tests/test_cli.py::test_a_ctrl_c_ends_a_command_in_one_line_by_sigint_not_a_traceback",)),
    Mutation("a-ctrl-c-in-a-group-not-caught", "flows/cli.py",
             "    except BaseException as exc:  # SystemExit", "    except Exception as exc:  # SystemExit",
             ("tests/test_cli.py::test_a_ctrl_c_ends_a_command_in_one_line_by_sigint_not_a_traceback",)),
    Mutation("a-group-raised-from-a-ctrl-c-a-traceback", "flows/cli.py",
             "                         or (cause is not None and _is_ctrl_c(cause, depth + 1, read))\n", "",
             ("tests/test_cli.py::test_a_ctrl_c_ends_a_command_in_one_line_by_sigint_not_a_traceback",)),
    Mutation("an-exit-raised-from-a-ctrl-c-read-as-one", "flows/cli.py",
             "        if isinstance(exc, SystemExit) or not _is_ctrl_c(exc):", "        if not _is_ctrl_c(exc):",
             ("tests/test_cli.py::test_a_ctrl_c_ends_a_command_in_one_line_by_sigint_not_a_traceback",)),
    Mutation("a-query-ctrl-c-exits-130-and-a-script-goes-on", "flows/cli.py",
             "    if code == EXIT_INTERRUPTED:\n", "    if False:\n",
             ("tests/test_cli.py::test_a_ctrl_c_ends_a_command_in_one_line_by_sigint_not_a_traceback",)),
    Mutation("an-error-raised-while-a-ctrl-c-was-handled-hidden", "flows/cli.py",
             "        cause = exc.__cause__\n", "        cause = exc.__cause__ or exc.__context__\n",
             ("tests/test_cli.py::test_a_ctrl_c_ends_a_command_in_one_line_by_sigint_not_a_traceback",)),
    Mutation("a-cut-timer-started-outside-its-cleanup", "flows/sources/_http.py",
             "    _cutting.cut = cut\n    try:\n        cut.timer.start()\n",
             "    _cutting.cut = cut\n    cut.timer.start()\n    try:\n",
             ("tests/test_source_http_live.py::test_a_cut_whose_timer_cannot_start_leaves_no_cut_behind",)),
    Mutation("tls-handshake-not-watched", "flows/sources/_http.py",
             "            context.sslsocket_class = _WatchedTLSSocket", "            pass",
             ("tests/test_source_http_live.py::test_a_tls_handshake_that_trickles_in_is_cut_at_the_responses_"
              "deadline",)),
    Mutation("a-socket-made-after-the-cut-left-open", "flows/sources/_http.py",
             "        if fired:\n            _shut(sock)\n", "",
             ("tests/test_source_http_live.py::test_a_connection_made_once_its_deadline_has_passed_is_shut_at_once",)),
    Mutation("tcp-sockets-not-watched", "flows/sources/_http.py",
             "                cut.watch(sock)\n                return sock", "                return sock",
             ("tests/test_source_http_live.py::test_a_body_that_stops_coming_is_cut_at_the_responses_deadline",)),
    Mutation("a-cut-read-as-headers-that-ended", "flows/sources/_http.py",
             "    if cut.fired and not cut.answered:\n        raise TimeoutError(why)\n", "",
             ("tests/test_source_http_live.py::test_a_header_that_trickles_in_is_cut_at_the_responses_deadline",)),
    Mutation("a-cut-outlives-its-request", "flows/sources/_http.py",
             "        cut.timer.cancel()", "        pass",
             ("tests/test_source_http_live.py::test_a_response_within_its_deadline_is_not_cut_after_it",)),
    Mutation("page-links-compared-as-written", "flows/sources/_http.py",
             'return scheme, tuple(host), urllib.parse.unquote(split.path) or "/", tuple(sorted(query))',
             "return (url,)", ("tests/test_source_http_live.py", "tests/test_source_instance_types.py")),
    Mutation("page-links-skip-0-not-the-first-page", "flows/sources/_http.py",
             '        if name == "$skip" and value.strip() and not value.strip().strip("0"):  # 0, 00: not int(), which '
             'reads ²\n            continue\n', "",
             ("tests/test_source_http_live.py",)),
    Mutation("page-links-skip-read-by-int", "flows/sources/_http.py",
             'if name == "$skip" and value.strip() and not value.strip().strip("0"):',
             'if name == "$skip" and value.strip().isdigit() and int(value) == 0:',
             ("tests/test_source_http_live.py::test_a_page_key_reads_a_url_as_the_page_it_names_not_as_it_is_"
              "written",)),
    Mutation("page-links-query-compared-in-its-order", "flows/sources/_http.py",
             'or "/", tuple(sorted(query))', 'or "/", tuple(query)', ("tests/test_source_http_live.py",)),
    Mutation("page-links-default-port-as-written", "flows/sources/_http.py",
             'return scheme, parts.hostname, parts.port or {"http": 80, "https": 443}.get(scheme)',
             "return scheme, parts.hostname, parts.port", ("tests/test_source_http_live.py",)),
    Mutation("page-links-odata-option-case-as-written", "flows/sources/_http.py",
             "            name = name.lower()\n", "            pass\n", ("tests/test_source_http_live.py",)),
    Mutation("first-pass-counts-always", "flows/validate.py",
             '{"result_format": "BASIC" if counts else "BOOLEAN_ONLY"}', '{"result_format": "BASIC"}',
             ("tests/test_guards.py", "tests/test_gx_process.py")),
    Mutation("kept-batch-validated-without-counts", "flows/gx_process.py",
             "parameters, counts=keep)  # counts: for the Data Docs", "parameters, counts=False)",
             ("tests/test_gx_process.py",)),
    Mutation("unkept-batch-validated-with-counts", "flows/gx_process.py",
             "parameters, counts=keep)  # counts: for the Data Docs", "parameters, counts=True)",
             ("tests/test_gx_process.py",)),
    Mutation("excluded-cell-counts-names-as-offers", "flows/reports.py",
             'names_are_offers = reason["labels"] == reason["offers"] and reason["most_offers_a_label"] == 1',
             'names_are_offers = reason["labels"] == reason["offers"]',
             ("tests/test_reports.py",)),
    Mutation("server-not-stopped-when-its-watchdog-cannot-start", "flows/prefect_server.py",
             "    except OSError as exc:\n        log.warning(\"the temporary server's watchdog",
             "    except ZeroDivisionError as exc:\n        log.warning(\"the temporary server's watchdog",
             ("tests/test_prefect_server.py",)),
    Mutation("excluded-cell-names-at-two-precisions-taken-for-offers", "flows/reports.py",
             'names_are_offers = reason["labels"] == reason["offers"] and reason["most_offers_a_label"] == 1',
             'names_are_offers = reason["most_offers_a_label"] == 1', ("tests/test_reports.py",)),
    Mutation("make-tests-fuzz-drawn-anew-each-run", "tests/test_fuzz_sources.py",
             "database=None, derandomize=derandomize)", "database=None, derandomize=False)",
             ("tests/test_fuzz_sources.py::test_make_tests_examples_are_the_same_every_run_and_make_fuzzs_are_"
              "drawn_anew",)),
    Mutation("history-chart-over-the-last-picks", "flows/charts.py",
             "        and as_of >= (select min(as_of) from last_runs)\n),", "\n),", ("tests/test_charts.py",)),
    Mutation("a-charts-text-read-as-math", "flows/chart_kit.py",
             '    matplotlib.rcParams["text.parse_math"] = False\n', "",
             ("tests/test_charts.py::test_a_dollar_sign_in_a_label_from_data_is_drawn_as_written_not_read_as_math",)),
    Mutation("an-underscore-from-data-opens-emphasis", "flows/formatting.py",
             r'r"(?<![^\W_])_|_(?![^\W_])"', 'r"(?!)"',
             ("tests/test_reports.py::test_text_from_data_opens_no_emphasis_or_strikethrough",)),
    Mutation("a-csv-cell-runs-as-a-formula", "flows/report_templates.py",
             """    frame.with_columns(pl.col(text).str.replace(FORMULA_START, "'$1")).write_csv(buffer)\n""",
             "    frame.write_csv(buffer)\n",
             ("tests/test_reports.py::test_a_csv_cell_a_spreadsheet_would_run_as_a_formula_is_written_as_text",)),
    Mutation("a-source-whose-every-row-is-quarantined-lands-none", "flows/land.py",
             "    if batch.rows_in and not passed.num_rows:\n", "    if False:\n",
             ("tests/test_guards.py::test_a_batch_whose_every_row_is_quarantined_leaves_its_source_stale_on_its_last_"
              "good_rows",)),
    Mutation("hweval-query-reads-and-writes-files", "flows/query_command.py",
             "config = duckdb_settings.config(enable_external_access=False, lock_configuration=True,",
             "config = duckdb_settings.config(",
             ("tests/test_query_command.py::test_query_can_read_no_file_other_than_the_warehouse",)),
    Mutation("hweval-query-runs-any-statement", "flows/query_command.py", "        if refused:\n", "        if False:\n",
             ("tests/test_query_command.py::test_query_runs_queries_only",)),
    Mutation("a-json-key-given-twice-keeps-the-last", "flows/sources/_common.py",
             ", object_pairs_hook=_unique_keys)", ")",
             ("tests/test_source_limits.py::test_a_key_given_twice_in_one_json_object_is_a_format_error_naming_both_"
              "places",)),
    Mutation("a-typo-in-a-run-flag-fails-the-flow-run", "flows/run_command.py",
             "    check_run_inputs(args, source_files)  # on the catalog just loaded, while the server starts\n", "",
             ("tests/test_cli.py::test_run_refuses_a_source_or_accept_changes_that_names_nothing_before_it_starts",)),
    Mutation("a-chart-module-left-out-of-the-pngs-key", "flows/chart_kit.py",
             '"charts.py", "frontier_chart.py", ', '"charts.py", ',
             ("tests/test_charts.py::test_every_module_that_makes_a_chart_is_in_the_drawing_code_that_keys_its_png",)),
    Mutation("compaction-keeps-a-backfilled-month", "flows/compaction.py",
             '    con.execute("delete from ops.compacted_months where month = ?", [month_start(as_of)])\n', "",
             ("tests/test_compaction.py",)),
    Mutation("compaction-sorts-by-date-first", "flows/compaction.py",
             'orders[mart] = [c for c in grain if c != "as_of"] + ["as_of"]',
             'orders[mart] = ["as_of"] + [c for c in grain if c != "as_of"]', ("tests/test_compaction.py",)),
    Mutation("migration-ignores-the-stored-picks", "flows/migrations.py",
             "        where r.is_pick is null and h.as_of = r.as_of and h.candidate_id = r.candidate_id\n",
             "        where false\n", ("tests/test_migrations.py",)),
    Mutation("temporary-server-port-taken-not-retried", "flows/prefect_server.py",
             "            if status == PORT_IN_USE and attempts < MAX_PORT_ATTEMPTS:", "            if False:",
             SERVER_TESTS),
    Mutation("temporary-server-left-running-after-a-timeout", "flows/prefect_server.py",
             "        self.stop()\n        raise ServerStartError", "        raise ServerStartError", SERVER_TESTS),
    Mutation("temporary-server-not-warmed-up", "flows/prefect_server.py",
             '        threading.Thread(target=server._warm_up, name="hweval-server-warm-up", daemon=True).start()\n',
             "", SERVER_TESTS),
    Mutation("temporary-server-warmed-before-it-answers", "flows/prefect_server.py",
             "                if _answers_health(direct, api_url) and self.process is process:  # (not another launch's "
             "port)\n                    break\n", "                break\n", SERVER_TESTS),
    Mutation("temporary-server-no-http-raises", "flows/prefect_server.py",
             "    except Exception:  # noqa: BLE001 - not answering yet, whatever the error\n        return False\n",
             "    except OSError:\n        return False\n", SERVER_TESTS),
    Mutation("validated-batches-kept-by-gx", "flows/validate.py", "        finally:\n            _forget_batches()\n",
             "        finally:\n            pass\n", ("tests/test_guards.py",)),
    Mutation("validations-at-once-in-threads", "flows/validate.py", "    with _ONE_AT_A_TIME:\n", "    if True:\n",
             ("tests/test_guards.py",)),
    Mutation("analytics-kept-whatever-its-state", "flows/analytics.py",
             "transform.previous_build(con, BUILD_RECORD, None) == (fingerprint, _state(con))",
             "(transform.previous_build(con, BUILD_RECORD, None) or (None,))[0] == fingerprint", ANALYTICS_KEPT),
    Mutation("analytics-kept-over-changed-marts", "flows/analytics.py",
             'return hashlib.sha256("\\n".join([*made, repr(tables), repr(views)]).encode()).hexdigest()',
             'return hashlib.sha256("\\n".join([*made, repr(views)]).encode()).hexdigest()', ANALYTICS_KEPT),
    Mutation("catalog-taken-after-an-edit", "flows/catalog.py",
             "kept[0] == root and kept[1] == _folder_state(root) else None", "kept[0] == root else None",
             ("tests/test_catalog.py",)),
    # ---------------------------------------------------------------- issue 16: past one machine
    Mutation("lake-commit-ignores-a-moved-head", "flows/lake.py",
             "        if moved_to != base_snapshot:", "        if False:", LAKE_TESTS),
    Mutation("lake-conflict-not-recognised", "flows/lake.py",
             "        except duckdb.TransactionException as exc:", "        except KeyError as exc:", LAKE_TESTS),
    Mutation("lake-makes-no-view-models", "flows/lake.py", "        _create_view_models(con)\n", "", LAKE_TESTS),
    Mutation("lake-init-not-retried", "flows/lake.py",
             "setting: str, attempts: int = INIT_ATTEMPTS) -> None:", "setting: str, attempts: int = 1) -> None:",
             ("tests/test_lake.py::test_an_attach_that_meets_a_lake_another_run_is_creating_is_tried_again",
              *SLOW_TOO)),
    Mutation("fanout-parts-renumbered-from-each-part", "flows/source_batches.py",
             "        data = data.set_column(data.schema.get_field_index(\"row_no\"), \"row_no\", renumbered)\n",
             "", FANOUT_TESTS),
    Mutation("fanout-holds-no-share-of-the-limit", "flows/fanout.py",
             "            with concurrency(limit_name(cloud), occupy=slots[cloud], strict=True,",
             "            with concurrency(limit_name(cloud), occupy=0, strict=True,",
             ("tests/test_fanout.py", "-m", "not live and not fuzz")),
    Mutation("fanout-splits-a-single-region", "flows/fanout.py",
             "    if not isinstance(items, list) or len(items) < 2:", "    if not isinstance(items, list):",
             ("tests/test_fanout.py",)),
    Mutation("fanout-task-holds-no-dask-slot", "flows/fanout.py",
             "    with Semaphore(max_leases=slot.leases, name=slot.name):", "    with threading.Lock():",
             FANOUT_TESTS),
    Mutation("fanout-dask-slots-left-on-the-scheduler", "flows/fanout.py",
             "            semaphore.close()", "            pass", FANOUT_TESTS),
    Mutation("the-local-dask-worker-profiles-the-run", "flows/dask_runner.py",
             '    with dask.config.set({"distributed.worker.profile.enabled": False}):\n',
             '    with dask.config.set({"distributed.worker.profile.enabled": True}):\n',
             ("tests/test_fanout.py::test_the_dask_runner_names_each_task_by_a_fresh_id_not_by_hashing_its_arguments",)),
    Mutation("fanout-dask-names-tasks-by-hashing-their-arguments", "flows/dask_runner.py",
             "            pure=False,", "            pure=True,", FANOUT_TESTS),
    # ---------------------------------------------------------------- issue 17: communication, energy, interruptions
    Mutation("all-reduce-ignores-the-group-size", MACROS,
             "else 2 * (members::double - 1) / members::double * gb::double", "else 2 * gb::double", COMM_TESTS),
    Mutation("decode-step-without-its-all-reduces", MACROS,
             "    ) + batch::double * comm_s_per_token::double;", "    );", COMM_TESTS),
    Mutation("link-both-directions-at-once", MACROS,
             "         when chips::double <= chips_per_instance::double then link_gb_per_s::double / 2",
             "         when chips::double <= chips_per_instance::double then link_gb_per_s::double", COMM_TESTS),
    Mutation("gradient-all-reduce-always-hidden", MACROS,
             "greatest(0, comm_s::double - overlap::double * compute_s::double)", "0", COMM_TESTS),
    Mutation("calibration-leaves-the-link-alone", INFERENCE,
             "link_each_way * coalesce(calibration_factor, 1.0)), 0)", "link_each_way), 0)", COMM_TESTS),
    Mutation("reclaims-per-instance-not-per-job", MACROS,
             "    instances::double * per_instance_month::double / 730", "    per_instance_month::double / 730",
             COMM_TESTS),
    Mutation("a-reclaim-redoes-the-whole-interval", MACROS,
             "(least(checkpoint_interval_hours::double, run_hours::double) / 2 + restart_hours::double)",
             "(least(checkpoint_interval_hours::double, run_hours::double) + restart_hours::double)", COMM_TESTS),
    Mutation("serving-energy-without-pue", INFERENCE_COSTS,
             "joules_per_token * 1e6 / 3.6e6 * energy_pue as kwh_per_million_tokens,",
             "joules_per_token * 1e6 / 3.6e6 as kwh_per_million_tokens,", COMM_TESTS),
    Mutation("spot-service-without-a-spare", INFERENCE_COSTS,
             "+ case when reclaims_per_instance_month is not null then 1 else 0 end", "+ 0", COMM_TESTS),
    Mutation("emissions-ignore-the-grid", TRAINING_COSTS,
             "energy_kwh * gco2e_per_kwh / 1000 as kgco2e,", "energy_kwh / 1000 as kgco2e,", COMM_TESTS),
    # ---------------------------------------------------------------- issue 19: the four bugs it planted, the macro
    # the marts and README use (in place of the dead completed_run_usd) and the three macros that had no test
    Mutation("reserved-rows-swapped", OFFERS,
             "(where unit = 'Hrs'), 0) as recurring_usd_per_hour,\n"
             "        coalesce(sum(price_usd) filter (where unit = 'Quantity'), 0) as upfront_usd,",
             "(where unit = 'Quantity'), 0) as recurring_usd_per_hour,\n"
             "        coalesce(sum(price_usd) filter (where unit = 'Hrs'), 0) as upfront_usd,", OFFER_TESTS),
    Mutation("worst-tensor-parallel-group", INFERENCE,
             "replicas_per_instance * replica_tokens_per_s / instances_per_replica desc",
             "replicas_per_instance * replica_tokens_per_s / instances_per_replica asc", COST_TESTS),
    # the tensor-parallel group sizes worked out once a shape (issue 15, stop 38): each condition of the join back
    Mutation("a-group-too-small-to-hold-a-sequence-tried", INFERENCE,
             "        and group_sizes.replica_chips >= grouped.needed_chips\n", "\n", COST_TESTS),
    Mutation("group-sizes-of-another-instance-limit", INFERENCE,
             "        and group_sizes.max_instances_per_replica = grouped.max_instances_per_replica\n", "\n",
             COST_TESTS + ("tests/test_flow.py",)),
    Mutation("an-excluded-candidate-shown-at-its-largest-group", INFERENCE,
             "select workload_id, offer_id, precision, min(replica_chips) as smallest_group",
             "select workload_id, offer_id, precision, max(replica_chips) as smallest_group",
             COST_TESTS + ("tests/test_flow.py",)),
    # ---------------------------------------------------------------- issue 15: incremental re-runs
    Mutation("reuse-ignores-the-catalog", "flows/reuse.py",
             "    return (hashlib.sha256(checks.catalog_inputs(catalog, table, _suite_json(suite_bytes)).encode()).hexdigest(),",
             "    return (\"any catalog\",", INCREMENTAL_TESTS),
    Mutation("an-unused-fallbacks-rows-of-the-date-kept", "flows/land.py",
             "    if used != fallback_ids:\n", "    if False:\n",
             ("tests/test_incremental.py::test_a_same_date_re_run_on_an_offer_file_that_lands_leaves_no_price_list_rows_"
              "of_that_date", *SLOW_TOO)),
    Mutation("a-fallback-kept-when-the-source-given-has-its-own-last-good-rows", "flows/land.py",
             "    fallbacks = {s_id: replaced for s_id, replaced in fallbacks.items() if last_good[s_id] is None}\n",
             "\n",
             ("tests/test_incremental.py::test_a_same_date_re_run_whose_offer_file_fails_checks_spot_prices_as_a_cold_"
              "run_would", *SLOW_TOO)),
    Mutation("input-digest-takes-the-whole-catalog", "flows/reuse.py",
             "    return (hashlib.sha256(checks.catalog_inputs(catalog, table, _suite_json(suite_bytes)).encode()).hexdigest(),",
             "    return (catalog.digest() or hashlib.sha256(checks.catalog_inputs(catalog, table, _suite_json(suite_bytes)).encode()).hexdigest(),",
             ("tests/test_incremental.py::test_a_catalog_edit_validation_does_not_read_reuses_every_source_and_equals_a_"
              "cold_run", *SLOW_TOO)),
    Mutation("input-digest-misses-the-training-workloads-flops", "flows/checks.py",
             '    "benchmark_runs": ("active_params", "peaks", "workload_flops"),', '    "benchmark_runs": ("active_params", "peaks"),',
             ("tests/test_incremental.py::test_a_batchs_input_digest_reads_only_the_catalog_that_validating_its_table_reads",)),
    Mutation("input-digest-ignores-the-suites-parameters", "flows/checks.py",
             "    named = sorted(suite_parameter_names(suite))\n", "    named = []\n",
             ("tests/test_incremental.py::test_a_batchs_input_digest_reads_only_the_catalog_that_validating_its_table_reads",)),
    Mutation("input-digest-reads-a-padded-parameter-name-as-none", "flows/checks.py",
             "    if not set(named) <= parameters.keys():", "    if False:",
             ("tests/test_incremental.py::test_a_batchs_input_digest_reads_only_the_catalog_that_validating_its_table_reads",)),
    Mutation("input-digest-misses-the-instances-counts", "flows/checks.py",
             '    "aws_pricing": ("catalog_counts",),', '    "aws_pricing": (),',
             ("tests/test_incremental.py::test_a_batchs_input_digest_reads_only_the_catalog_that_validating_its_table_reads",)),
    Mutation("model-reuse-ignores-its-inputs", "flows/transform.py",
             '        parts.append(f"{relation}={digests[relation]}")',
             '        parts.append(relation)', INCREMENTAL_TESTS),
    Mutation("check-catalog-returns-at-once", "flows/checks.py",
             "    rows = accelerator_rows(catalog)\n    suite = load_suite_json(",
             "    return\n    suite = load_suite_json(", CATALOG_TESTS),
    Mutation("aws-live-option-runtime-error", "flows/sources/aws_pricing.py",
             'raise SourceFormatError(f"aws_pricing: live option endpoint_region',
             'raise RuntimeError(f"aws_pricing: live option endpoint_region', AWS_PARSER_TESTS),
    Mutation("aws-bad-json-runtime-error", "flows/sources/_common.py",
             'raise SourceFormatError(f"{where}: not valid JSON',
             'raise RuntimeError(f"{where}: not valid JSON', AWS_PARSER_TESTS),
    Mutation("completed-run-ignores-instances", MACROS,
             "hours::double * instances * usd_per_hour::double * (1 + interruption_overhead::double)",
             "hours::double * usd_per_hour::double * (1 + interruption_overhead::double)", COST_TESTS),
    Mutation("term-hours-720-a-month", MACROS, "months::double * 730;", "months::double * 720;", OFFER_TESTS),
    Mutation("on-prem-ignores-pue", MACROS,
             "power_kw::double * pue::double * usd_per_kwh::double",
             "power_kw::double * usd_per_kwh::double", OFFER_TESTS),
    Mutation("term-as-long-as-the-service-refused", MACROS,
             "term_months <= coalesce(workload_months, 0)", "term_months < coalesce(workload_months, 0)", COST_TESTS),
    # ---------------------------------------------------------------- cost macros
    Mutation("every-term-amortised-over-one-year", MACROS,
             "coalesce(upfront_usd::double, 0) / term_hours;", "coalesce(upfront_usd::double, 0) / 8760;",
             OFFER_TESTS),
    Mutation("on-prem-opex-not-per-hour", MACROS,
             "coalesce(opex_usd_per_month::double, 0) / 730;", "coalesce(opex_usd_per_month::double, 0) / 720;",
             OFFER_TESTS),
    Mutation("instances-rounded-down", MACROS,
             "cast(ceil(chips::double / chips_per_instance) as integer);",
             "cast(floor(chips::double / chips_per_instance) as integer);", COST_TESTS),
    Mutation("fp8-as-two-bytes", MACROS, "when 'fp8' then 1.0::double", "when 'fp8' then 2.0::double", COST_TESTS),
    Mutation("kv-cache-keys-only", MACROS, "2.0 * layers::double * kv_heads", "1.0 * layers::double * kv_heads",
             COST_TESTS),
    Mutation("all-memory-usable", MACROS,
             "chips::double * memory_gb_per_chip::double * usable_fraction::double;",
             "chips::double * memory_gb_per_chip::double;", COST_TESTS),
    Mutation("memory-fit-strict", MACROS,
             "        <= usable_memory_gb(chips, memory_gb_per_chip, usable_fraction);",
             "        < usable_memory_gb(chips, memory_gb_per_chip, usable_fraction);", COST_TESTS),
    Mutation("scaling-loss-one-doubling-early", MACROS,
             "log2(greatest(instances::double, 1))", "log2(greatest(instances::double, 1) + 1)", COST_TESTS),
    Mutation("mfu-minutes-not-seconds", MACROS,
             "(minutes::double * 60 * chips::double", "(minutes::double * chips::double", COST_TESTS),
    Mutation("energy-without-pue", MACROS,
             "tdp_w::double / 1000 * pue::double;", "tdp_w::double / 1000;", COST_TESTS),
    Mutation("replicas-per-instance-rounded-up", MACROS,
             "then cast(floor(chips_per_instance::double / replica_chips) as integer)",
             "then cast(ceil(chips_per_instance::double / replica_chips) as integer)", COST_TESTS),
    Mutation("tokens-per-minute-not-hour", MACROS,
             "usd_per_hour::double / (tokens_per_s::double * 3600) * 1e6",
             "usd_per_hour::double / (tokens_per_s::double * 60) * 1e6", COST_TESTS),
    Mutation("decode-step-the-faster-side", MACROS, "    greatest(\n        (weights_gb::double",
             "    least(\n        (weights_gb::double", COST_TESTS),
    Mutation("peak-factor-ignored", MACROS,
             "ceil(mean_requests_per_s::double * peak_factor::double", "ceil(mean_requests_per_s::double",
             COST_TESTS),
    Mutation("failed-requests-counted", MACROS,
             "(mean_requests_per_s::double * 3600 * 730 * success_rate::double)",
             "(mean_requests_per_s::double * 3600 * 730)", COST_TESTS),
    Mutation("lifetime-without-training", MACROS,
             "coalesce(training_usd::double, 0) + months::double", "months::double", COST_TESTS),
    # ---------------------------------------------------------------- cost models
    Mutation("windows-priced-as-linux", OFFERS,
             "where is_plain_linux and unit = 'Hrs' and pricing_term = 'on_demand'",
             "where unit = 'Hrs' and pricing_term = 'on_demand'", OFFER_TESTS),
    Mutation("spot-highest-zone-price", OFFERS,
             "        min(price_usd) as usd_per_hour,\n        'lowest latest price",
             "        max(price_usd) as usd_per_hour,\n        'lowest latest price", OFFER_TESTS),
    Mutation("discount-taken-as-tenths", OFFERS,
             "public.usd_per_hour * (1 - sheet.percent_off / 100) as usd_per_hour",
             "public.usd_per_hour * (1 - sheet.percent_off / 1000) as usd_per_hour", OFFER_TESTS),
    Mutation("kv-context-full-output", INFERENCE,
             "(input_tokens + output_tokens / 2.0) * kv_bytes_per_token",
             "(input_tokens + output_tokens) * kv_bytes_per_token", COST_TESTS),
    Mutation("measured-run-minutes-as-hours", MEASURED,
             "        results.time_to_train_minutes / 60 as run_hours,",
             "        results.time_to_train_minutes as run_hours,", COST_TESTS),
    Mutation("training-calibration-ignored", TRAINING,
             "when 'calibrated' then default_mfu * calibration_factor", "when 'calibrated' then default_mfu",
             CALIBRATION_TESTS),
    # a published figure's MFU: the one its tokens/s per chip imply by 6 x N, of the workload's precision
    Mutation("published-mfu-as-the-source-counts-it", TRAINING,
             "coalesce(mfu_from_throughput(models.params, runs.tokens_per_s_per_chip, peaks.peak_tflops), runs.mfu) "
             "as mfu,", "runs.mfu as mfu,", COST_TESTS),
    Mutation("published-mfu-of-another-precision", TRAINING,
             "where mfu > 0 and precision is not null\n    qualify row_number() over (partition by model_id, "
             "accelerator, precision order by mfu desc, source_ref)",
             "where mfu > 0\n    qualify row_number() over (partition by model_id, accelerator order by mfu desc, "
             "source_ref)",
             COST_TESTS),
    Mutation("trainium2-memory-in-gib-read-as-gb", "catalogs/accelerators.yaml",
             "memory_gb: {value: 103.08, source: aws-neuron-trainium2",
             "memory_gb: {value: 96, source: aws-neuron-trainium2",
             HARDWARE_TESTS),
    Mutation("serving-calibration-on-bandwidth-only", INFERENCE,
             "defaults.compute_efficiency * coalesce(calibration.factor, 1.0) as compute_efficiency",
             "defaults.compute_efficiency as compute_efficiency", CALIBRATION_TESTS),
    Mutation("leave-one-out-sees-its-own-setup", "sql/intermediate/int_estimate_backtest.sql",
             "and other.setup_key <> this.setup_key", "and other.comparison_id <> this.comparison_id",
             CALIBRATION_TESTS),
    Mutation("request-shape-ignored", "sql/intermediate/int_serving_results_matched.sql",
             "workloads.output_tokens) <= workloads.shape_tolerance, false) as shape_matches",
             "workloads.output_tokens) <= 1000, false) as shape_matches",
             ("tests/test_measurement_shape.py", "-m", "not live and not fuzz")),
    # ---------------------------------------------------------------- issue 14: hardware, CPU baseline, hosted APIs
    Mutation("listing-wins-over-a-correction", "sql/intermediate/int_instance_hardware.sql",
             "coalesce(declared.accelerator_count, listing.device_count) as accelerator_count",
             "coalesce(listing.device_count, declared.accelerator_count) as accelerator_count", HARDWARE_TESTS),
    Mutation("listed-memory-not-checked", "sql/intermediate/int_instance_hardware.sql",
             "<= 0.1 * api_names.memory_mib)", "<= 10 * api_names.memory_mib)", HARDWARE_TESTS),
    Mutation("cpu-holds-the-model-in-one-socket-memory", MACROS,
             "host_memory_gib::double * 1.073741824 / chips_per_instance",
             "host_memory_gib::double / chips_per_instance", ("tests/test_cpu_baseline.py",)),
    Mutation("break-even-ignores-the-peak", "sql/marts/api_comparisons.sql",
             "self_hosted.deployment_usd_per_hour * api.peak_factor / (3600 * self_hosted.deployment_requests_per_s)",
             "self_hosted.deployment_usd_per_hour / (3600 * self_hosted.deployment_requests_per_s)",
             ("tests/test_model_api_prices.py",)),
    Mutation("frontier-counts-lines-as-offers", "flows/frontier_chart.py",
             'lines, offers = frontier["candidate_id"].n_unique(), frontier["offer_id"].n_unique()',
             'lines, offers = frontier["candidate_id"].n_unique(), frontier["candidate_id"].n_unique()',
             (FRONTIER_COUNT_TEST,)),
    Mutation("frontier-legend-without-the-region-of-a-type-in-two", "flows/chart_kit.py",
             'if row["offer_regions"] > 1:', "if False:", (FRONTIER_COUNT_TEST, CAPTION_REGION)),
    Mutation("chart-workers-take-every-chart", "flows/chart_workers.py",
             "if pool is None or self.in_flight >= self.size * CHARTS_PER_WORKER:", "if pool is None:",
             ("tests/test_charts.py::test_a_chart_a_worker_draws_is_the_png_drawn_here_and_is_cached",)),
    Mutation("chart-workers-take-one-chart-each", "flows/chart_workers.py",
             "CHARTS_PER_WORKER = 2", "CHARTS_PER_WORKER = 1",
             ("tests/test_charts.py::test_a_chart_a_worker_draws_is_the_png_drawn_here_and_is_cached",)),
    Mutation("chart-workers-outlive-a-killed-run", "flows/chart_workers.py",
             'threading.Thread(target=exit_with_parent, name="hweval-chart-worker-parent", daemon=True).start()',
             "pass", ("tests/test_charts.py::test_a_chart_worker_exits_when_the_run_that_started_it_is_killed",)),
    Mutation("a-shut-down-pools-work-counted-in-the-next", "flows/chart_workers.py",
             "if self.pool is pool:  # a pool shut down meanwhile counts no more", "if True:",
             ("tests/test_charts.py::test_a_pool_shut_down_while_busy_leaves_the_next_ones_count_alone", *SLOW_TOO)),
    Mutation("a-workers-chart-never-cached", "flows/chart_images.py",
             "            cache.write(self.key, self.image)\n", "",
             ("tests/test_charts.py::test_a_chart_a_worker_draws_is_the_png_drawn_here_and_is_cached",)),
    Mutation("every-expectation-validated-complete", "flows/validate.py",
             'result = validated(outcome.suite, {"result_format": "BASIC" if counts else "BOOLEAN_ONLY"})',
             "result = validated(outcome.suite, COMPLETE)",
             ("tests/test_guards.py::test_failing_expectations_are_validated_again_complete_and_the_passing_ones_stay_"
              "basic",)),
    Mutation("a-failed-expectations-basic-result-kept", "flows/validate.py",
             "result.results = [res if res.success else complete[_config_key(res)].pop(0)",
             "result.results = [res if True else complete[_config_key(res)].pop(0)",
             ("tests/test_guards.py::test_failing_expectations_are_validated_again_complete_and_the_passing_ones_stay_"
              "basic",)),
    Mutation("the-raw-schema-built-by-every-fetch-at-once", "flows/warehouse.py",
             "    with _RAW_SCHEMA_LOCK:\n        return _raw_schema()[table]",
             "    if True:\n        return _raw_schema()[table]",
             ("tests/test_guards.py::test_the_raw_schema_is_built_once_when_the_fetch_tasks_ask_for_it_at_once",)),
    Mutation("the-declared-tables-read-in-the-first-fetch-task", "flows/run_startup.py",
             "    report_templates.compile_templates()\n    warehouse.read_declared_tables()",
             "    report_templates.compile_templates()\n    pass",
             ("tests/test_run_startup.py::test_the_declared_tables_are_read_while_the_server_starts_not_in_the_first_fetch_"
              "task",)),
    Mutation("own-run-time-implied-mfu-bound-100", RUNS_SUITE,
             '"column": "check_time_implied_mfu",\n    "min_value": 0.001,\n    "max_value": 1\n',
             '"column": "check_time_implied_mfu",\n    "min_value": 0.001,\n    "max_value": 100\n',
             (TIME_IMPLIED_MFU,)),
    Mutation("own-run-time-implied-mfu-over-one-chip", "flows/checks.py",
             '/ (chips * pl.coalesce("_peak_tflops", "_highest_peak_tflops") * 1e12 * seconds))',
             '/ (pl.coalesce("_peak_tflops", "_highest_peak_tflops") * 1e12 * seconds))', (TIME_IMPLIED_MFU,)),
    Mutation("own-run-time-implied-mfu-unchecked-without-a-peak-of-its-precision", "flows/checks.py",
             'pl.coalesce("_peak_tflops", "_highest_peak_tflops") * 1e12', 'pl.col("_peak_tflops") * 1e12',
             (TIME_IMPLIED_MFU,)),
    Mutation("own-run-time-implied-mfu-in-minutes", "flows/checks.py",
             'seconds = pl.col("time_to_train_minutes").cast(pl.Float64) * 60',
             'seconds = pl.col("time_to_train_minutes").cast(pl.Float64)', (TIME_IMPLIED_MFU,)),
    Mutation("own-run-time-implied-mfu-for-serving-rows-only", "flows/checks.py",
             'pl.when(pl.col("kind") == "training").then(time_implied)',
             'pl.when(pl.col("kind") == "serving").then(time_implied)', (TIME_IMPLIED_MFU,)),
    Mutation("automations-updated-though-unchanged", "flows/automations.py",
             "        if _as_core(there) == core:", "        if _as_core(there) != core:", (HWEVAL_AUTOMATIONS,)),
    Mutation("automations-updated-with-the-files-keys-only", "flows/automations.py",
             'client.update_automation(there.id, AutomationCore.model_validate(core.model_dump(exclude={"owner_'
             'resource"})))',
             "client.update_automation(there.id, core)",
             ("tests/test_automations.py::test_a_key_taken_out_of_the_file_is_taken_off_the_server",)),
    Mutation("automations-server-down-as-a-traceback", "flows/automations.py",
             "    except httpx.HTTPError as exc:", "    except httpx.InvalidURL as exc:",
             ("tests/test_automations.py::test_a_server_that_does_not_answer_is_one_line_and_exit_1",)),
    Mutation("automations-copies-on-the-server-not-refused", "flows/automations.py",
             "    if copies:\n", "    if False:\n", (HWEVAL_AUTOMATIONS,)),
    Mutation("automations-created-again-when-found", "flows/automations.py",
             "        if not found[core.name]:\n", "        if True:\n", (HWEVAL_AUTOMATIONS,)),
    Mutation("arrows-own-pool-left-in-hwevals-processes", "flows/__init__.py",
             'os.environ.setdefault(ARROW_POOL_ENV, "system")', "pass",
             ("tests/test_run_startup.py::test_hwevals_processes_take_arrows_buffers_from_the_system_allocator_unless_"
              "the_user_chose_a_pool",)),
    Mutation("the-users-arrow-pool-overwritten", "flows/__init__.py",
             'os.environ.setdefault(ARROW_POOL_ENV, "system")', 'os.environ[ARROW_POOL_ENV] = "system"',
             ("tests/test_run_startup.py::test_hwevals_processes_take_arrows_buffers_from_the_system_allocator_unless_"
              "the_user_chose_a_pool",)),
    Mutation("charts-drawn-with-another-resolution", "flows/chart_images.py",
             'figure.savefig(buffer, format="png", dpi=figure.dpi,', 'figure.savefig(buffer, format="png", dpi=72,',
             ("tests/test_charts.py",)),
    Mutation("any-module-level-drawing-sent-to-a-worker", "flows/chart_images.py",
             'if draw.__module__.startswith("flows.") and getattr(', "if getattr(",
             ("tests/test_charts.py::test_only_hwevals_own_drawing_functions_go_to_a_chart_worker",)),
    Mutation("gx-results-never-kept-for-the-data-docs", "flows/gx_process.py",
             "    if keep and outcome.result is not None:", "    if False:", GX_PROCESS_TESTS),
    Mutation("gx-in-the-runs-process-whatever-the-setting", "flows/gx_process.py",
             'return not _IN_WORKER and text != "0"', "return False", GX_PROCESS_TESTS),
    Mutation("the-catalog-check-begun-ahead-waited-for-at-once", "flows/checks.py",
             "    _begun = (digest, gx_process.validate_rows_later(rows, suite))",
             "    _begun = (digest, gx_process.validate_rows_later(rows, suite))\n    _begun[1].result()",
             (CATALOG_AHEAD,)),
    Mutation("the-catalog-check-begun-ahead-asked-again", "flows/checks.py",
             "    if begun is not None and begun[0] == digest:", "    if False:",
             (CATALOG_AHEAD, CATALOG_AHEAD_REFUSED)),
    Mutation("the-catalog-figures-not-waited-for-before-the-flow", "flows/run_command.py",
             "        run_startup.finish_catalog_check(args.catalog)\n", "        pass\n",
             ("tests/test_cli.py::test_run_without_a_prefect_server_starts_prefects_and_checks_the_catalog_meanwhile",)),
    Mutation("the-catalog-check-begun-ahead-in-the-runs-process", "flows/checks.py",
             "    if not gx_process.enabled():  # HWEVAL_GX_PROCESS=0", "    if False:  # HWEVAL_GX_PROCESS=0",
             ("tests/test_run_startup.py::test_with_gx_in_the_runs_process_nothing_is_begun_ahead_and_the_check_is_"
              "made_where_it_is_taken",)),
    Mutation("the-catalog-check-begun-after-the-runs-own-imports", "flows/run_command.py",
             "    if server is not None:\n        # next, the catalog's load",
             "    if False:\n        # next, the catalog's load",
             ("tests/test_cli.py::test_run_without_a_prefect_server_starts_prefects_and_checks_the_catalog_meanwhile",)),
    Mutation("the-data-docs-begun-not-taken-before-the-reports", "flows/publishing.py",
             "    data_docs.finish_site()\n", "",
             ("tests/test_gx_process.py::test_the_reports_are_rendered_beside_the_data_docs_the_gx_process_is_still_"
              "building",)),
    Mutation("the-data-docs-begun-waited-for-at-once", "flows/data_docs.py",
             "        _building = (gx_process.build_site_later(batches, site_dir, run_id), then)\n        return",
             "        _building = (gx_process.build_site_later(batches, site_dir, run_id), then)\n"
             "        finish_site()\n        return",
             ("tests/test_gx_process.py::test_data_docs_begun_in_the_gx_process_are_built_while_the_run_goes_on_and_"
              "taken_before_the_reports",)),
    Mutation("a-failed-runs-data-docs-site-not-waited-for-before-its-rendering-is-removed", "flows/nightly.py",
             "                data_docs.abandon_site()  # a site still being built for a build that failed: nothing "
             "writes into it\n", "",
             ("tests/test_fault_injection.py::test_a_crash_in_the_build_waits_for_the_data_docs_being_built_before_"
              "removing_what_it_rendered", *SLOW_TOO)),
    Mutation("an-abandoned-data-docs-site-not-waited-for", "flows/data_docs.py",
             "        with contextlib.suppress(Exception):\n            building[0].result()",
             "        pass",
             ("tests/test_gx_process.py::test_data_docs_begun_in_the_gx_process_are_built_while_the_run_goes_on_and_"
              "taken_before_the_reports",)),
    Mutation("an-answer-of-gx-taken-twice-answers-nothing", "flows/gx_process.py",
             "        if self.taken:\n", "        if False:\n",
             ("tests/test_gx_process.py::test_an_answer_of_the_gx_process_is_taken_once",)),
    Mutation("the-gx-process-left-to-finish-its-call-at-the-end", "flows/gx_process.py",
             "        for worker in workers:\n            worker.kill()", "        pass",
             ("tests/test_gx_process.py::test_at_the_commands_end_the_gx_process_is_stopped_without_waiting_for_its_"
              "call", *SLOW_TOO)),
    Mutation("an-idle-gx-process-killed-at-the-commands-end", "flows/gx_process.py",
             '    if getattr(pool, "_pending_work_items", None):  # a call under way', "    if True:  # a call under way",
             ("tests/test_cli.py::test_run_with_its_own_temporary_prefect_server", *SLOW_TOO)),
    Mutation("the-gx-process-not-stopped-at-the-commands-end", "flows/cli.py",
             "        gx_process.stop_now()  # nothing takes its answers", "        pass  # nothing takes its answers",
             ("tests/test_cli.py::test_the_command_stops_the_gx_process_at_its_end_without_waiting",)),
    Mutation("an-offer-files-metadata-keys-quoted-whole", "flows/sources/aws_offer_file.py",
             "f\"(found {', '.join(excerpt(key) for key in metadata)})\")", "f\"(found {', '.join(metadata)})\")",
             ("tests/test_malformed_inputs.py",)),
    Mutation("an-offer-files-duplicate-columns-all-named", "flows/sources/aws_offer_file.py",
             "for c in duplicates[:MAX_NAMED])", "for c in duplicates)",
             ("tests/test_source_aws_offer_file.py",)),
    Mutation("each-batch-validated-only-as-it-lands", "flows/land.py",
             "                                  asked.pop(id(b)))", "                                  None)",
             ("tests/test_gx_process.py::test_every_batch_is_asked_of_the_gx_process_before_the_first_lands_and_"
              "lands_as_before",)),
    Mutation("an-error-validating-here-raised-as-it-is-asked", "flows/gx_process.py",
             "    except Exception as exc:  # noqa: BLE001 - raised again, as it came, by result()\n",
             "    except ZeroDivisionError as exc:\n",
             ("tests/test_gx_process.py::test_with_gx_in_the_runs_process_a_batch_gx_cannot_evaluate_is_stale_and_its_"
              "neighbours_land",)),
    Mutation("a-dead-gx-process-raised-as-it-came", "flows/gx_process.py",
             "        except BrokenProcessPool as exc:\n            shutdown(self.pool)",
             "        except ZeroDivisionError as exc:\n            shutdown(self.pool)",
             ("tests/test_gx_process.py::test_a_gx_process_that_dies_fails_the_call_and_the_next_call_starts_another",
              *SLOW_TOO)),
    Mutation("a-result-kept-by-another-gx-process-taken", "flows/gx_process.py",
             "if kept.worker != _WORKER or kept.handle not in _KEPT]", "if kept.handle not in _KEPT]",
             ("tests/test_gx_process.py::test_a_result_kept_by_a_gx_process_that_was_stopped_is_refused_not_taken_for_"
              "another", *SLOW_TOO)),
    Mutation("an-empty-batch-sent-to-the-gx-process", "flows/gx_process.py",
             "    if data.num_rows == 0:  # as validate_frame", "    if False:  # as validate_frame",
             ("tests/test_gx_process.py::test_an_empty_batch_starts_no_gx_process",)),
    Mutation("gx-errors-raised-as-they-came", "flows/gx_process.py",
             "        if type(exc).__name__ in _OWN_ERRORS:\n            raise", "        if True:\n            raise",
             ("tests/test_gx_process.py::test_an_error_that_cannot_cross_the_processes_comes_back_named_not_as_a_dead_"
              "process",)),
    Mutation("gx-warnings-left-in-the-gx-process", "flows/gx_process.py",
             "        logging.getLogger(record.name).handle(record)", "        pass",
             ("tests/test_gx_process.py::test_what_the_gx_process_logs_is_logged_in_the_runs_process",)),
    Mutation("the-gx-process-outlives-a-killed-run", "flows/gx_process.py",
             'threading.Thread(target=exit_with_parent, name="hweval-gx-process-parent", daemon=True).start()', "pass",
             ("tests/test_gx_process.py::test_the_gx_process_exits_when_the_run_that_started_it_is_killed", *SLOW_TOO)),
    Mutation("a-batch-landed-outside-a-transaction", "flows/land.py",
             "            with warehouse.transaction(con):\n                con.execute(*delete_earlier)\n"
             "                load = land_batch(",
             "            if True:\n                con.execute(*delete_earlier)\n                load = land_batch(",
             (("tests/test_fault_injection.py::test_a_same_date_batch_the_database_refuses_while_landing_keeps_that_"
               "dates_good_rows"), "-m", "not live and not fuzz")),
    Mutation("the-landing-closes-its-connection-and-the-build-opens-another", "flows/nightly.py",
             "    warehouse.hand_on(building, con)  # to build_and_render", "    con.close()  # to build_and_render",
             ("tests/test_flow.py::test_the_build_takes_the_connection_the_landing_left_open",)),
    Mutation("a-handed-on-connection-left-open", "flows/publishing.py",
             "        warehouse.close_handed_on(building)  # a step", "        pass  # a step",
             ("tests/test_guards.py::test_a_connection_a_failed_step_left_is_closed_with_its_building_copy",)),
    Mutation("a-reused-table-digested-again-for-its-readers", "flows/transform.py",
             '            if layer != "marts" and held is not None:', "            if False:",
             ("tests/test_incremental.py::test_a_reused_build_digests_each_staging_and_intermediate_table_once",)),
    Mutation("a-marts-dates-digest-taken-for-its-readers", "flows/transform.py",
             '            if layer != "marts" and held is not None:', "            if held is not None:",
             ("tests/test_incremental.py::test_a_reused_build_digests_each_staging_and_intermediate_table_once",)),
    Mutation("the-temporary-server-stores-events", "flows/run_command.py",
             '    "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_ENABLED": "false",\n', "",
             ("tests/test_cli.py::test_the_temporary_server_is_launched_without_event_storage_or_trigger_loops",)),
    Mutation("the-temporary-server-evaluates-triggers", "flows/run_command.py",
             '    "PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED": "false",\n', "",
             ("tests/test_cli.py::test_the_temporary_server_is_launched_without_event_storage_or_trigger_loops",)),
    Mutation("a-models-rows-read-off-another-digest-part", "flows/transform.py",
             '    return int(digest.split(":", 1)[0])', '    return len(digest.split(":", 1)[1])',
             ("tests/test_incremental.py::test_a_reused_build_digests_each_staging_and_intermediate_table_once",)),
    Mutation("a-rebuilt-models-old-build-record-kept-beside-the-new", "flows/transform.py",
             '    con.execute("delete from ops.model_builds m using _model_builds b where m.model = b.model "\n'
             '                "and m.as_of is not distinct from b.as_of")\n', "",
             ("tests/test_incremental.py::test_each_model_keeps_one_build_record_and_a_failed_build_records_none",)),
    Mutation("a-failed-build-records-the-models-it-built-before-failing", "flows/transform.py",
             "                    records.append((relation, mart_date, fingerprint, held))",
             "                    record_build(con, relation, mart_date, fingerprint, held, run_id)",
             ("tests/test_incremental.py::test_each_model_keeps_one_build_record_and_a_failed_build_records_none",)),
    Mutation("a-models-previous-build-looked-up-under-the-runs-date", "flows/transform.py",
             "previous_by_model.get((relation, mart_date))", "previous_by_model.get((relation, as_of))",
             ("tests/test_incremental.py::test_a_reused_build_digests_each_staging_and_intermediate_table_once",)),
    Mutation("a-batch-seen-again-still-compared-with-its-own-load", "flows/land.py",
             "            con, catalog, b, as_of, compare=b.source_id not in again)", "            con, catalog, b, as_of)",
             ("tests/test_incremental.py::test_a_batch_that_is_its_sources_last_landed_batch_again_is_not_compared_"
              "with_it",)),
    Mutation("a-changed-batch-not-compared-with-the-last-load", "flows/land.py",
             "            con, catalog, b, as_of, compare=b.source_id not in again)",
             "            con, catalog, b, as_of, compare=False)",
             ("tests/test_incremental.py::test_a_batch_that_is_its_sources_last_landed_batch_again_is_not_compared_"
              "with_it",)),
    Mutation("an-empty-batch-seen-again-lands", "flows/land.py",
             "    if not batch.rows_in:\n        return \"no_rows\", \"no rows: the source returned nothing\"\n    if not compare:\n"
             "        return None",
             "    if not compare:\n        return None\n    if not batch.rows_in:\n"
             "        return \"no_rows\", \"no rows: the source returned nothing\"",
             ("tests/test_incremental.py",)),
    Mutation("a-chart-worker-not-frozen", "flows/chart_workers.py",
             "    startup_gc.imported(collecting)\n", "    pass\n",
             ("tests/test_charts.py::test_a_chart_worker_freezes_its_modules_after_its_warm_up",)),
    Mutation("a-reused-sites-error-lost", "flows/data_docs.py",
             "            written.set_exception(exc)\n", "            written.set_result(None)\n",
             ("tests/test_incremental.py::test_the_data_docs_of_a_run_that_validated_nothing_are_written_in_a_thread_"
              "and_taken_before_the_render",)),
    Mutation("a-reused-site-written-in-the-runs-thread", "flows/data_docs.py",
             '    threading.Thread(target=write, name="hweval-reused-data-docs", daemon=True).start()\n',
             "    write()\n",
             ("tests/test_incremental.py::test_the_data_docs_of_a_run_that_validated_nothing_are_written_in_a_thread_"
              "and_taken_before_the_render",)),
    Mutation("the-server-imports-from-the-working-folder-first", "flows/prefect_server.py",
             'uvicorn = [sys.executable, "-P", "-c", SERVER_MAIN,', 'uvicorn = [sys.executable, "-c", SERVER_MAIN,',
             ("tests/test_startup_gc.py",)),
    Mutation("gxs-process-imports-collecting-as-often-as-ever", "flows/gx_process.py",
             "    collecting = startup_gc.importing()", "    collecting = (700, 10, 10)",
             ("tests/test_gx_process.py::test_the_gx_process_imports_gx_collecting_less_then_sets_pythons_thresholds_"
              "back_and_freezes_it",)),
    Mutation("a-chart-worker-imports-collecting-as-often-as-ever", "flows/chart_workers.py",
             "    collecting = startup_gc.importing()", "    collecting = (700, 10, 10)",
             ("tests/test_charts.py::test_a_chart_worker_freezes_its_modules_after_its_warm_up",)),
    Mutation("a-ctrl-c-in-finish-site-loses-the-site", "flows/data_docs.py",
             "    if _building is None:\n        return None\n    pending, then = _building\n",
             "    if _building is None:\n        return None\n    pending, then = _building\n    _building = None\n",
             ("tests/test_incremental.py::test_a_ctrl_c_while_the_render_waits_for_the_data_docs_leaves_them_for_"
              "abandon_site",)),
    Mutation("the-servers-import-collecting-as-often-as-ever", "flows/startup_gc.py",
             '        "previous = startup_gc.importing()\\n"\n',
             '        "previous = __import__(\'gc\').get_threshold()\\n"\n',
             ("tests/test_startup_gc.py",)),
    Mutation("the-servers-import-left-collecting-less-unfrozen", "flows/startup_gc.py",
             '        "startup_gc.imported(previous)\\n"\n', "",
             ("tests/test_startup_gc.py",)),
    Mutation("the-server-runs-main-under-another-name", "flows/startup_gc.py",
             "run_name='__main__'", "run_name='main'",
             ("tests/test_startup_gc.py",)),
    Mutation("importing-collects-as-often-as-ever", "flows/startup_gc.py",
             "    gc.set_threshold(*IMPORT_THRESHOLD)\n", "",
             ("tests/test_startup_gc.py",)),
    Mutation("imported-leaves-the-raised-threshold", "flows/startup_gc.py",
             "    gc.set_threshold(*previous)\n    gc.freeze()\n", "    gc.freeze()\n",
             ("tests/test_startup_gc.py",)),
    Mutation("gxs-process-keeps-the-raised-threshold-unfrozen", "flows/gx_process.py",
             "    import_gx()\n    startup_gc.imported(collecting)\n", "    import_gx()\n",
             ("tests/test_gx_process.py::test_the_gx_process_imports_gx_collecting_less_then_sets_pythons_thresholds_"
              "back_and_freezes_it",)),
    Mutation("the-command-keeps-the-raised-threshold", "flows/run_command.py",
             "        startup_gc.imported(collecting)\n", "        pass\n",
             ("tests/test_cli.py::test_the_hweval_command_freezes_what_it_loaded_before_the_flow_and_a_test_calling_"
              "main_does_not",)),
    Mutation("the-command-collects-everything-at-exit", "flows/cli.py",
             "    gc.freeze()\n    if code == EXIT_INTERRUPTED:", "    if code == EXIT_INTERRUPTED:",
             ("tests/test_cli.py::test_the_console_script_is_entry_which_skips_the_last_full_collection_at_exit",)),
    Mutation("a-test-process-frozen-too", "flows/run_command.py",
             "    if OWN_PROCESS:\n        # the modules", "    if True:\n        # the modules",
             ("tests/test_cli.py::test_the_hweval_command_freezes_what_it_loaded_before_the_flow_and_a_test_calling_"
              "main_does_not",)),
    Mutation("a-metric-s-error-under-its-id-missed", "flows/validate.py",
             "found = [exception_info, *(v for v in exception_info.values() if isinstance(v, dict))]",
             "found = [exception_info]",
             ("tests/test_guards.py",)),
    Mutation("a-view-taken-for-a-table", "flows/relations.py",
             '    if views:\n        return "VIEW"\n', "",
             ("tests/test_relations.py::test_a_missing_relation_has_no_columns_and_no_kind_and_leaves_a_transaction_"
              "usable",)),
    Mutation("a-missing-table-raises", "flows/relations.py",
             "    except duckdb.CatalogException:", "    except duckdb.ConversionException:",
             ("tests/test_relations.py::test_a_missing_relation_has_no_columns_and_no_kind_and_leaves_a_transaction_"
              "usable",)),
    Mutation("main-imports-the-pipeline-before-the-server-launch", "flows/cli.py",
             "    args = build_parser().parse_args(argv)\n    try:",
             "    args = build_parser().parse_args(argv)\n    from flows.pipeline import AsOfError  # noqa: F401\n    try:",
             ("tests/test_cli.py::test_the_temporary_server_is_launched_before_the_run_imports_its_libraries",)),
    Mutation("libyaml-takes-a-tab-pyyaml-refuses", "flows/safe_yaml.py",
             'if not yaml.__with_libyaml__ or "\\t" in text:', "if not yaml.__with_libyaml__:",
             ("tests/test_catalog_hostile.py",)),
    Mutation("a-view-in-capitals-taken-for-a-table", "flows/relations.py",
             "where lower(schema_name) = lower(?) and \"\n                             \"lower(view_name) = lower(?)",
             "where schema_name = ? and \"\n                             \"view_name = ?",
             ("tests/test_relations.py::test_a_missing_relation_has_no_columns_and_no_kind_and_leaves_a_transaction_"
              "usable",)),
    Mutation("libyaml-composes-past-the-depth-bound", "flows/safe_yaml.py",
             '("check_node", "get_node", "get_single_node")', '()',
             ("tests/test_catalog_hostile.py",)),
    Mutation("libyaml-message-kept-for-a-refused-document", "flows/safe_yaml.py",
             "        # PyYAML alone, the reference: its own message, or the document, should it read one libyaml refuses\n"
             "        return yaml.load(stream(), Loader=loader)\n",
             "        raise\n",
             ("tests/test_catalog_hostile.py",)),
    # ---------------------------------------------------------------- issue 15: pages bounded at real market sizes
    Mutation("full-ranking-listed-whole", "flows/reports.py",
             "            listed = ranking[:RANKING_ROWS_LISTED]\n", "            listed = ranking\n", REPORT_BOUNDS),
    Mutation("top-table-cut-by-the-ranking-bound", "flows/reports.py",
             "        [as_of, max(RANKING_ROWS_LISTED, TOP_ROWS)])", "        [as_of, RANKING_ROWS_LISTED])",
             REPORT_BOUNDS),
    Mutation("excluded-offers-named-without-bound", "flows/reports.py",
             "                       [1:$offers_listed] as listed\n",
             "                       [1:$offers_listed + 1000000] as listed\n",
             REPORT_BOUNDS),
    Mutation("excluded-reasons-left-out-uncounted", "flows/reports.py",
             "        left_out = mine[EXCLUSION_REASONS_LISTED:]\n", "        left_out = []\n", REPORT_BOUNDS),
    Mutation("excluded-offers-alike-named-each", "flows/reports.py",
             "                group by workload_id, exclusion_reason, offer, precision\n",
             "                group by workload_id, exclusion_reason, offer, precision, offer_id\n", REPORT_BOUNDS),
    Mutation("excluded-offers-counted-by-candidate", "flows/reports.py",
             "count(*) as candidates, count(distinct offer_id) as offers,",
             "count(*) as candidates, count(*) as offers,", REPORT_BOUNDS),
    Mutation("reversal-paired-with-the-lowest-outcome", "flows/reports.py",
             "arg_min(worse.candidate_id, (worse.usd_per_chip_hour, worse.outcome_value, worse.candidate_id))",
             "arg_min(worse.candidate_id, (worse.outcome_value, worse.usd_per_chip_hour, worse.candidate_id))",
             GOLDEN_PAGES),
    Mutation("reversal-paired-across-workloads", "flows/reports.py",
             "        on worse.workload_id = better.workload_id\n        -- outcomes compared",
             "        on true\n        -- outcomes compared", GOLDEN_PAGES),
    Mutation("reversals-listed-past-their-limit", "flows/reports.py",
             "        <= $limit\n", "        <= $limit + 1\n", GOLDEN_PAGES),
    Mutation("utilization-small-offer-not-the-best", "flows/reports.py",
             "        filter (where ranked.accelerator_count = 1) as small_id,",
             "        filter (where ranked.accelerator_count = 1 and ranked.outcome_rank > 1) as small_id,", GOLDEN_PAGES),
    Mutation("offers-type-shown-at-its-dearest-term", "flows/offers_page.py",
             "arg_min(offer_id, (usd_per_hour, offer_id)) as cheapest_id",
             "arg_max(offer_id, (usd_per_hour, offer_id)) as cheapest_id", OFFERS_PAGE),
    Mutation("offers-terms-beside-from-every-region", "flows/offers_page.py",
             "\n            and o.region = types.cheapest_region\n", "\n", OFFERS_PAGE),
    Mutation("offers-on-demand-range-over-every-term", "flows/offers_page.py",
             "min(usd_per_hour) filter (pricing_term = 'on_demand') as on_demand_low",
             "min(usd_per_hour) as on_demand_low", OFFERS_PAGE),
    Mutation("offers-one-on-demand-price-shown-as-a-range", "flows/offers_page.py",
             "usd(low) if low == high else ", "", OFFERS_PAGE),
    Mutation("offers-reserved-beside-not-the-cheapest", "flows/offers_page.py",
             "'as_of': o.price_as_of, 'unverified': o.price_unverified}, (o.usd_per_hour, o.offer_id))\n"
             "                   filter (o.pricing_term = 'reserved')",
             "'as_of': o.price_as_of, 'unverified': o.price_unverified}, o.offer_id)\n"
             "                   filter (o.pricing_term = 'reserved')", OFFERS_PAGE),
    Mutation("offers-on-demand-beside-not-the-cheapest", "flows/offers_page.py",
             "min(o.usd_per_hour) filter (o.pricing_term = 'on_demand') as on_demand,",
             "max(o.usd_per_hour) filter (o.pricing_term = 'on_demand') as on_demand,", OFFERS_PAGE),
    Mutation("offers-types-listed-past-their-bound", "flows/offers_page.py",
             "order by cheapest.instance_type) <= $listed\n", "order by cheapest.instance_type) <= $listed + 1000\n",
             OFFERS_PAGE),
    Mutation("offers-bound-over-every-cloud", "flows/offers_page.py",
             "qualify row_number() over (partition by cheapest.cloud order by cheapest.instance_type)",
             "qualify row_number() over (order by cheapest.cloud, cheapest.instance_type)", OFFERS_PAGE),
    Mutation("offers-hardware-note-of-the-first-offer", "flows/offers_page.py",
             "arg_max(hardware_note, offer_id)", "arg_min(hardware_note, offer_id)", OFFERS_PAGE),
    Mutation("offers-hardware-basis-empty-not-named", "flows/offers_page.py",
             "coalesce(nullif(hardware_basis, ''), '—')", "coalesce(hardware_basis, '—')", OFFERS_PAGE),
    Mutation("workload-named-like-a-page-of-the-report", "flows/catalog_models.py",
             "            if workload_id in RESERVED_WORKLOAD_IDS:\n", "            if False:\n",
             ("tests/test_catalog.py",)),
    Mutation("unknown-listings-listed-past-their-bound", "flows/offers_page.py",
             "[as_of, UNKNOWN_LISTINGS_LISTED]", "[as_of, UNKNOWN_LISTINGS_LISTED + 1000]", OFFERS_PAGE),
    Mutation("offers-csv-without-reserved-terms", "flows/offers_page.py",
             "\"select * from marts.offers where as_of = ? \"\n",
             "\"select * from marts.offers where as_of = ? and pricing_term <> 'reserved' \"\n", OFFERS_PAGE),
    # stop 48: what live sources let through (a review's findings)
    Mutation("echoed-bearer-token-not-scrubbed", "flows/sources/_http.py",
             "secrets = _secret_values(url, headers)", "secrets = _secret_values(url)",
             ("tests/test_source_instance_types.py",)),
    Mutation("secret-header-values-kept", "flows/redaction.py",
             "    text = _SECRET_FIELD.sub(r\"\\1***\", text)\n", "",
             ("tests/test_guards.py", "tests/test_source_aws_live.py")),
    Mutation("authorization-value-kept", "flows/redaction.py",
             "    text = _AUTHORIZATION.sub(r\"\\1***\", text)\n", "", ("tests/test_guards.py",)),
    Mutation("truncated-download-not-retried", "flows/sources/_download.py",
             "raise _Truncated(f\"truncated:", "raise LiveSourceError(f\"truncated:",
             ("tests/test_source_aws_offer_file.py",)),
    Mutation("unwritable-download-retried", "flows/sources/_download.py",
             "                raise _unwritable(shown, target, exc) from None\n            written",
             "                raise\n            written", ("tests/test_source_aws_offer_file.py",)),
    Mutation("offer-file-501-retried", "flows/sources/_download.py",
             "retryable = exc.code in _http.RETRY_STATUSES", "retryable = exc.code == 429 or exc.code >= 500",
             ("tests/test_source_aws_offer_file.py",)),
    Mutation("offer-file-retry-after-ignored", "flows/sources/_download.py",
             "delay = delay if asked is None else asked", "delay = delay", ("tests/test_source_aws_offer_file.py",)),
    Mutation("bad-certificate-retried", "flows/sources/_http.py",
             "if isinstance(reason, ssl.SSLCertVerificationError):", "if False:",
             ("tests/test_source_http_live.py",)),
    Mutation("offer-file-bad-certificate-retried", "flows/sources/_download.py",
             "if isinstance(reason, ssl.SSLCertVerificationError):", "if False:",
             ("tests/test_source_aws_offer_file.py",)),
    Mutation("azure-every-meter-region-asked", "flows/sources/azure_retail.py",
             "\"meterRegion\": \"'primary'\", ", "", ("tests/test_source_http_live.py",)),
    Mutation("azure-non-primary-meter-landed", "catalogs/expectations/azure_retail.json",
             "\"value_set\": [\n     true\n    ]", "\"value_set\": [\n     true, false\n    ]",
             ("tests/test_source_azure_retail.py",)),
    Mutation("aws-price-in-another-currency-fails-the-source", "flows/sources/aws_pricing.py",
             "currency, price_text = _price(require(dim, \"pricePerUnit\", f\"{term_where}.{rate_code}\", dict))",
             "currency, price_text = \"USD\", require(require(dim, \"pricePerUnit\", term_where, dict), \"USD\", "
             "term_where)", ("tests/test_source_aws_pricing.py",)),
    Mutation("spot-point-without-zone-fails-the-source", "flows/sources/aws_spot.py",
             "zone = item.get(\"AvailabilityZone\")", "zone = require(item, \"AvailabilityZone\", item_where, str)",
             ("tests/test_source_aws_live.py",)),
    # stop 48: what the reports said of a stale source (a review's findings)
    Mutation("stale-banner-not-on-the-offers-page", "flows/templates/offers.md.j2",
             "{{ m.run_line(as_of, run_id) }}{{ m.stale_banner(stale_past_limit) -}}", "{{ m.run_line(as_of, run_id) }}",
             (STALE_RUN, *SLOW_TOO)),
    Mutation("stale-price-not-marked", "flows/report_templates.py",
             "+ (STALE_MARK if r.get(\"price_stale\") else \"\")", "+ \"\"",
             (STALE_RUN, *SLOW_TOO)),
    Mutation("stale-price-not-marked-on-the-offers-page", "flows/offers_page.py",
             "+ (STALE_MARK if source[\"source_id\"] in stale else \"\"))", "+ \"\")",
             (STALE_RUN, *SLOW_TOO)),
    Mutation("stale-pick-not-said", "flows/reports.py",
             "d[\"pick_price_stale\"] = pick and", "d[\"pick_price_stale\"] = None and", (STALE_RUN, *SLOW_TOO)),
    Mutation("pages-name-no-run", "flows/templates/_macros.md.j2", "{% if run_id %}_Run", "{% if false %}_Run",
             ("tests/test_flow.py::test_golden_report",)),
    Mutation("stale-failure-logged-with-its-traceback", "flows/nightly.py",
             "record.exc_info, record.exc_text = None, None", "pass", (STALE_RUN, *SLOW_TOO)),
    Mutation("frontier-caption-names-the-first-line", "flows/frontier_chart.py",
             "return selected.sort(\"usd_per_million_tokens\", \"candidate_id\", \"load_point\").row(0, named=True)",
             "return selected.row(0, named=True)",
             ("tests/test_frontier.py::test_the_caption_and_the_label_name_the_cheapest_selected_point_not_the_first_line",
              *SLOW_TOO)),
    Mutation("excluded-reasons-sorted-as-text", "flows/reports.py",
             "        mine.sort(key=lambda r: _figures_as_numbers(r[\"exclusion_reason\"]))\n", "",
             ("tests/test_flow.py::test_golden_report",)),
    Mutation("excluded-reason-figures-unformatted", MACROS,
             "    format('{:,}', n::bigint) || case when family = 'cpu'", "    n::bigint || case when family = 'cpu'",
             ("tests/test_flow.py::test_golden_report",)),
    Mutation("excluded-reason-chips-not-through-chips-text", TRAINING,
             "|| ' h on ' || chips_text(chips, family) || '; the deadline is '",
             "|| ' h on ' || chips || ' chips; the deadline is '",
             ("tests/test_cpu_baseline.py::test_the_cpu_baselines_sockets_are_the_rows_over_all_its_instances_on_"
              "every_page",)),
    Mutation("a-cpus-sockets-called-chips", MACROS, "case when family = 'cpu' then ' socket' else ' chip' end",
             "' chip'", ("tests/test_macros.py::test_chips_text_counts_a_cpus_chips_as_sockets",)),
    Mutation("one-chip-written-chips", MACROS, "    || case when n = 1 then '' else 's' end;", "    || 's';",
             ("tests/test_macros.py::test_chips_text_counts_a_cpus_chips_as_sockets",)),
    Mutation("memory-fit-reason-chips-not-sockets", INFERENCE,
             "|| ' weights + KV cache need ' || chips_text(needed_chips, family) || ' of '",
             "|| ' weights + KV cache need ' || format('{:,}', needed_chips) || ' chips of '",
             ("tests/test_cpu_baseline.py::test_the_cpu_baselines_sockets_are_the_rows_over_all_its_instances_on_"
              "every_page",)),
    Mutation("calibration-label-factor-three-decimals", INFERENCE,
             "'; efficiencies x ' || figures_text(checked.calibration_factor)",
             "'; efficiencies x ' || printf('%.3f', checked.calibration_factor)",
             ("tests/test_calibration.py::test_a_workload_without_a_measurement_on_the_offer_gets_a_calibrated_"
              "estimate",)),
    Mutation("calibration-label-fp16-results-unsaid", INFERENCE,
             "                    || case when checked.calibration_measured_precisions is distinct from "
             "checked.precision\n", "                    || case when false\n",
             ("tests/test_calibration.py::test_a_workload_without_a_measurement_on_the_offer_gets_a_calibrated_"
              "estimate",)),
    Mutation("training-calibration-factor-three-decimals", TRAINING,
             "|| ' x ' || figures_text(calibration_factor) || ' fitted from '",
             "|| ' x ' || printf('%.3f', calibration_factor) || ' fitted from '",
             ("tests/test_flow.py::test_golden_report",)),
    Mutation("estimates-page-factor-two-decimals", "flows/estimates_page.py", 'figures(f["factor"]),',
             'num(f["factor"], 2),',
             ("tests/test_reports.py::test_a_page_that_ranks_fp16_says_once_that_it_counts_as_the_bf16_its_workload_"
              "lists",)),
    Mutation("estimates-page-factor-range-two-decimals", "flows/estimates_page.py",
             "f\"{figures(f['min_ratio'])} to {figures(f['max_ratio'])}\",",
             "f\"{num(f['min_ratio'], 2)} to {num(f['max_ratio'], 2)}\",",
             ("tests/test_reports.py::test_a_page_that_ranks_fp16_says_once_that_it_counts_as_the_bf16_its_workload_"
              "lists",)),
    Mutation("instance-listing-memory-unseparated", "sql/intermediate/int_instance_hardware.sql",
             "declared_text(memory_mib) || ' MiB')", "memory_mib || ' MiB')", ("tests/test_instance_hardware.py",)),
    Mutation("peak-multiple-written-x-first", "flows/templates/workload.md.j2", "{{ w.peak_factor | ratio }} at the peak",
             "x{{ w.peak_factor | num(1) }} at the peak", ("tests/test_flow.py::test_golden_report",)),
    Mutation("hosted-api-peak-multiple-written-x-first", "flows/templates/_hosted_api.md.j2",
             "(its units sized for {{ w.peak_factor | ratio }} peaks)", "(its units sized for x{{ w.peak_factor | num(1) }} peaks)",
             ("tests/test_model_api_prices.py::test_the_workload_page_shows_the_hosted_api_section",)),
    Mutation("usd-text-two-decimals-below-ten", MACROS, "else format('{:,.3f}', x::double) end;",
             "else format('{:,.2f}', x::double) end;",
             ("tests/test_macros.py::test_usd_text_writes_money_as_the_pages_do",)),
    Mutation("changes-a-picks-new-result-of-another-reference", "sql/marts/changes.sql",
             "        on pick_added.source_id = picks.benchmark_source_id and pick_added.source_ref = picks.benchmark_ref\n",
             "        on pick_added.source_id = picks.benchmark_source_id\n",
             ("tests/test_changes.py",)),
    Mutation("changes-a-picks-new-result-of-another-source", "sql/marts/changes.sql",
             "        on pick_added.source_id = picks.benchmark_source_id and pick_added.source_ref = picks.benchmark_ref\n",
             "        on pick_added.source_ref = picks.benchmark_ref\n",
             ("tests/test_changes.py",)),
    Mutation("changes-a-picks-new-result-labelled-by-another-key", "sql/marts/changes.sql",
             "order by added.subject) = 1", "order by added.subject desc) = 1",
             ("tests/test_changes.py",)),
    Mutation("a-setup-run-again-shares-its-first-runs-key", "sql/intermediate/int_benchmark_results_listed.sql",
             "case when nth_of_setup > 1", "case when nth_of_setup > 99",
             ("tests/test_own_runs.py::test_a_setup_run_again_is_a_result_of_its_own_and_a_run_appended_changes_no_"
              "key", *SLOW_TOO)),
    Mutation("a-setups-first-key-taken-by-its-latest-run", "sql/intermediate/int_benchmark_results_listed.sql",
             "row_number() over (partition by setup_key order by row_no) as nth_of_setup",
             "row_number() over (partition by setup_key order by row_no desc) as nth_of_setup",
             ("tests/test_own_runs.py::test_a_setup_run_again_is_a_result_of_its_own_and_a_run_appended_changes_no_"
              "key", *SLOW_TOO)),
    Mutation("a-setups-first-key-by-date-so-a-back-dated-run-takes-it", "sql/intermediate/int_benchmark_results_listed.sql",
             "row_number() over (partition by setup_key order by row_no) as nth_of_setup",
             "row_number() over (partition by setup_key order by run_date nulls first, row_no) as nth_of_setup",
             ("tests/test_own_runs.py::test_a_setup_run_again_is_a_result_of_its_own_and_a_run_appended_changes_no_"
              "key", *SLOW_TOO)),
    Mutation("own-run-source-pipe-unescaped", "sql/intermediate/int_benchmark_results_listed.sql",
             "replace(replace(coalesce(run_source, ''), '\\', '\\\\'), '|', '\\|')", "coalesce(run_source, '')",
             ("tests/test_own_runs.py::test_a_setup_run_again_is_a_result_of_its_own_and_a_run_appended_changes_no_"
              "key", *SLOW_TOO)),
    Mutation("own-run-instance-type-pipe-unescaped", "sql/intermediate/int_benchmark_results_listed.sql",
             "replace(replace(coalesce(instance_type, ''), '\\', '\\\\'), '|', '\\|')", "coalesce(instance_type, '')",
             ("tests/test_own_runs.py::test_a_setup_run_again_is_a_result_of_its_own_and_a_run_appended_changes_no_"
              "key", *SLOW_TOO)),
    Mutation("undated-run-again-keyed-by-an-empty-date", "sql/intermediate/int_benchmark_results_listed.sql",
             "coalesce(run_date::varchar, 'undated')", "coalesce(run_date::varchar, '')",
             ("tests/test_own_runs.py::test_a_setup_run_again_is_a_result_of_its_own_and_a_run_appended_changes_no_"
              "key", *SLOW_TOO)),
    Mutation("runs-again-on-one-date-share-a-key", "sql/intermediate/int_benchmark_results_listed.sql",
             "if(nth_again_that_day > 1, '|' || nth_again_that_day, '')", "''",
             ("tests/test_own_runs.py::test_a_setup_run_again_is_a_result_of_its_own_and_a_run_appended_changes_no_"
              "key", *SLOW_TOO)),
    Mutation("runs-of-one-date-counted-in-their-texts-order", "sql/intermediate/int_benchmark_results_listed.sql",
             "row_number() over (partition by setup_key, run_date order by row_no)",
             "row_number() over (partition by setup_key, run_date order by source_ref)",
             ("tests/test_own_runs.py::test_a_setup_run_again_is_a_result_of_its_own_and_a_run_appended_changes_no_"
              "key", *SLOW_TOO)),
    Mutation("runs-again-on-the-first-runs-date-counted-from-the-first", "sql/intermediate/int_benchmark_results_listed.sql",
             "- if(run_date is not distinct from first_value(run_date)", "- if(run_date is distinct from first_value(run_date)",
             ("tests/test_own_runs.py::test_a_setup_run_again_is_a_result_of_its_own_and_a_run_appended_changes_no_"
              "key", *SLOW_TOO)),
    Mutation("changes-prices-to-the-cent", "sql/marts/changes.sql",
             "usd_text(pick_price_before) || ' to ' || usd_text(pick_price_after)",
             "printf('%.2f', pick_price_before) || ' to ' || printf('%.2f', pick_price_after)",
             ("tests/test_changes.py::test_changes_of_hand_made_days_name_each_reason_a_fall_in_price_and_sources_"
              "stale_or_fresh",)),
    Mutation("mlperf-declared-training-peak-ignored", "sql/intermediate/int_training_backtest.sql",
             "coalesce(declared.peak_tflops, training_peaks.peak_tflops) as peak_tflops,",
             "training_peaks.peak_tflops as peak_tflops,",
             ("tests/test_calibration.py::test_an_mlperf_training_result_is_estimated_at_the_precision_its_submission_"
              "declares",)),
    Mutation("mlperf-declared-training-precision-unsaid", "sql/intermediate/int_training_backtest.sql",
             "coalesce(declared.precision, training_peaks.precision) as precision,",
             "training_peaks.precision as precision,",
             ("tests/test_calibration.py::test_an_mlperf_training_result_is_estimated_at_the_precision_its_submission_"
              "declares",)),
    Mutation("mlperf-declared-submitter-case-sensitive", "sql/staging/stg_mlperf_training__results.sql",
             "lower(declared.submitter) = lower(trim(source.submitter))", "declared.submitter = source.submitter",
             ("tests/test_calibration.py::test_an_mlperf_training_result_is_estimated_at_the_precision_its_submission_"
              "declares",)),
    Mutation("mlperf-declared-precision-for-another-chip", "sql/staging/stg_mlperf_training__results.sql",
             "            and declared.accelerator_id = aliases.accelerator_id\n", "",
             ("tests/test_calibration.py::test_an_mlperf_training_result_is_estimated_at_the_precision_its_submission_"
              "declares",)),
    Mutation("trained-at-precision-without-a-peak-accepted", "flows/catalog_models.py",
             "                elif trained.precision not in chip.modelled_peaks():", "                elif False:",
             ("tests/test_catalog.py::test_a_declared_training_precision_names_a_known_chip_a_peak_it_lists_and_its_"
              "source",)),
    Mutation("trained-at-declared-twice-accepted", "flows/catalog_models.py", "            if key in seen:\n",
             "            if False:\n",
             ("tests/test_catalog.py::test_a_declared_training_precision_names_a_known_chip_a_peak_it_lists_and_its_"
              "source",)),
    Mutation("trained-at-on-a-model-only-task-accepted", "flows/catalog_models.py",
             "        if not any(given.values()) and self.trained_at:", "        if False:",
             ("tests/test_catalog.py::test_a_task_that_only_names_its_model_declares_no_training_precision",)),
    Mutation("estimates-page-declared-precision-said-assumed", "flows/estimates_page.py",
             '    if comparison["precision_source"]:', "    if False:",
             ("tests/test_reports.py::test_the_back_test_page_names_a_declared_training_precision_and_its_source",)),
    Mutation("trained-at-submitter-spaces-kept", "flows/catalog_models.py",
             "    submitter: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]",
             "    submitter: Annotated[str, StringConstraints(min_length=1, max_length=200)]",
             ("tests/test_catalog.py::test_a_declared_training_precision_names_a_known_chip_a_peak_it_lists_and_its_"
              "source",)),
    Mutation("mlperf-measured-declared-precision-dropped", "sql/intermediate/int_training_measured.sql",
             "        results.declared_precision as precision,\n", "        null::varchar as precision,\n",
             ("tests/test_reports.py::test_a_measured_result_of_no_declared_precision_is_said_so_not_given_one",)),
    Mutation("measured-at-the-asked-precision-said-anyway", "flows/reports.py",
             "\n        and precision_class(rankings.precision) <> precision_class(workloads.training_precision)", "",
             ("tests/test_reports.py::test_the_rows_trained_at_another_precision_are_mlperf_trainings_of_another_class_"
              "than_their_workload_asks",)),
    Mutation("trained-at-said-of-an-own-run", "flows/reports.py",
             "        and starts_with(rankings.benchmark_label, 'MLPerf Training ')\n", "",
             ("tests/test_own_runs.py::test_a_decision_says_what_an_mlperf_submission_trained_at_not_what_an_own_run_"
              "declares", "tests/test_reports.py::test_the_rows_trained_at_another_precision_are_mlperf_trainings_of_"
              "another_class_than_their_workload_asks", *SLOW_TOO)),
    Mutation("trained-at-fp16-said-unlike-bf16", "flows/reports.py",
             "precision_class(rankings.precision) <> precision_class(workloads.training_precision)",
             "rankings.precision <> workloads.training_precision",
             ("tests/test_reports.py::test_the_rows_trained_at_another_precision_are_mlperf_trainings_of_another_class_"
              "than_their_workload_asks",)),
    Mutation("trained-at-said-twice-when-both-alike", "flows/templates/_sentences.j2",
             "{%- if sides | length == 2 and sides[0][1] == sides[1][1] %}", "{%- if false %}",
             ("tests/test_reports.py::test_a_measured_pick_of_no_declared_precision_is_said_so_where_the_workload_asks_"
              "one",)),
    Mutation("trained-at-sides-never-passed", "flows/reports.py",
             '        d["trained_at_sides"] = trained_at_sides(d, trained_otherwise)', '        d["trained_at_sides"] = []',
             ("tests/test_reports.py::test_a_measured_result_of_no_declared_precision_is_said_so_not_given_one",)),
    Mutation("energy-label-chips-not-through-chips-text", "sql/intermediate/int_inference_costs_computed.sql",
             "|| ' load (declared) x ' || chips_text(replica_chips, chip_family) || ' x PUE '",
             "|| ' load (declared) x ' || replica_chips || ' chips x PUE '",
             ("tests/test_energy.py::test_energy_from_tdp_where_nothing_is_measured",)),
    Mutation("usd-sized-by-the-unrounded-value", "flows/formatting.py",
             'return f"{value:,.2f}" if abs(float(f"{value:.3f}")) >= 10 else',
             'return f"{value:,.2f}" if abs(value) >= 10 else',
             ("tests/test_macros.py::test_usd_text_writes_money_as_the_pages_do",)),
    Mutation("usd-text-sized-by-the-unrounded-value", MACROS,
             "case when abs(cast(format('{:.3f}', x::double) as double)) >= 10 then",
             "case when abs(x::double) >= 10 then", ("tests/test_macros.py::test_usd_text_writes_money_as_the_pages_do",)),
    Mutation("change-sentence-prices-to-the-cent", "flows/templates/_sentences.j2",
             "({{ c.before_value | usd }} to {{ c.after_value | usd }} USD per hour)",
             "({{ c.before_value | num }} to {{ c.after_value | num }} USD per hour)",
             ("tests/test_reports.py::test_a_price_move_gives_the_multiple_and_both_prices_in_one_format",)),
    Mutation("query-table-past-max-rows", "flows/query_command.py",
             "con.from_arrow(rows.slice(0, max_rows)", "con.from_arrow(rows.slice(0, max_rows + 1)",
             ("tests/test_query_command.py",)),
    Mutation("query-says-it-cut-at-the-bound", "flows/query_command.py",
             "rows.num_rows > max_rows", "rows.num_rows >= max_rows", ("tests/test_query_command.py",)),
    Mutation("closed-pipe-traceback", "flows/std_streams.py",
             "                return self._stream.write(text)\n            except BrokenPipeError:",
             "                return self._stream.write(text)\n            except ValueError:",
             ("tests/test_cli.py::test_a_command_whose_reader_closed_its_output_ends_quietly_with_status_141",)),
    Mutation("catalog-numbers-coerced", "flows/catalog_models.py",
             "allow_inf_nan=False, strict=True)", "allow_inf_nan=False)", ("tests/test_catalog_hostile.py",)),
    Mutation("impossible-yaml-date-a-traceback", "flows/safe_yaml.py",
             "BoundedSafeLoader.add_constructor(\"tag:yaml.org,2002:timestamp\", "
             "BoundedSafeLoader.construct_yaml_timestamp)", "", ("tests/test_catalog_hostile.py",)),
    Mutation("price-sheet-impossible-date-unnamed", "flows/sources/price_sheet.py",
             "except safe_yaml.YamlRefusedError as exc:", "except safe_yaml.YamlLimitError as exc:",
             ("tests/test_price_sheet.py",)),
    Mutation("own-run-date-not-a-date-landed", "flows/checks.py",
             "text.str.to_date(\"%Y-%m-%d\", strict=False)", "text", ("tests/test_own_runs.py", *SLOW_TOO)),
    Mutation("own-run-after-its-file-landed", "flows/checks.py",
             "pl.when(day.is_not_null()).then(", "pl.when(day.is_null()).then(", ("tests/test_own_runs.py", *SLOW_TOO)),
    Mutation("source-at-without-date-taken", "flows/pipeline.py", "if at and not date_text:", "if None:",
             ("tests/test_cli.py",)),
    Mutation("source-dated-after-the-run-taken", "flows/pipeline.py", "if data_as_of > as_of:",
             "if data_as_of > as_of + dt.timedelta(days=1):", ("tests/test_cli.py",)),
    # `hweval check` said OK for an enabled price sheet the run refused (an unknown field, a 6.9 MB or deep file)
    Mutation("check-reads-no-source-file", "flows/cli.py",
             "if not source.enabled or source.reads_live(catalog.sources.mode):",
             "if True:", ("tests/test_cli.py::test_check_refuses_an_enabled_source_file_the_run_would_refuse",)),
    # Python 3.11's date.fromisoformat took --as-of 20261130 and --source X=F@2026-W47-5, asking for YYYY-MM-DD
    Mutation("a-date-not-written-yyyy-mm-dd-taken", "flows/paths.py",
             'if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):', "if False:",
             ("tests/test_cli.py::test_run_refuses_an_as_of_not_written_yyyy_mm_dd",
              "tests/test_cli.py::test_run_refuses_a_source_or_accept_changes_that_names_nothing_before_it_starts")),
    # a typo in --source printed the temporary server's line, then its refusal: two lines where README says one
    Mutation("server-line-before-the-inputs-are-checked", "flows/run_command.py",
             "    try:\n        check_run_inputs(args, source_files)",
             '    if server is not None:\n        print("hweval: a temporary local Prefect server starts", file=sys.stderr)'
             "\n    try:\n        check_run_inputs(args, source_files)",
             ("tests/test_cli.py::test_a_refused_input_is_one_line_without_the_temporary_servers",)),
    Mutation("server-left-running-after-a-refused-input", "flows/run_command.py",
             "    except BaseException:\n        read_ahead.abandon()\n        if server is not None:\n"
             "            server.stop()\n        raise\n    if server is not None:\n        # said once",
             "    except BaseException:\n        read_ahead.abandon()\n        raise\n    if server is not None:\n"
             "        # said once",
             ("tests/test_cli.py::test_a_refused_input_is_one_line_without_the_temporary_servers",)),
    # the help listed exit statuses 0-5; README's table has 6 (cancelled from Prefect) too
    Mutation("help-without-exit-status-6", "flows/run_command.py",
             '    EXIT_CANCELLED: "cancelled from Prefect (its UI, `prefect flow-run cancel`) and stopped before its '
             'publish: nothing "\n                    "changed",\n', "",
             ("tests/test_cli.py::test_the_help_lists_every_exit_status_of_hweval_run_that_the_readme_does",)),
    Mutation("hweval-help-without-the-exit-statuses", "flows/cli.py",
             'description = (__doc__ or "").replace("RUN_EXIT_STATUSES (the help prints them)", run_exit_statuses())',
             'description = (__doc__ or "")',
             ("tests/test_cli.py::test_the_help_lists_every_exit_status_of_hweval_run_that_the_readme_does",)),
    Mutation("short-csv-row-read", "flows/sources/_common.py", "if len(row) != len(header):",
             "if len(row) > len(header):", ("tests/test_malformed_inputs.py",)),
    # a quote never closed swallowed every line after it into one field (that entry kept the header's field count)
    Mutation("csv-quote-never-closed-swallows-the-rest", "flows/sources/_common.py",
             "reader = csv.reader(lines, strict=True)", "reader = csv.reader(lines)",
             ("tests/test_source_limits.py::test_a_csv_quote_never_closed_is_refused_naming_the_line_it_opened",)),
    Mutation("csv-unclosed-quote-named-by-its-records-first-line", "flows/sources/_common.py",
             "opened, state = line_no, \"quoted\"", "state = \"quoted\"",
             ("tests/test_source_limits.py::test_a_csv_quote_opened_on_a_later_line_of_a_record_is_the_line_named",)),
    Mutation("sources-yaml-file-dated-after-tomorrow-taken", "flows/pipeline.py", "if f.as_of > last_allowed]",
             "if False]", ("tests/test_cli.py",)),
    Mutation("files-not-read-held-to-their-dates", "flows/pipeline.py",
             "if source.enabled and source_id not in not_read and not source.reads_live(mode)", "if True",
             ("tests/test_cli.py",)),
    Mutation("displaced-source-files-held-to-their-dates", "flows/pipeline.py",
             "    not_read = set(source_files or {}) | {other", "    not_read = set(source_files or {}) & {other",
             ("tests/test_cli.py",)),
    Mutation("www-after-an-underscore-a-link", "flows/formatting.py", "(?<![^\\W_])(?<!\\.)(www)",
             "(?<![\\w.])(www)", ("tests/test_reports.py",)),
    Mutation("stdout-closed-at-start-a-traceback", "flows/cli.py",
             "ReaderGone(sys.stdout if sys.stdout is not None else open(os.devnull, \"w\"))", "ReaderGone(sys.stdout)",
             ("tests/test_cli.py::test_a_failed_run_whose_reader_closed_its_output_keeps_its_status_and_says_why",)),
    Mutation("failed-run-with-its-reader-gone-says-141", "flows/cli.py", "if (guarded.gone or guarded_err.gone) and code == 0:",
             "if guarded.gone or guarded_err.gone:", ("tests/test_cli.py",)),
    Mutation("own-run-a-day-ahead-of-utc-quarantined", "flows/checks.py", "RUN_DATE_DAYS_AHEAD = 1",
             "RUN_DATE_DAYS_AHEAD = 0", ("tests/test_source_benchmark_runs.py",)),
    Mutation("bare-url-in-data-a-link", "flows/formatting.py",
             "    return _AUTOLINK.sub(", "    return escaped or _AUTOLINK.sub(", ("tests/test_reports.py",)),
    Mutation("number-with-underscores-read", "flows/sources/_common.py",
             "if isinstance(text, str) and (\"_\" in text or not text.isascii()):", "if False:",
             ("tests/test_source_limits.py",)),
    Mutation("catalog-directory-said-not-found", "flows/catalog.py", "    if path.is_dir():", "    if False:",
             ("tests/test_cli.py::test_check_says_a_catalog_file_that_is_a_directory_is_one",)),
    Mutation("warehouse-that-is-no-duckdb-file-taken", "flows/pipeline.py",
             "if warehouse_file.is_file() and not is_duckdb_file(warehouse_file):", "if False:",
             ("tests/test_cli.py",)),
    Mutation("load-point-without-the-reclaim-loss", "sql/intermediate/int_serving_load_points.sql",
             "            / (1 - coalesce(offline_reclaim_loss(", "            / (1 - 0 * coalesce(offline_reclaim_loss(",
             ("tests/test_frontier.py::test_the_selected_load_point_costs_what_the_candidate_costs_offline_on_spot_too",
              *SLOW_TOO)),
    Mutation("json-keeps-the-last-of-two-columns-of-one-name", "flows/query_command.py",
             'if args.format == "json" and repeated:', "if False:",
             ("tests/test_query_command.py::test_query_refuses_json_of_two_columns_of_one_name_that_table_and_csv_"
              "print",)),
    Mutation("benchmark-label-null-without-a-chip-count", "sql/intermediate/int_benchmark_results_listed.sql",
             "|| coalesce(chips || ' x ', '') || accelerator_id", "|| chips || ' x ' || accelerator_id",
             ("tests/test_instance_hardware.py::test_every_snapshot_benchmark_result_has_a_label_even_without_a_"
              "chip_count",)),
    Mutation("interrupt-after-the-commit-restores-the-warehouse", "flows/publishing.py",
             "        if committed():\n            raise\n", "",
             ("tests/test_fault_injection.py::test_an_interrupt_after_any_step_of_the_publish_undoes_it_only_before_the_commit", *SLOW_TOO)),
    Mutation("interrupt-after-the-commit-restores-the-reports", "flows/publishing.py",
             'if publish_journal.is_committed(reports_root, manifest["publish_id"]):', "if False:",
             ("tests/test_fault_injection.py::test_an_interrupt_after_any_step_of_the_publish_undoes_it_only_before_the_commit", *SLOW_TOO)),
    Mutation("interrupted-rename-undone-as-if-it-had-not-happened", "flows/publishing.py",
             "if not new.exists() and target.exists():", "if False:",
             ("tests/test_fault_injection.py::test_an_interrupt_after_any_step_of_the_publish_undoes_it_only_before_the_commit", *SLOW_TOO)),
    Mutation("failed-publish-not-recovered-by-its-journal", "flows/publishing.py",
             "            _recover_now(warehouse_file, reports_root)", "            pass",
             ("tests/test_fault_injection.py::test_an_interrupt_after_any_step_of_the_publish_undoes_it_only_before_the_commit", *SLOW_TOO)),
    Mutation("another-reports-folders-commit-not-read", "flows/publish_journal.py",
             'else is_committed(Path(note["reports"]), note["publish_id"]))',
             'else is_committed(reports_root, note["publish_id"]))',
             ("tests/test_fault_injection.py::test_a_publish_killed_after_its_commit_is_finished_by_a_run_with_"
              "another_reports_folder", *SLOW_TOO)),
    Mutation("max-rows-0-says-0-rows-of-a-query-that-had-some", "flows/query_command.py",
             "if cut and args.max_rows == 0:", "if False:",
             ("tests/test_query_command.py::test_query_prints_at_most_max_rows_in_the_table_and_says_it_cut",)),
    Mutation("stderr-reader-gone-fails-the-run", "flows/cli.py",
             "    sys.stderr = guarded_err = ReaderGone(", "    guarded_err = ReaderGone(",
             ("tests/test_cli.py::test_a_command_whose_log_reader_closed_stderr_goes_on_and_ends_with_its_status",
              *SLOW_TOO)),
    Mutation("pull-step-takes-the-deployers-hweval-home", "prefect.yaml",
             'directory: "{{ hweval-home.stdout }}"', 'directory: "{{ $HWEVAL_HOME }}"',
             ("tests/test_deployments.py::test_the_deployed_pull_steps_take_the_workers_hweval_home_not_the_deployers",
              *SLOW_TOO)),
    Mutation("cancelled-run-not-told", "flows/crash_notice.py",
             "(run.state.is_crashed() or run.state.is_cancelled())", "run.state.is_crashed()",
             ("tests/test_deployments.py::test_a_nightly_run_cancelled_from_prefect_is_told_by_the_crash_notice_"
              "deployment", *SLOW_TOO)),
    Mutation("run-cancelled-before-it-ran-told", "flows/crash_notice.py",
             "if run.state.is_cancelled() and attempt == str(run.state.id):", "if False:",
             ("tests/test_deployments.py::test_a_nightly_run_cancelled_from_prefect_is_told_by_the_crash_notice_"
              "deployment", *SLOW_TOO)),
    Mutation("cancelled-run-no-automation", "prefect.yaml", "          - prefect.flow-run.Cancelled\n", "",
             ("tests/test_deployments.py::test_a_nightly_run_cancelled_from_prefect_is_told_by_the_crash_notice_"
              "deployment", *SLOW_TOO)),
    Mutation("recent-publishes-forgotten", "flows/publish_journal.py",
             "(isinstance(recent, list) and publish_id in recent)", "False",
             ("tests/test_fault_injection.py::test_a_committed_warehouse_stays_after_another_warehouse_published_to_its_reports_folder",
              *SLOW_TOO)),
    Mutation("journal-and-note-paired-by-pid-alone", "flows/publish_journal.py",
             'same_publish = journal is not None and note is not None and journal["publish_id"] == note["publish_id"]',
             "same_publish = journal is not None and note is not None",
             ("tests/test_fault_injection.py::test_a_pid_used_again_pairs_no_journal_with_another_publishs_warehouse", *SLOW_TOO)),
    Mutation("reports-half-by-the-path-written-in-the-journal", "flows/publish_journal.py",
             "        if journal is not None:\n            if not reports_committed:",
             '        if journal is not None and _same_path(Path(journal["reports"] or reports_root), reports_root):\n'
             "            if not reports_committed:",
             ("tests/test_fault_injection.py::test_folders_reached_by_another_path_are_recovered_by_where_the_journal_lies", *SLOW_TOO)),
    Mutation("history-caption-names-every-price-source-stale", "flows/charts.py",
             "loads.source_id = prices.price_source_id and loads.status = 'stale'",
             "loads.source_id = prices.price_source_id",
             ("tests/test_charts.py::test_history_query_looks_back_over_the_last_runs_not_the_last_picks",)),
    Mutation("history-caption-names-an-earlier-runs-stale-source", "flows/charts.py",
             "on loads.as_of = $as_of and loads.source_id", "on loads.as_of <= $as_of and loads.source_id",
             ("tests/test_charts.py::test_history_query_looks_back_over_the_last_runs_not_the_last_picks",)),
    Mutation("chart-pick-of-a-tie-by-candidate-id", "flows/charts.py",
             '["outcome_rank", "usd_per_chip_hour", "candidate_id"]', '["outcome_rank", "candidate_id"]',
             ("tests/test_charts.py::test_of_equal_outcomes_the_pick_is_the_cheaper_chip_hour_as_in_rank_history",)),
    Mutation("history-caption-never-says-stayed", "flows/charts.py", "if best == best_then else", "if False else",
             ("tests/test_charts.py::test_history_caption_wording",)),
    Mutation("history-caption-counts-offers-not-changes", "flows/charts.py",
             'changes = history["pick_offer_id"].ne(history["pick_offer_id"].shift(1)).sum()',
             'changes = history["pick_offer_id"].n_unique() - 1',
             ("tests/test_charts.py::test_history_caption_wording",)),
    Mutation("history-caption-stale-since-none", "flows/charts.py",
             '+ (f" from its last good load, by the run of {since}." if since else " one no run has refreshed."))',
             '+ f" from its last good load, by the run of {since}.")',
             ("tests/test_charts.py::test_history_caption_wording",)),
    Mutation("bars-caption-always-names-calibrated", "flows/charts.py",
             'if "calibrated" in top["basis"].to_list():', "if True:",
             ("tests/test_charts.py::test_two_bars_caption_order_and_labels",)),
    Mutation("bars-caption-without-the-last-of-two", "flows/charts.py", "if top.height > 1:", "if top.height > 2:",
             ("tests/test_charts.py::test_two_bars_caption_order_and_labels",)),
    Mutation("bars-pick-at-the-bottom", "flows/charts.py", "ax.set_ylim(top.height - 0.5, -0.5)",
             "ax.set_ylim(-0.5, top.height - 0.5)", ("tests/test_charts.py::test_two_bars_caption_order_and_labels",)),
    Mutation("bar-labels-without-the-chips", "flows/charts.py",
             """for extra in (lambda r: r["region"], lambda r: f"{r['chips']} chips"):""",
             'for extra in (lambda r: r["region"],):',
             ("tests/test_charts.py::test_bar_labels_tell_alike_offers_apart_by_the_chips_and_are_cut_when_long",)),
    Mutation("bar-labels-not-cut", "flows/charts.py", 'label[:BAR_LABEL_CHARS - 1] + "…" for label in labels]',
             'label + "…" for label in labels]',
             ("tests/test_charts.py::test_bar_labels_tell_alike_offers_apart_by_the_chips_and_are_cut_when_long",)),
    Mutation("history-short-run-dates-not-ticked", "flows/charts.py", "if len(dates) <= HISTORY_DATE_TICKS:",
             "if len(dates) < 2:", ("tests/test_charts.py::test_a_short_history_ticks_each_runs_date",)),
    Mutation("tick-millions-divided-by-a-thousand", "flows/chart_kit.py", 'return f"{value / 1e6:,g}M"',
             'return f"{value / 1e3:,g}M"', ("tests/test_charts.py::test_plain_number_ticks",)),
    Mutation("frontier-one-line-short", "flows/frontier_chart.py", "qualify line_rank <= $limit",
             "qualify line_rank < $limit",
             ("tests/test_charts.py::test_the_frontier_draws_the_six_cheapest_offers_with_a_frontier",)),
    Mutation("frontier-lines-without-a-frontier-first", "flows/frontier_chart.py",
             "order by points >= $min_points desc, selected_usd nulls last", "order by selected_usd nulls last",
             ("tests/test_charts.py::test_the_frontier_draws_the_six_cheapest_offers_with_a_frontier",)),
    Mutation("frontier-unselected-lines-first", "flows/frontier_chart.py", "selected_usd nulls last, cheapest_usd",
             "selected_usd nulls first, cheapest_usd",
             ("tests/test_charts.py::test_the_frontier_draws_the_six_cheapest_offers_with_a_frontier",)),
    Mutation("frontier-labels-without-the-precision", "flows/frontier_chart.py",
             'for extra in (lambda r: r["precision"], lambda r: r["region"]):',
             'for extra in (lambda r: r["region"],):',
             ("tests/test_charts.py::test_frontier_lines_of_one_offer_are_told_apart_by_the_precision",)),
    Mutation("backtest-caption-hollow-for-a-doubtful-result", "flows/backtest_chart.py",
             '    if comparisons.filter(~CALIBRATED, ~DOUBTFUL).height:\n        text += "; hollow',
             '    if comparisons.filter(~CALIBRATED).height:\n        text += "; hollow',
             ("tests/test_charts.py::test_the_backtest_chart_has_a_panel_per_phase_and_counts_only_positive_results",)),
    Mutation("backtest-other-phase-without-a-panel", "flows/backtest_chart.py",
             "return [p for p in BACKTEST_PHASES if p in present] + sorted(present - set(BACKTEST_PHASES))",
             "return [p for p in BACKTEST_PHASES if p in present]",
             ("tests/test_charts.py::test_the_backtest_chart_has_a_panel_per_phase_and_counts_only_positive_results",)),
    Mutation("backtest-counts-a-zero-estimate", "flows/backtest_chart.py",
             "where as_of = $as_of and measured > 0 and loo_estimated > 0", "where as_of = $as_of",
             ("tests/test_charts.py::test_the_backtest_chart_has_a_panel_per_phase_and_counts_only_positive_results",)),
    Mutation("history-caption-silent-on-a-stale-price", "flows/charts.py",
             'if last["current_price_stale_source"] is not None:', "if False:",
             (STALE_RUN, *SLOW_TOO)),
    # marts.changes and the sentences of "What changed", on a hand-made history (tests/test_changes.py)
    Mutation("changes-price-fall-not-a-move", CHANGES,
             "and abs(now.usd_per_hour / before.usd_per_hour - 1) > (select",
             "and (now.usd_per_hour / before.usd_per_hour - 1) > (select", (HAND_MADE_CHANGES,)),
    Mutation("changes-pick-price-fall-not-its-reason", CHANGES,
             "where offer_id = picks.offer_id and after_value < before_value) as pick_price_ratio",
             "where offer_id = picks.offer_id and after_value > before_value) as pick_price_ratio",
             (HAND_MADE_CHANGES,)),
    Mutation("changes-withdrawn-offer-looked-up-for-the-new-pick", CHANGES,
             "from offers_removed where offer_id = picks.previous_offer_id) as previous_offer_removed",
             "from offers_removed where offer_id = picks.offer_id) as previous_offer_removed", (HAND_MADE_CHANGES,)),
    Mutation("changes-source-never-fresh-again", CHANGES,
             "        or (status = 'landed' and previous_status = 'stale')\n", "", (HAND_MADE_CHANGES,)),
    Mutation("changes-source-stale-on-its-first-run-unreported", CHANGES,
             "(status = 'stale' and coalesce(previous_status, 'landed') <> 'stale')",
             "(status = 'stale' and previous_status <> 'stale')", (HAND_MADE_CHANGES,)),
    Mutation("changes-objective-switch-keeps-the-old-units-value", CHANGES,
             "case when previous_outcome_metric = outcome_metric or outcome_metric is null then previous_outcome_value "
             "end", "previous_outcome_value", (HAND_MADE_CHANGES,)),
    Mutation("changes-new-candidate-called-smaller-moves", CHANGES,
             "            when pick_previous_basis is null then 'new candidate'\n", "", (HAND_MADE_CHANGES,)),
    Mutation("changes-a-label-a-catalog-edit-moved-is-a-new-result", CHANGES,
             "(pick_label_moved and not catalog_edited and not models_changed)",
             "(pick_label_moved and not models_changed)", (LABEL_MOVED,)),
    Mutation("changes-a-picks-benchmark-source-moving-is-no-new-result", CHANGES,
             "             and pick_before.benchmark_source_id is distinct from picks.benchmark_source_id)) as "
             "pick_basis_moved", "             and false)) as pick_basis_moved", (LABEL_MOVED,)),
    Mutation("changes-a-row-measured-anew-is-smaller-moves", CHANGES,
             "(pick_basis_moved or (pick_label_moved and not catalog_edited and not models_changed))",
             "pick_basis_moved", (LABEL_MOVED,)),
    Mutation("changes-a-basis-moving-alone-is-no-new-result", CHANGES,
             "        (pick_before.basis is distinct from picks.basis\n", "        (false\n", (LABEL_MOVED,)),
    Mutation("changes-an-estimates-catalog-source-moving-is-a-new-result", CHANGES,
             "         or (picks.basis <> 'estimated'\n             and ", "         or (", (LABEL_MOVED,)),
    Mutation("changes-a-stale-source-hides-a-row-measured-anew", CHANGES,
             "            when pick_new_evidence then 'new result'\n"
             "            when stale_sources is not null then 'stale source'\n",
             "            when stale_sources is not null then 'stale source'\n"
             "            when pick_new_evidence then 'new result'\n", (LABEL_MOVED,)),
    Mutation("changes-a-label-a-release-reworded-is-a-new-result", CHANGES,
             "(pick_label_moved and not catalog_edited and not models_changed)",
             "(pick_label_moved and not catalog_edited)", (RELEASE_WORDED,)),
    Mutation("changes-a-run-that-recorded-no-models-digest-is-no-release", CHANGES,
             "previous_models_digest is distinct from models_digest", "previous_models_digest <> models_digest",
             (RELEASE_WORDED,)),
    Mutation("models-digest-blind-to-a-models-text", "flows/transform.py",
             'digest.update(f"{path.relative_to(sql_dir).as_posix()}\\n{path.read_text()}\\n".encode())',
             'digest.update(f"{path.relative_to(sql_dir).as_posix()}\\n".encode())',
             ("tests/test_incremental.py::test_the_models_digest_moves_with_a_models_sql_not_with_the_raw_ddl",)),
    Mutation("a-reused-load-records-no-files-or-data-date", "flows/land.py",
             '"data_as_of": batch.data_as_of, "files": len(batch.files), "rows_in": previous.rows_in,',
             '"data_as_of": None, "files": None, "rows_in": previous.rows_in,',
             (("tests/test_incremental.py::test_a_declared_file_that_adds_no_row_reuses_the_rows_and_records_the_"
               "batchs_own_files_and_date"), *SLOW_TOO)),
    Mutation("other-sources-same-date-rows-read-by-the-checks-before-they-go", "flows/land.py",
             "        warehouse.clear_other_sources(con, as_of, kept)\n", "        pass\n",
             ("tests/test_incremental.py::test_a_same_date_re_run_without_the_price_list_checks_spot_prices_as_a_cold_"
              "run_would", *SLOW_TOO)),
    Mutation("a-backfill-reuses-a-later-dates-load", "flows/reuse.py",
             '"and as_of <= ? order by as_of desc, run_id desc limit 1"',
             '"and ? is not null order by as_of desc, run_id desc limit 1"',
             ("tests/test_incremental.py::test_a_backfill_equal_to_a_later_dates_accepted_load_is_checked_against_its_"
              "own_dates_prices",
              "tests/test_incremental.py::test_a_date_re_run_keeps_its_rows_that_a_later_date_reuses_and_replaces_the_"
              "rest")),
    Mutation("a-run-records-no-models-digest", "flows/pipeline.py",
             "        \"models_digest\": con.execute(\"select getvariable('models_digest')\").fetchone()[0],\n", "",
             ("tests/test_incremental.py::test_an_unchanged_re_run_reuses_every_source_and_model_and_equals_a_cold_run",
              *SLOW_TOO)),
    Mutation("changes-a-moved-reference-is-a-new-result", CHANGES,
             "pick_before.benchmark_label is distinct from picks.benchmark_label as pick_label_moved",
             "(pick_before.benchmark_label is distinct from picks.benchmark_label or pick_before.benchmark_ref is "
             "distinct from picks.benchmark_ref) as pick_label_moved", (LABEL_MOVED,)),
    Mutation("sentence-no-candidate-read-as-a-new-pick", SENTENCES,
             "{%- if c.offer_id is none -%}", "{%- if false -%}", (HAND_MADE_WHAT_CHANGED,)),
    Mutation("sentence-no-previous-candidate-read-as-a-move", SENTENCES,
             "{%- elif c.previous_offer_id is none -%}", "{%- elif false -%}", (HAND_MADE_WHAT_CHANGED,)),
    Mutation("sentence-runner-up-same-to-the-digit-given-as-a-gap", SENTENCES,
             '"the same to the last digit shown" if d.runner_up_outcome_value | usd == d.pick_outcome_value | usd else',
             '"the same to the last digit shown" if false else', (SAME_TO_THE_DIGIT,)),
    Mutation("sentence-runner-up-a-hair-dearer-said-zero-percent-more", SENTENCES,
             'else "less than 0.1% more" if d.runner_up_gap | percent == "0.0%" else', "else",
             ("tests/test_reports.py::test_a_runner_up_a_hair_dearer_is_said_to_be_less_than_a_tenth_of_a_percent_"
              "more",)),
    Mutation("sentence-stale-price-with-no-good-load-names-a-run", SENTENCES,
             "{% if d.pick_price_stale[1] %}from its last good load", "{% if true %}from its last good load",
             (SAME_TO_THE_DIGIT,)),
    Mutation("silent-run-automation-watches-another-projects-nightly", "flows/automations.yaml",
             "        - prefect.resource.role: tag\n          prefect.resource.id: prefect.tag.hweval\n", "",
             (AUTOMATION_TESTS,)),
    Mutation("silent-run-marked-failed-not-crashed", "flows/automations.yaml",
             "        state: CRASHED\n", "        state: FAILED\n", (SILENT_RUN, *SLOW_TOO)),
    Mutation("silent-run-taken-as-dead-before-a-heartbeat-is-due", "flows/automations.yaml",
             "      within: 120\n", "      within: 20\n", (AUTOMATION_TESTS,)),
    Mutation("completed-run-marked-crashed-after-its-silence", "flows/automations.yaml",
             "        - prefect.flow-run.Completed\n", "", (AUTOMATION_TESTS,)),
    Mutation("on-demand-runs-send-no-heartbeat", "prefect.yaml",
             '          PREFECT_FLOWS_HEARTBEAT_FREQUENCY: "30"\n    schedules: []\n', "    schedules: []\n",
             (AUTOMATION_TESTS, SILENT_RUN, *SLOW_TOO)),
    # ---------------------------------------------------------------- benchmark figures past their bounds or at odds
    # (each landed, then failed every build at an integer cast naming a SQL file, or was ranked as it was)
    Mutation("own-run-tokens-per-chip-unbounded", RUNS_SUITE,
             '"column": "tokens_per_s_per_chip",\n    "min_value": 0.001,\n    "max_value": 10000000',
             '"column": "tokens_per_s_per_chip",\n    "min_value": 0.001,\n    "max_value": 1e300', (RUN_BOUNDS,)),
    Mutation("own-run-tokens-per-chip-unbounded-below", RUNS_SUITE,
             '"column": "tokens_per_s_per_chip",\n    "min_value": 0.001,',
             '"column": "tokens_per_s_per_chip",\n    "min_value": 0,', (RUN_BOUNDS,)),
    Mutation("own-run-throughput-over-chips-unbounded", RUNS_SUITE,
             '"column": "check_output_tokens_per_s_per_chip",\n    "min_value": 0.001,\n    "max_value": 10000000',
             '"column": "check_output_tokens_per_s_per_chip",\n    "min_value": 0.001,\n    "max_value": 1e300',
             (RUN_BOUNDS,)),
    Mutation("own-run-total-throughput-unbounded-below", RUNS_SUITE,
             '"column": "check_output_tokens_per_s_per_chip",\n    "min_value": 0.001,',
             '"column": "check_output_tokens_per_s_per_chip",\n    "min_value": 0,', (RUN_BOUNDS,)),
    Mutation("stated-mfu-unbounded-below", RUNS_SUITE, '"column": "mfu",\n    "min_value": 0.001',
             '"column": "mfu",\n    "min_value": 0', (RUN_BOUNDS,)),
    Mutation("own-time-to-train-unbounded", RUNS_SUITE,
             '"column": "time_to_train_minutes",\n    "max_value": 10000000',
             '"column": "time_to_train_minutes",\n    "max_value": 1e300', (RUN_BOUNDS,)),
    Mutation("mlperf-time-to-train-unbounded", "catalogs/expectations/mlperf_training.json",
             '"column": "time_to_train_minutes",\n    "max_value": 10000000',
             '"column": "time_to_train_minutes",\n    "max_value": 1e300',
             ("tests/test_source_mlperf.py::test_a_time_to_train_past_its_bound_is_quarantined_not_failing_the_"
              "build",)),
    Mutation("implied-mfu-past-1-lands", RUNS_SUITE,
             '"column": "check_implied_mfu",\n    "min_value": 0.001,\n    "max_value": 1\n',
             '"column": "check_implied_mfu",\n    "min_value": 0.001,\n    "max_value": 100\n', (IMPLIED_MFU,)),
    Mutation("implied-mfu-by-2-n", "flows/checks.py", "    implied = 6 * pl.col(", "    implied = 2 * pl.col(",
             (IMPLIED_MFU,)),
    Mutation("implied-mfu-fp16-without-bf16-peak", "flows/catalog_models.py",
             '            listed["fp16"] = listed["bf16"]\n', "            pass\n",
             (IMPLIED_MFU, "tests/test_catalog.py::test_a_declared_fp16_stands_on_the_bf16_peak_as_the_models_take_it")),
    Mutation("serving-run-that-completed-nothing-lands", RUNS_SUITE, '"column": "completed",\n    "min_value": 1',
             '"column": "completed",\n    "min_value": 0', (SERVING_COUNTS,)),
    Mutation("negative-request-rate-lands", RUNS_SUITE, '"column": "request_rate",\n    "min_value": 0,',
             '"column": "request_rate",\n    "min_value": -1e300,', (SERVING_COUNTS,)),
    Mutation("disagreeing-throughputs-land", "flows/checks.py", "THROUGHPUT_TOLERANCE = 0.01",
             "THROUGHPUT_TOLERANCE = 10",
             ("tests/test_source_benchmark_runs.py::test_a_run_whose_two_throughputs_disagree_is_quarantined_with_"
              "both_worked_out",)),
    Mutation("infinite-cost-published", "sql/tests/assert_costs_positive.sql", " or not isfinite(outcome_value)", "",
             ("tests/test_marts.py::test_sql_invariant_refuses_a_cost_that_is_not_finite",)),
    Mutation("backtest-label-cast-to-an-integer", "sql/intermediate/int_training_backtest.sql",
             "format('{:,.0f}', round(runs.tokens_per_s_per_chip))",
             "format('{:,}', round(runs.tokens_per_s_per_chip)::bigint)", (LABELS_UNCAST,)),
    Mutation("estimate-label-cast-to-an-integer", TRAINING,
             "format('{:,.0f}', round(same_model_tokens_per_s_per_chip))",
             "format('{:,}', round(same_model_tokens_per_s_per_chip)::bigint)", (LABELS_UNCAST,)),
    Mutation("deadline-reason-hours-cast-to-an-integer", MACROS,
             "case when figures_size(x) >= 100 then format('{:,.0f}', x::double)",
             "case when figures_size(x) >= 100 then format('{:,}', cast(round(x) as bigint))",
             (LABELS_UNCAST,)),
    # ---------------------------------------------------------------- price-sheet amounts, terms and fields, spot
    # dates, YAML bytes: a review's hostile inputs (inf prices, a quote posing as on-demand, a spot point dated 2099)
    Mutation("price-sheet-capex-without-ceiling", PRICE_SHEET_SUITE, '"max_value": 350400000', '"max_value": 1e+308',
             (AMOUNT_CEILINGS,)),
    Mutation("price-sheet-opex-without-ceiling", PRICE_SHEET_SUITE, '"max_value": 1460000', '"max_value": 1e+308',
             (AMOUNT_CEILINGS,)),
    Mutation("price-sheet-upfront-without-ceiling", PRICE_SHEET_SUITE, '"max_value": 175200000', '"max_value": 1e+308',
             (AMOUNT_CEILINGS,)),
    Mutation("upfront-without-term-left-out", PRICE_SHEET_SUITE, '"row_condition": "term_months.isnull()"',
             '"row_condition": "term_months < 0"',
             ("tests/test_price_sheet.py::test_an_upfront_fee_without_its_term_is_quarantined_not_left_out",)),
    Mutation("quote-on-a-public-term-ranked", PRICE_SHEET_SUITE,
             '"private"\n    ],\n    "row_condition": "entry_kind==\\"quote\\""',
             '"private"\n    ],\n    "row_condition": "entry_kind==\\"discount\\""',
             ("tests/test_price_sheet.py::test_a_quote_on_a_public_term_is_quarantined_not_ranked_as_that_term",)),
    Mutation("on-prem-without-pue-landed", PRICE_SHEET_SUITE, '"column": "pue",\n    "row_condition"',
             '"column": "power_kw",\n    "row_condition"',
             ("tests/test_price_sheet.py::test_an_on_prem_system_without_its_pue_is_quarantined_not_taken_at_1",)),
    Mutation("on-prem-pue-defaults-to-1", MACROS, "power_kw::double * pue::double * usd_per_kwh::double",
             "power_kw::double * coalesce(pue::double, 1.0) * usd_per_kwh::double",
             ("tests/test_macros.py::test_on_prem_usd_per_hour_capex_power_and_opex",)),
    Mutation("price-sheet-cloud-of-any-length", PRICE_SHEET_SUITE, '"column": "cloud",\n    "max_value": 100',
             '"column": "cloud",\n    "max_value": 1000000',
             ("tests/test_price_sheet.py::test_a_provider_name_past_100_characters_is_quarantined_not_printed",)),
    Mutation("price-sheet-field-of-another-kind-taken", "flows/sources/price_sheet.py",
             'misplaced = [key for key in entry if key not in takes and entry[key] not in (None, "")\n',
             "misplaced = [key for key in () \n",
             ("tests/test_price_sheet.py::test_a_field_of_another_kind_of_entry_is_refused_naming_file_entry_and_field",
              "tests/test_price_sheet.py::test_a_csv_entry_may_leave_other_kinds_columns_empty_but_not_fill_them")),
    # `usd_per_hour: "19.92"` landed as 19.92, `1e3` (text to YAML) as 1,000: a value is never converted
    Mutation("price-sheet-yaml-number-as-text-converted", "flows/sources/price_sheet.py",
             "if isinstance(value, str) and not numbers_as_text:", "if False:",
             ("tests/test_price_sheet.py::test_a_yaml_number_written_as_text_is_quarantined_with_its_field_not_"
              "converted",)),
    Mutation("price-sheet-csv-numbers-quarantined-as-text", "flows/sources/price_sheet.py",
             'f"{label}: line {n}", numbers_as_text=True)', 'f"{label}: line {n}")',
             ("tests/test_price_sheet.py::test_a_yaml_number_written_as_text_is_quarantined_with_its_field_not_"
              "converted",)),
    Mutation("price-sheet-second-list-ignored", "flows/sources/price_sheet.py",
             "unknown = [key for key in data if key not in TOP_LEVEL_KEYS]", "unknown = []",
             ("tests/test_price_sheet.py::test_a_second_list_of_entries_is_refused_not_ignored",)),
    Mutation("aws-lease-of-0-years-priced", "catalogs/expectations/aws_pricing.json", '"regex": "^[1-5] ?yr$"',
             '"regex": "^[0-9]+ ?yr$"', (LEASE_TRAP,)),
    Mutation("aws-lease-missing-landed", "catalogs/expectations/aws_pricing.json",
             '"type": "expect_column_values_to_not_be_null",\n   "kwargs": {\n    "column": "lease_contract_length"',
             '"type": "expect_column_values_to_not_be_null",\n   "kwargs": {\n    "column": "term_type"',
             (LEASE_TRAP,)),
    Mutation("offer-term-of-0-months-built", "sql/tests/assert_offer_terms_at_least_a_month.sql",
             "where term_months < 1", "where term_months < 0",
             ("tests/test_marts.py::test_sql_invariant_reports_a_term_shorter_than_a_month",)),
    Mutation("future-spot-point-not-checked", "flows/checks.py", ".join(spot_timestamps(frame), on=",
             ".join(spot_timestamps(frame.clear()), on=", (SPOT_FUTURE_TRAP,)),
    Mutation("spot-point-of-the-day-after-as-of-quarantined", "flows/checks.py",
             'offset_by(f"{1 + SPOT_TIMESTAMP_DAYS_AHEAD}d")', 'offset_by(f"{SPOT_TIMESTAMP_DAYS_AHEAD}d")',
             (SPOT_FUTURE_TRAP,)),
    Mutation("catalog-yaml-read-whole", "flows/catalog.py", 'safe_yaml.read_yaml_bytes(path).decode("utf-8")',
             'path.read_text(encoding="utf-8")',
             ("tests/test_catalog_hostile.py::test_a_catalog_file_past_max_yaml_file_bytes_is_refused_before_"
              "parsing_naming_it",)),
    Mutation("price-sheet-yaml-read-whole", "flows/sources/price_sheet.py",
             "raw = safe_yaml.read_yaml_bytes(path, hint=",
             "raw = path.read_bytes() or safe_yaml.read_yaml_bytes(path, hint=",
             ("tests/test_catalog_hostile.py::test_a_price_sheet_past_max_yaml_file_bytes_is_refused_before_parsing_"
              "and_one_at_it_is_read",)),
    Mutation("yaml-one-byte-past-the-limit-read", "flows/safe_yaml.py", "if size > limit or len(data) > limit:",
             "if size > limit + 1 or len(data) > limit + 1:",
             ("tests/test_catalog_hostile.py::test_a_price_sheet_past_max_yaml_file_bytes_is_refused_before_parsing_"
              "and_one_at_it_is_read",)),
    Mutation("price-sheet-source-without-bound", PRICE_SHEET_SUITE, '"max_value": 200\n', '"max_value": 1000000\n',
             ("tests/test_price_sheet.py::test_a_source_or_note_past_its_bound_is_quarantined_not_printed",)),
    Mutation("price-sheet-note-without-bound", PRICE_SHEET_SUITE, '"max_value": 1000\n', '"max_value": 1000000\n',
             ("tests/test_price_sheet.py::test_a_source_or_note_past_its_bound_is_quarantined_not_printed",)),
    # ---------------------------------------------------------------- real data the new rules refused (final review)
    Mutation("moe-implied-mfu-by-all-parameters", "flows/checks.py", "float(model.active_params or model.params)",
             "float(model.params)",
             ("tests/test_source_benchmark_runs.py::test_a_mixture_of_experts_run_implies_its_mfu_by_its_active_"
              "parameters",)),
    Mutation("whole-number-per-chip-throughput-refused", "flows/checks.py",
             "> THROUGHPUT_TOLERANCE * total + PER_CHIP_ROUNDING * chips)", "> THROUGHPUT_TOLERANCE * total)",
             ("tests/test_source_benchmark_runs.py::test_a_per_chip_throughput_written_as_a_whole_number_agrees_"
              "within_its_rounding",)),
    Mutation("no-upfront-rate-needs-a-term", PRICE_SHEET_SUITE, '"max_value": 0,', '"max_value": -1,',
             (NO_UPFRONT_OWN_CLOUD,)),
    Mutation("on-prem-entry-refused-for-its-own-cloud", "flows/sources/price_sheet.py",
             "\n                 and entry[key] != SET_BY_KIND.get(kind, {}).get(key)]", "]", (NO_UPFRONT_OWN_CLOUD,)),
    Mutation("runner-up-unverified-price-unsaid", "flows/templates/_sentences.j2",
             "{%- if d.runner_up_price_unverified is defined and d.runner_up_price_unverified %}", "{%- if false %}",
             ("tests/test_reports.py::test_the_index_opens_with_a_decision_per_workload_and_the_money_of_the_hourly_"
              "ranking",)),
    Mutation("a-tiny-reclaim-count-shown-as-zero", "flows/templates/_sentences.j2",
             '"fewer than 0.0001" if d.pick_expected_interruptions < 0.00005 else ', "",
             ("tests/test_reports.py::test_a_service_on_spot_says_it_pays_for_a_spare_unit_and_a_flat_rework_says_it_"
              "is_the_fallback",)),
    Mutation("mlperf-training-precision-shown-as-declared", "flows/estimates_page.py",
             '    if comparison["measurement_basis"] != "MLPerf Training":', "    if True:",
             ("tests/test_flow.py::test_golden_report",)),
    Mutation("reversal-chip-hours-without-the-rework", "flows/reports.py",
             '    return r["chips"] * r["time_to_train_with_rework_minutes"] / 60',
             '    return r["chips"] * r["time_to_train_minutes"] / 60', ("tests/test_flow.py::test_golden_report",)),
    # hweval run cancelled from Prefect (flows/cancellation.py)
    Mutation("cancel-asked-but-not-seen", "flows/cancellation.py",
             "(state.is_cancelling() or state.is_cancelled())", "state.is_cancelled()", (CANCELLED_BEFORE_PUBLISH,)),
    Mutation("cancel-not-checked-before-the-publish", "flows/nightly.py",
             '                    cancellation.check("the publish", last=True)', "                    pass",
             (CANCELLED_BEFORE_PUBLISH,)),
    Mutation("cancelled-run-ends-failed", "flows/nightly.py",
             "            return Cancelled(message=str(exc))", "            raise", (CANCELLED_BEFORE_PUBLISH,)),
    Mutation("cancel-not-checked-while-waiting-for-the-lock", "flows/runlock.py", "            waiting()\n", "",
             ("tests/test_cancellation.py::test_a_run_cancelled_while_it_waits_for_another_runs_lock_stops_waiting",
              *SLOW_TOO)),
    Mutation("cancel-after-the-publish-left-cancelling", "flows/run_command.py",
             "settled = None if cancelled else cancellation.settle(", "settled = None and cancellation.settle(",
             ("tests/test_cancellation.py::test_a_cancel_after_the_publish_began_lets_the_run_finish_and_marks_it_"
              "completed_not_cancelling", *SLOW_TOO)),
    Mutation("cancel-then-failure-before-the-publish-said-after-it", "flows/cancellation.py",
             "        if not watch.publishing:", "        if False:",
             ("tests/test_cancellation.py::test_a_cancelled_run_that_fails_before_its_publish_is_marked_failed_with_"
              "the_error_not_left_cancelling",)),
    Mutation("cancel-then-failure-after-the-publish-marked-completed", "flows/cancellation.py",
             "        elif error is not None:", "        elif False:",
             ("tests/test_cancellation.py::test_a_cancel_after_the_publish_then_a_failure_after_it_is_marked_failed_"
              "saying_so", *SLOW_TOO)),
    Mutation("every-flow-run-watched-for-a-cancel", "flows/cancellation.py",
             "    watch = _watch\n    if watch is None:\n        return None\n",
             "    watch = _watch or Watch()\n",
             ("tests/test_cancellation.py::test_only_a_watched_flow_run_stops_when_cancelled",)),
    Mutation("prefect-api-that-does-not-answer-asked-again", "flows/cancellation.py",
             "    if watch.unanswered:\n        return None\n    try:", "    try:",
             ("tests/test_cancellation.py::test_a_prefect_api_that_does_not_answer_the_question_lets_the_run_go_on_"
              "said_once", *SLOW_TOO)),
    # review of the published decisions: each claim of a page true of what it names
    Mutation("estimated-picks-quoted-the-calibrated-error", "flows/estimates_page.py",
             "case when decisions.pick_basis = 'estimated' then 'uncalibrated' else 'calibrated' end as band_kind",
             "'calibrated' as band_kind",
             ("tests/test_reports.py::test_the_index_quotes_for_its_estimated_picks_the_error_of_their_own_kind_of_"
              "estimate",)),
    Mutation("cheaper-excluded-chip-hours-not-counted", "sql/marts/decisions.sql",
             "        and offers.usd_per_chip_hour < chip_hour_picks.usd_per_chip_hour\n",
             "        and offers.usd_per_chip_hour < 0\n", (CHEAPER_EXCLUDED,)),
    Mutation("cheaper-chip-hours-on-terms-not-bought-counted", "sql/marts/decisions.sql",
             "        and offer_term_accepted(workloads.pricing_terms, offers.pricing_term, offers.term_months, "
             "workloads.months)\n", "", (CHEAPER_EXCLUDED,)),
    Mutation("undeclared-measured-precision-unsaid", SENTENCES,
             "{%- set asked = d.asked_precision if d.asked_precision is defined else none -%}",
             "{%- set asked = none -%}", (UNDECLARED_PRECISION_PAGE, UNDECLARED_PRECISION_SENTENCE)),
    Mutation("undeclared-precision-cell-a-bare-dash", "flows/reports.py",
             'r["precision"] or "not declared"', 'r["precision"] or "—"', (UNDECLARED_PRECISION_PAGE,)),
    Mutation("chart-cheapest-chip-hour-not-of-those-ranked", "flows/charts.py",
             'among = " among the ranked candidates" if cheaper_excluded else ""', 'among = ""',
             (CHART_CHEAPER_EXCLUDED,)),
    Mutation("chart-cheaper-excluded-offers-not-read", "flows/charts.py",
             "relations.fetch_frame(con, CHEAPER_EXCLUDED_SQL, params)",
             "relations.fetch_frame(con, CHEAPER_EXCLUDED_SQL, params).clear()",
             (CHART_CHEAPER_EXCLUDED,)),
    Mutation("caption-offer-without-its-region", "flows/charts.py",
             "the pick, {regional_offer_label(first)}, costs", "the pick, {offer_label(first)}, costs",
             (CAPTION_REGION,)),
    Mutation("top-bars-offer-regions-not-counted", "flows/charts.py",
             "       outcome_metric, outcome_value, outcome_rank,\n"
             "       count(distinct region) over (partition by cloud, instance_type, pricing_term) as offer_regions\n",
             "       outcome_metric, outcome_value, outcome_rank, 1 as offer_regions\n",
             (CAPTION_REGION,)),
    Mutation("unranked-measurement-not-named", "sql/marts/decisions.sql",
             "    left join unranked on unranked.workload_id = decided.workload_id\n",
             "    left join unranked on false\n", (UNRANKED_MEASUREMENT,)),
    Mutation("unranked-measurement-not-of-the-settling-precision-first", "sql/marts/decisions.sql",
             ("        order by precision_class(results.precision) = precision_class(settling.settle_precision) desc "
              "nulls last,\n"),
             "        order by\n", (UNRANKED_PRECISION_FIRST,)),
    Mutation("unranked-measurement-blamed-on-accuracy", "sql/intermediate/int_serving_results_unranked.sql",
             "results.precision || ' is not among the precisions the workload lists ('",
             "results.precision || ' is below the workload''s accuracy floor ('", (UNRANKED_MEASUREMENT,)),
    Mutation("backtest-panel-named-by-its-first-unit", "flows/backtest_chart.py",
             'ax.set_title(f"{phase}: {panel_units(rows)}"', 'ax.set_title(f"{phase}: {rows[\'unit\'][0]}"',
             ("tests/test_charts.py::test_a_backtest_panel_names_every_unit_its_points_are_counted_in",)),
    Mutation("estimates-page-units-fixed", "flows/estimates_page.py",
             'units=list(dict.fromkeys(c["unit"] for c in comparisons if c["unit"]))',
             'units=["output tokens/s per chip", "minutes to train"]',
             ("tests/test_estimates_page.py::test_the_page_names_the_units_its_comparisons_are_made_in_and_which_"
              "uncalibrated_figure_is_which",)),
    Mutation("ranking-csv-without-the-page-cost-columns", "flows/reports.py",
             '    "inference": ("inference_costs", ["monthly_usd", ', '    "inference": ("inference_costs", [',
             ("tests/test_reports.py::test_the_csv_beside_a_page_has_the_rows_of_the_warehouse_ranking",)),
    Mutation("spot-pick-at-dearest-zone-not-repriced", "sql/marts/rankings.sql",
             "             then ranked.outcome_value * offers.highest_zone_usd_per_hour / ranked.usd_per_hour\n",
             "             then ranked.outcome_value\n",
             ("tests/test_marts.py::test_a_decision_on_a_spot_price_gives_the_outcome_at_the_dearest_zone",)),
    # the Decision's as-of dates, its uncharged splits, and hours of training to three significant figures
    Mutation("decision-price-source-and-date-unsaid", SENTENCES,
             '"price from " ~ source | md ~ " as of " ~ d[side ~ "_price_as_of"]]', '""]',
             (SPLIT_UNCHARGED_SENTENCE, DECISION_AS_OF)),
    Mutation("decision-runner-up-priced-as-of-the-picks-date", "sql/marts/decisions.sql",
             "runners_up.price_as_of as runner_up_price_as_of", "picks.price_as_of as runner_up_price_as_of",
             (DECISION_AS_OF,)),
    Mutation("decision-uncharged-split-unsaid", SENTENCES,
             '{%- if d[side ~ "_split_uncharged"] is defined and d[side ~ "_split_uncharged"] %}', "{%- if false %}",
             (SPLIT_UNCHARGED_SENTENCE,)),
    Mutation("ranking-uncharged-split-not-carried", "sql/marts/rankings.sql",
             "coalesce(split_uncharged, false) as split_uncharged", "false as split_uncharged",
             ("tests/test_communication.py::test_a_chip_without_a_link_figure_is_split_for_free_and_says_so",)),
    Mutation("split-across-instances-flagged-uncharged", INFERENCE,
             "replica_chips > 1 and not comm_modelled and instances_per_replica = 1 as split_uncharged",
             "replica_chips > 1 and not comm_modelled as split_uncharged",
             ("tests/test_communication.py::test_a_split_across_instances_without_figures_pays_the_flat_loss_and_is_"
              "not_flagged_uncharged",)),
    Mutation("time-to-train-in-whole-hours", "flows/formatting.py",
             'f"{hours(minutes / 60)} h"', 'f"{num(minutes / 60, 0)} h"',
             ("tests/test_reports.py::test_the_time_to_train_keeps_three_significant_figures_from_ten_hours",
              "tests/test_reports.py::test_a_run_of_tens_of_hours_shows_its_time_to_train_to_three_figures")),
    Mutation("deadline-reason-in-whole-hours", TRAINING,
             "'needs ' || hours_needed_text(training_hours(params, tokens, chips, peak_tflops, mfu, scaling),\n"
             "                                              deadline_hours)",
             "'needs ' || format('{:,.0f}', training_hours(params, tokens, chips, peak_tflops, mfu, scaling))",
             ("tests/test_communication.py::test_an_estimate_past_its_deadline_says_the_hours_it_needs_to_three_"
              "figures",)),
    Mutation("time-to-train-without-the-rework-of-reclaims", "sql/marts/rankings.sql",
             "ranked.time_to_train_minutes * (1 + ranked.interruption_overhead) as time_to_train_with_rework_minutes",
             "ranked.time_to_train_minutes as time_to_train_with_rework_minutes",
             ("tests/test_marts.py::test_a_spot_training_pick_carries_its_reclaims_its_rework_and_the_rate_they_rest_"
              "on",)),
    Mutation("gx-regex-group-warning-shown", "flows/validate.py", 'warnings.filterwarnings("ignore", message=',
             'warnings.filterwarnings("default", message=', (REGEX_GROUP_TEST,)),
    Mutation("shipped-suite-regex-with-a-group", "catalogs/expectations/benchmark_runs.json",
             '"regex": "^-?[0-9]+(?:\\\\.0+)?$"', '"regex": "^-?[0-9]+(\\\\.0+)?$"', (REGEX_GROUP_TEST,)),
    Mutation("runner-up-price-source-repeated", "flows/templates/_sentences.j2",
             '{%- set same = side == "runner_up" and', '{%- set same = false and',
             ("tests/test_reports.py::test_a_measured_result_of_no_declared_precision_is_said_so_not_given_one",)),
    Mutation("unranked-measurement-read-as-the-asked-precision", "flows/templates/_sentences.j2",
             'the warehouse holds a measured result of {{ d[side ~ "_accelerator_id"] | md }} on this task,',
             "the warehouse holds a measured one,",
             ("tests/test_reports.py::test_a_measured_result_the_workload_keeps_out_is_named_with_what_excludes_it",)),
    Mutation("new-workload-names-a-change-for-its-page-to-leave-out", "sql/marts/changes.sql",
             "            when previous_offer_id is null then null\n", "",
             ("tests/test_changes.py::test_a_workload_new_to_the_run_leaves_no_change_out_of_its_pages_count",)),
    Mutation("hours-needed-compared-as-duckdb-rounds", "sql/macros.sql",
             "    case when replace(hours_text(h), ',', '')::double > deadline then hours_text(h)",
             "    case when round(h::double, case when abs(h) >= 100 then 0 when abs(h) >= 10 then 1 else 2 end) > "
             "deadline then hours_text(h)",
             ("tests/test_macros.py::test_the_hours_needed_are_compared_as_written_not_as_rounded_by_duckdb",)),
    Mutation("cpu-baseline-deadline-in-whole-hours", "flows/templates/_cpu_baseline.md.j2",
             "makes the {{ b.deadline_text }} h deadline", "makes the {{ b.deadline_hours | num(0) }} h deadline",
             ("tests/test_cpu_baseline.py::test_a_cpu_past_a_deadline_of_a_fraction_of_an_hour_is_written_as_the_"
              "deadline_reasons_write_it",)),
    Mutation("hosted-api-stale-price-unsaid", "flows/reports.py",
             '        a["self_hosted_price_stale"] = picks.get(',
             '        a["self_hosted_price_stale"] = None and picks.get(',
             ("tests/test_reports.py::test_the_hosted_api_section_says_the_compared_offers_price_is_not_fresh_as_the_"
              "decision_does",)),
    Mutation("killed-run-not-reckoned", "flows/nightly.py",
             "                           reports_root=reports_root, catalog=catalog, found_by=run_id)\n\n"
             "    reckon_killed_runs()\n",
             "                           reports_root=reports_root, catalog=catalog, found_by=run_id)\n\n",
             (f"{KILLED}hweval_run_killed_as_it_waits_for_the_lock_is_marked_crashed_and_told_of_by_the_next_run",
              *SLOW_TOO)),
    Mutation("killed-lock-holder-not-reckoned-by-the-run-that-waited", "flows/nightly.py",
             "the lock\n        reckon_killed_runs()\n", "the lock\n",
             ("tests/test_overlapping_runs.py::test_a_run_killed_while_another_waits_loses_nothing_committed",
              *SLOW_TOO)),
    Mutation("killed-run-step-lock-wait-not-written", "flows/nightly.py",
             "    run_files.at(killed_runs.LOCK_WAIT)\n", "",
             (f"{KILLED}hweval_run_killed_as_it_waits_for_the_lock_is_marked_crashed_and_told_of_by_the_next_run",
              *SLOW_TOO)),
    Mutation("run-file-step-not-written", "flows/run_files.py", '        mine.holder["step"] = step\n', "",
             (f"{KILLED}a_run_killed_outright_is_found_once_with_its_step_and_a_run_that_ended_leaves_nothing",)),
    Mutation("run-file-found-twice", "flows/run_files.py",
             "        path.unlink(missing_ok=True)\n        return info\n", "        return info\n",
             (f"{KILLED}a_run_killed_outright_is_found_once_with_its_step_and_a_run_that_ended_leaves_nothing",)),
    Mutation("run-file-folder-left", "flows/run_files.py", "            runs.rmdir()", "            pass",
             (f"{KILLED}a_run_killed_outright_is_found_once_with_its_step_and_a_run_that_ended_leaves_nothing",)),
    Mutation("run-file-of-a-run-under-way-taken", "flows/run_files.py",
             "        except BlockingIOError:  # a run under way holds it\n            return None\n",
             "        except BlockingIOError:  # a run under way holds it\n            pass\n",
             (f"{KILLED}a_run_under_way_and_another_machines_run_are_not_found_and_a_cut_short_file_is_removed",)),
    Mutation("run-file-of-another-machine-taken", "flows/run_files.py",
             'elif info["host"] != socket.gethostname():', "elif False:",
             (f"{KILLED}a_run_under_way_and_another_machines_run_are_not_found_and_a_cut_short_file_is_removed",)),
    Mutation("run-file-tail-not-read", "flows/run_files.py",
             "info, _ = json.JSONDecoder().raw_decode(os.pread(fd, MAX_HOLDER_BYTES, 0).decode())",
             "info = json.loads(os.pread(fd, MAX_HOLDER_BYTES, 0))",
             (f"{KILLED}a_run_under_way_and_another_machines_run_are_not_found_and_a_cut_short_file_is_removed",)),
    Mutation("run-file-named-before-it-is-whole", "flows/run_files.py",
             "        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file under a new name: no other process has it "
             "open\n        _write(fd, holder)\n        os.chmod(making, 0o644)\n        os.rename(making, runs / name)\n",
             "        os.chmod(making, 0o644)\n        os.rename(making, runs / name)\n        making = runs / name\n"
             "        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n        _write(fd, holder)\n",
             (f"{KILLED}a_run_file_is_named_only_once_whole_and_locked_and_one_killed_as_it_was_made_is_removed",)),
    Mutation("run-file-being-made-removed", "flows/run_files.py", "< MAKING_S:", "< 0:",
             (f"{KILLED}a_run_file_is_named_only_once_whole_and_locked_and_one_killed_as_it_was_made_is_removed",)),
    Mutation("run-file-not-made-fails-the-run", "flows/run_files.py",
             "    except OSError as exc:\n        logger.warning(\"this run's run file",
             "    except ZeroDivisionError as exc:\n        logger.warning(\"this run's run file",
             (f"{KILLED}a_run_whose_file_cannot_be_made_goes_on_without_one_and_a_killed_runs_file_is_never_written_"
              "over",)),
    Mutation("run-file-named-by-run-id-and-pid-only", "flows/run_files.py", "-{secrets.token_hex(4)}{SUFFIX}",
             "{SUFFIX}", (f"{KILLED}a_run_whose_file_cannot_be_made_goes_on_without_one_and_a_killed_runs_file_is_"
                          "never_written_over",)),
    Mutation("other-machines-run-files-counted", "flows/run_files.py",
             "if n.startswith(mine) and n.endswith(SUFFIX)", "if n.endswith(SUFFIX)",
             (f"{KILLED}the_run_files_looked_at_are_bounded_oldest_first",)),
    Mutation("hweval-help-needs-docstrings", "flows/cli.py", '(__doc__ or "").replace(', "__doc__.replace(",
             ("tests/test_cli.py::test_the_help_is_given_under_python_oo_without_docstrings",)),
    Mutation("run-files-unbounded", "flows/run_files.py", "for path in paths[:MAX_LOOKED_AT]:", "for path in paths:",
             (f"{KILLED}the_run_files_looked_at_are_bounded_oldest_first",)),
    Mutation("run-files-by-name", "flows/run_files.py", "key=_age)", "key=lambda p: p.name)",
             (f"{KILLED}the_run_files_looked_at_are_bounded_oldest_first",)),
    Mutation("killed-run-wrote-no-flow-run", "flows/killed_runs.py",
             '"flow_run_id": str(context.flow_run.id) if running else None,', '"flow_run_id": None,',
             (f"{KILLED}hweval_run_killed_as_it_waits_for_the_lock_is_marked_crashed_and_told_of_by_the_next_run",
              *SLOW_TOO)),
    Mutation("killed-deployment-run-told-twice", "flows/killed_runs.py", "if ended or run.deployment_id is not None:",
             "if ended:", (f"{KILLED}a_killed_deployment_run_is_marked_and_left_to_crash_notice_and_a_finished_one_"
                           "is_left_alone",)),
    Mutation("killed-finished-run-marked", "flows/killed_runs.py",
             "if run.state is None or run.state.is_final():", "if run.state is None:",
             (f"{KILLED}a_killed_deployment_run_is_marked_and_left_to_crash_notice_and_a_finished_one_is_left_"
              "alone",)),
    Mutation("killed-retried-run-marked", "flows/killed_runs.py", "if now != attempt:", "if False:",
             (f"{KILLED}a_run_retried_since_or_on_another_machine_is_not_marked",)),
    Mutation("killed-other-host-marked", "flows/killed_runs.py",
             'if info.get("host") != socket.gethostname():', "if False:",
             (f"{KILLED}a_run_retried_since_or_on_another_machine_is_not_marked",)),
    Mutation("killed-run-api-asked-after-it-failed", "flows/killed_runs.py",
             "            answered = False  #", "            answered = True  #",
             (f"{KILLED}a_flow_run_unknown_to_this_server_or_a_server_that_does_not_answer_is_logged_and_the_run_"
              "goes_on",)),
    Mutation("cancel-check-error-not-redacted", "flows/cancellation.py",
             'watch.flow_run_id, redact_text(f"{type(exc).__name__}: {exc}"))',
             'watch.flow_run_id, f"{type(exc).__name__}: {exc}")',
             ("tests/test_cancellation.py::test_an_api_that_refuses_the_question_is_logged_without_the_password_in_"
              "its_url",)),
    Mutation("killed-run-told-as-of-today", "flows/killed_runs.py",
             "as_of = _as_of(info) or dt.datetime.now(dt.UTC).date()", "as_of = dt.datetime.now(dt.UTC).date()",
             (f"{KILLED}a_killed_runs_flow_run_left_running_is_marked_crashed_and_its_channels_told",)),
    Mutation("killed-run-api-error-not-redacted", "flows/killed_runs.py",
             'redact_text(f"{type(exc).__name__}: {exc}"))\n            answered',
             'f"{type(exc).__name__}: {exc}")\n            answered',
             (f"{KILLED}a_flow_run_unknown_to_this_server_or_a_server_that_does_not_answer_is_logged_and_the_run_"
              "goes_on",)),
    # a re-run of the date a stale run held back is compared with the same last good load, through the stale line
    Mutation("table-checks-compare-with-landed-lines-only", "flows/land.py",
             '"from ops.source_loads l where l.source_id = ? and l.used_run_id is not null and l.as_of <= ? "',
             '"from ops.source_loads l where l.source_id = ? and l.status = \'landed\' and l.as_of <= ? "',
             ("tests/test_price_jump.py::test_a_re_run_of_the_date_a_stale_run_held_back_is_compared_with_the_same_"
              "last_good_load",)),
    Mutation("stale-line-without-its-last-good-rows-in", "flows/land.py",
             '"stale_since": stale_since, "used_rows_in": used_rows_in,', '"stale_since": stale_since,',
             ("tests/test_price_jump.py::test_a_re_run_of_the_date_a_stale_run_held_back_is_compared_with_the_same_"
              "last_good_load",)),
    Mutation("old-stale-line-not-compared", "flows/land.py",
             '"  (select max(g.rows_in) from ops.source_loads g where g.source_id = l.source_id"\n'
             '        "   and g.used_run_id = l.used_run_id and g.status = \'landed\')) "',
             '"  null) "',
             ("tests/test_price_jump.py::test_a_stale_line_from_before_used_rows_in_is_compared_with_its_landed_loads_"
              "rows",)),
    Mutation("run-summary-without-its-stale-sources", "flows/run_command.py", "                    if stale else \"\"))",
             "                    if False else \"\"))",
             ("tests/test_cli.py::test_the_run_summary_names_the_stale_sources_in_its_last_line",)),
    # a service's energy per successful request is the work at full load; its provisioned month is every instance
    Mutation("a-services-energy-column-without-its-basis", "flows/report_templates.py",
             'SERVING_WORK_BASIS = " at full load, idle not counted"', 'SERVING_WORK_BASIS = ""',
             (f"{REPORTS_TESTS}::test_a_services_energy_column_says_it_counts_the_work_at_full_load_not_idle",)),
    Mutation("a-service-without-its-provisioned-energy", INFERENCE_COSTS,
             "case when not is_offline then instances * instance_power_kw * energy_pue * 730 end",
             "cast(null as double)", (PROVISIONED_ENERGY_TEST,)),
    Mutation("provisioned-energy-at-tdp-where-power-is-measured", INFERENCE_COSTS,
             "                power.joules_per_token * costed.deployment_tokens_per_s / costed.instances_per_replica"
             " / 1000\n",
             "                costed.accelerator_count * accelerators.tdp_w * defaults.serving_load_factor / 1000\n",
             (PROVISIONED_ENERGY_TEST,)),
    Mutation("offline-work-with-a-provisioned-month", INFERENCE_COSTS,
             "case when not is_offline then instances * instance_power_kw",
             "case when true then coalesce(instances, 1) * instance_power_kw", (PROVISIONED_ENERGY_TEST,)),
    Mutation("the-full-ranking-shows-the-works-energy-as-the-provisioned-month", "flows/reports.py",
             '_energy(c.get("provisioned_kwh_per_month"))]', '_energy(c.get(energy_column))]',
             (PROVISIONED_ENERGY_TEST,)),
    # a workload page counts among the market changes it leaves to the index none its best-offer line names
    Mutation("a-workload-page-counts-again-the-change-its-best-offer-line-names", "flows/reports.py",
             'page["other_changes"] = [c for c in common["other_changes"] if c["subject"] not in named]',
             'page["other_changes"] = common["other_changes"]',
             ("tests/test_changes.py::test_a_workload_page_whose_only_market_change_its_best_offer_line_names_says_"
              "nothing_more", *SLOW_TOO)),
    # a deadline's reasons write the deadline as the pages write numbers, and the hours needed always past it
    Mutation("a-runs-deadline-written-without-thousands-separators", "sql/intermediate/int_training_costs_computed.sql",
             "|| deadline_text(deadline_hours) || ' h'", "|| printf('%g', deadline_hours) || ' h'",
             (DEADLINE_REASONS,)),
    Mutation("hours-needed-written-as-the-deadlines-figure", MACROS,
             "case when replace(hours_text(h), ',', '')::double > deadline", "case when true", (DEADLINE_REASONS,
                                "tests/test_macros.py::test_a_deadline_is_written_as_declared_and_the_hours_past_it_"
                                "always_more")),
    # a review of the published pages: the cheapest chip-hour's extra cost said as settled though its range reaches the
    # pick's; fp16 picks not explained against the precisions a workload lists; a calibrated band never tested
    Mutation("cheapest-chip-hour-overlapping-the-pick-not-found", "sql/marts/decisions.sql",
             "            and bands_overlap(picks.outcome_value, picks.outcome_high,\n"
             "                              chip_hour_picks.outcome_value, chip_hour_picks.outcome_low)\n",
             "            and false\n",
             (CHIP_HOUR_MAY_BE_CHEAPER, "tests/test_charts.py::test_captions_say_what_to_read")),
    Mutation("cheapest-chip-hour-said-settled-in-the-decision", SENTENCES,
             "{%- if d.chip_hour_pick_may_cost_less is defined and d.chip_hour_pick_may_cost_less %}",
             "{%- if false %}", (CHIP_HOUR_SENTENCE,)),
    Mutation("cheapest-chip-hour-without-a-band-said-settled", SENTENCES,
             "{%- elif d.chip_hour_pick_may_cost_less is defined and d.chip_hour_pick_may_cost_less %}",
             "{%- elif false %}", (CHIP_HOUR_SENTENCE,)),
    Mutation("a-reversal-too-close-to-call-said-settled", "flows/reports.py",
             '    if better["too_close_to_worse"]:  #', '    if False:  #',
             ("tests/test_reports.py::test_where_the_hourly_price_disagrees_a_pair_too_close_to_call_says_so_as_the_"
              "decision_does",)),
    Mutation("figures-sized-before-rounding", "flows/formatting.py",
             '    size = abs(float(f"{value:.{decimals}f}") if decimals > 0 else round(value, decimals))\n',
             "    size = abs(value)\n", ("tests/test_macros.py::test_figures_text_writes_a_measure_as_the_pages_do",)),
    Mutation("figures-text-sized-before-rounding", "sql/macros.sql",
             "         else abs(cast(format('{:.{}f}', x::double, 2 - cast(floor(log10(abs(x::double))) as integer)) as "
             "double))",
             "         else abs(x::double)",
             ("tests/test_macros.py::test_figures_text_writes_a_measure_as_the_pages_do",)),
    Mutation("fp16-counted-as-bf16-unsaid-on-the-index", "flows/reports.py",
             '"precisions": precision_aliases.get(w["workload_id"])} for w in workloads],',
             '"precisions": None} for w in workloads],',
             ("tests/test_reports.py::test_the_index_says_fp16_counts_as_bf16_beside_the_decisions_that_pick_it",)),
    Mutation("fp16-counted-as-bf16-unsaid-on-the-page", "flows/reports.py",
             '"precisions": precision_aliases.get(workload_id),', '"precisions": None,', (FP16_AS_BF16,)),
    Mutation("fitted-factor-precision-without-its-results-precision", ESTIMATES_PAGE,
             'f["accelerator_id"], _factor_precision(f),', 'f["accelerator_id"], f["precision_class"],',
             (FP16_AS_BF16,)),
    Mutation("calibrated-band-from-one-setup-claimed-tested", "sql/marts/rankings.sql",
             "coalesce(bands.low_ratio is not null and calibration.loo_comparisons = 0, false) as band_untested",
             "false as band_untested", (UNTESTED_BAND_MART, UNTESTED_BAND_PAGE)),
    # an energy figure keeps three significant figures, as hours do (whole kWh wrote 3.15 and 2.77 kWh both "3")
    Mutation("energy-written-in-whole-kwh", "flows/reports.py",
             'return "no published power" if value is None else figures(value)',
             'return "no published power" if value is None else num(value, 0)',
             (f"{REPORTS_TESTS}::test_an_energy_figure_keeps_three_significant_figures_as_hours_do",
              f"{REPORTS_TESTS}::test_the_lora_pages_energy_tells_h100_from_h200")),
    Mutation("figures-text-two-decimals-below-one", MACROS,
             "when figures_size(x) >= 1 or x = 0 then format('{:.2f}', x::double)",
             "when true then format('{:.2f}', x::double)",
             ("tests/test_macros.py::test_figures_text_writes_a_measure_as_the_pages_do",)),
    # the CPU baseline's sockets are the row's over all its instances (a service's were one replica's, for 263)
    Mutation("a-services-cpu-sockets-one-replicas", "sql/marts/cpu_baselines.sql",
             "else cpu_ranked.instances * cpu_ranked.accelerator_count end as cpu_sockets",
             "else cpu_ranked.chips end as cpu_sockets",
             (("tests/test_cpu_baseline.py::test_the_cpu_baselines_sockets_are_the_rows_over_all_its_instances_on_"
               "every_page"),)),
    # one page writes one quantity one way: multiples to three figures, hours as the tables, counts separated
    Mutation("a-multiple-of-ten-or-more-written-whole", "flows/formatting.py",
             'return "—" if value is None else f"{figures(value)}x"',
             'return "—" if value is None else f"{value:.2f}x" if value < 10 else f"{value:,.0f}x"',
             (f"{REPORTS_TESTS}::test_a_multiple_is_written_to_three_significant_figures_at_every_size",)),
    Mutation("the-hourly-price-section-writes-minutes-the-table-writes-hours", "flows/templates/workload.md.j2",
             "({{ p.worse.chips | count }} x {{ p.worse.time_to_train_with_rework_minutes | time_to_train }})",
             "({{ p.worse.chips | count }} x {{ p.worse.time_to_train_with_rework_minutes | num }} min)",
             (f"{REPORTS_TESTS}::test_one_page_writes_one_quantity_one_way",)),
    Mutation("the-full-rankings-chips-without-separators", "flows/reports.py",
             "f\"{count(int(r['chips']))} ({plural(r['instances'], 'instance')})\"",
             "f\"{int(r['chips'])} ({plural(r['instances'], 'instance')})\"",
             (f"{REPORTS_TESTS}::test_one_page_writes_one_quantity_one_way",)),
    Mutation("a-ttft-reason-without-separators", INFERENCE,
             "'prefill of ' || format('{:,}', checked.input_tokens) || ' tokens takes '",
             "'prefill of ' || checked.input_tokens || ' tokens takes '",
             (f"{REPORTS_TESTS}::test_one_page_writes_one_quantity_one_way",)),
    Mutation("a-price-moves-multiple-in-two-decimals", CHANGES,
             "' price fell to ' || figures_text(pick_price_ratio) || 'x ('",
             "' price fell to ' || printf('%.2f', pick_price_ratio) || 'x ('", (HAND_MADE_CHANGES,)),
    Mutation("a-training-label-without-separators", TRAINING,
             "|| ' per doubling of ' || format('{:,}', instances) || ' instances (declared)'",
             "|| ' per doubling of ' || instances || ' instances (declared)'",
             (f"{REPORTS_TESTS}::test_a_rows_label_writes_its_counts_thousands_separated",)),
    Mutation("a-serving-label-batch-without-separators", INFERENCE,
             "|| format('{:,}', coalesce(best.batch, 0))", "|| coalesce(best.batch, 0)",
             (f"{REPORTS_TESTS}::test_a_rows_label_writes_its_counts_thousands_separated",)),
    # a chart's label is placed off the plotted points where one of its places allows (gpt3's pick label sat on one)
    Mutation("a-chart-label-placed-over-the-points", "flows/chart_kit.py",
             "sum(meets(box, dot) for dot in dots) + any(", "0 + any(",
             ("tests/test_charts.py::test_a_label_is_placed_off_the_plotted_points_where_its_places_allow",)),
    # the cheapest chip-hour and the cheapest excluded offer name their price's source and date (a review's finding)
    Mutation("chip-hour-price-said-as-the-picks-whatever-its-date", SENTENCES,
             "and source == d.pick_price_source_id and as_of == d.pick_price_as_of -%}",
             "and source == d.pick_price_source_id -%}",
             ("tests/test_reports.py::test_the_cheapest_chip_hour_and_the_cheapest_excluded_offer_name_their_price_"
              "source_and_date",)),
    Mutation("cheapest-excluded-price-source-of-the-chip-hour-pick", "sql/marts/decisions.sql",
             "cheapest_excluded.price_source_id as cheapest_excluded_price_source_id",
             "chip_hour_picks.price_source_id as cheapest_excluded_price_source_id",
             (CHEAPER_EXCLUDED,)),
    # a vLLM token figure that is no number is named, never replaced, dropped from a mean or read as a failure
    Mutation("vllm-bad-total-replaced-by-metadata", "flows/sources/benchmark_runs.py",
             "             if not (blank(result.get(total_key)) and blank(result.get(lens_key))) else setup.get(figure)",
             "             if to_float(result.get(total_key)) is not None or isinstance(result.get(lens_key), list) "
             "else setup.get(figure)",
             ("tests/test_source_benchmark_runs.py::test_a_vllm_token_total_that_is_not_a_number_is_named_and_never_"
              "replaced_by_metadata",)),
    Mutation("vllm-unreadable-output-length-read-as-a-failure", "flows/sources/benchmark_runs.py",
             "        succeeded = [None if n is None else n != 0 for n in (to_float(n) for n in output_lens)]",
             "        succeeded = [bool(n) for n in (to_float(n) for n in output_lens)]",
             ("tests/test_source_benchmark_runs.py::test_a_request_fails_by_its_error_or_0_output_tokens_and_an_"
              "unreadable_length_is_no_failure",)),
    Mutation("vllm-bad-total-passed-over-for-the-lists", "flows/sources/benchmark_runs.py",
             "    if not blank(result.get(total_key)) and total is None:", "    if False:",
             ("tests/test_source_benchmark_runs.py::test_a_vllm_token_total_that_is_not_a_number_is_named_and_never_"
              "replaced_by_metadata",)),
    Mutation("vllm-per-request-lists-of-any-length", "flows/sources/benchmark_runs.py",
             "    return \", \".join(f\"{key} {n:,}\" for key, n in lengths.items()) if len(set(lengths.values())) > 1 else \"\"",
             "    return \"\"",
             ("tests/test_source_benchmark_runs.py::test_per_request_lists_of_different_lengths_are_named_and_give_no_"
              "mean",)),
    # a run marked failed for stale sources says so to a channel that follows failures (a review's finding)
    Mutation("stale-run-failed-unsaid-to-run-failed-channels", "flows/nightly.py",
             '        events.append(notify.Event("run_failed", stale_past_limit_failed_line(result.stale_past_limit)))',
             "        pass",
             ("tests/test_changes.py::test_a_source_stale_past_its_limit_publishes_fails_and_notifies", *SLOW_TOO)),
    # a run whose Prefect API fails after its publish says it published (exit 5), not exit 1 (a review's finding)
    Mutation("engine-error-after-the-publish-exits-1", "flows/run_command.py",
             "        result = nightly_module.FINISHED\n", "        result = None\n",
             ("tests/test_changes.py::test_a_run_whose_prefect_api_fails_after_its_publish_says_it_published_and_"
              "exits_5", *SLOW_TOO)),
    # hweval query: a value past --max-cell-chars refused, DuckLake's functions refused, control characters seen
    Mutation("query-cell-unbounded", "flows/query_command.py",
             "                     if len(text) > args.max_cell_chars), None)", "                     if False), None)",
             ("tests/test_query_command.py::test_query_refuses_a_value_past_max_cell_chars_naming_its_row_and_column",)),
    Mutation("query-ducklake-functions-run", "flows/query_command.py",
             "        if LAKE_WRITING_FUNCTION.search(args.sql):", "        if False:",
             ("tests/test_query_command.py::test_query_refuses_ducklakes_functions_that_write_under_the_lakes_data_"
              "folder",)),
    Mutation("query-csv-control-characters-raw", "flows/query_command.py",
             "isinstance(value, bytes | bytearray | memoryview) else visible(str(value))",
             "isinstance(value, bytes | bytearray | memoryview) else str(value)",
             ("tests/test_query_command.py::test_query_writes_control_characters_from_data_as_seen_in_csv_and_in_an_"
              "error",)),
    # a YAML number YAML 1.1 reads other than as decimal is refused; a price sheet's text field lands as written
    Mutation("yaml-plain-style-of-libyaml-missed", "flows/safe_yaml.py",
             'and not value_node.style  # plain: None, or ""', 'and value_node.style is None  # plain: None, or ""',
             ("tests/test_price_sheet.py::test_a_text_field_holds_its_value_as_written_not_as_yaml_1_1_types_it",)),
    Mutation("yaml-float-forms-not-checked", "flows/safe_yaml.py",
             'BoundedSafeLoader.add_constructor("tag:yaml.org,2002:float", BoundedSafeLoader.construct_yaml_float)',
             "",
             ("tests/test_catalog_hostile.py::test_a_number_yaml_1_1_reads_other_than_as_decimal_is_refused_naming_key_"
              "line_and_column",)),
    Mutation("price-sheet-text-fields-typed-by-yaml", "flows/sources/price_sheet.py",
             "data = safe_yaml.load(decode_text(raw, label), PriceSheetLoader)",
             "data = safe_yaml.load(decode_text(raw, label), safe_yaml.UniqueKeyLoader)",
             ("tests/test_price_sheet.py::test_a_text_field_holds_its_value_as_written_not_as_yaml_1_1_types_it",)),
    # an MLPerf column the summarizer does not write is refused; an extra figure that is no number is quarantined
    Mutation("mlperf-training-any-figure-column-taken", "flows/sources/mlperf_training.py",
             "return figure in FIGURES and BENCHMARK_NAME.fullmatch(bench) is not None", "return bool(bench)",
             ("tests/test_source_mlperf.py::test_a_misspelt_figure_column_fails_the_file_naming_it",)),
    Mutation("mlperf-power-result-text-dropped", "flows/sources/mlperf_inference.py",
             'row["power_result_text"] = None if power is None or not str(power).strip() else str(power)',
             'row["power_result_text"] = None',
             ("tests/test_source_mlperf.py::test_a_power_result_that_is_not_a_number_is_quarantined_with_its_text",)),
    Mutation("mlperf-samples-to-converge-text-never-checked", "catalogs/expectations/mlperf_training.json",
             '"row_condition": "samples_to_converge.isnull()"',
             '"row_condition": "samples_to_converge.isnull() and samples_to_converge.notnull()"',
             ("tests/test_source_mlperf.py::test_an_extra_training_figure_that_is_not_a_number_is_quarantined_with_"
              "its_text",)),
    Mutation("mlperf-empty-extra-figure-quarantined", "flows/sources/mlperf_training.py",
             'figures[f"{column}_text"] = None if blank(value) else str(value)',
             'figures[f"{column}_text"] = None if value is None else str(value)',
             ("tests/test_source_mlperf.py::test_an_extra_training_figure_that_is_not_a_number_is_quarantined_with_"
              "its_text",)),
    # MLPerf's text is bounded at the door (a review's finding: a 200,000-character system name on every page)
    Mutation("mlperf-system-name-unbounded", "catalogs/expectations/mlperf_inference.json",
             '"column": "system",\n    "max_value": 300', '"column": "system",\n    "max_value": 300000',
             ("tests/test_source_mlperf.py::test_an_mlperf_system_name_or_submitter_past_its_bound_is_quarantined_not_"
              "printed",)),
    # a reclaim of a run shorter than its checkpoint interval redoes half the run, not half the interval
    Mutation("rework-of-a-short-run-half-an-interval", MACROS,
             "* (least(checkpoint_interval_hours::double, run_hours::double) / 2 + restart_hours::double);",
             "* (checkpoint_interval_hours::double / 2 + restart_hours::double);",
             ("tests/test_communication.py::test_a_30_day_spot_run_with_hourly_checkpoints",
              "tests/test_marts.py::test_a_spot_training_pick_carries_its_reclaims_its_rework_and_the_rate_they_rest_on")),
    # a file's encoding and line ends are named as such (a review's findings)
    Mutation("utf16-without-bom-read-as-utf8", "flows/sources/_common.py",
             "        if _NUL in data:\n            raise SourceFormatError(f\"{self.name}: line {self.line_no}: not UTF-8",
             "        if False:\n            raise SourceFormatError(f\"{self.name}: line {self.line_no}: not UTF-8",
             ("tests/test_malformed_inputs.py",)),
    Mutation("json-byte-order-mark-refused", "flows/sources/_common.py",
             'return data.decode("utf-8-sig" if encoding == "utf-8" else encoding)', "return data.decode(encoding)",
             ("tests/test_malformed_inputs.py::test_a_utf8_byte_order_mark_is_read_past_in_json_as_in_csv_and_yaml",)),
    # control and format characters from data are seen, on the pages and in a source's error (a review's findings)
    Mutation("format-characters-pass-unseen", "flows/text.py",
             'unicodedata.category(ch) in ("Cc", "Cf")', 'unicodedata.category(ch) in ("Cc",)',
             ("tests/test_reports.py::test_text_from_data_is_escaped_and_numbers_are_formatted_in_one_place",)),
    Mutation("reason-phrase-quoted-whole", "flows/sources/_http.py",
             "return cut(scrub(visible(\" \".join(str(exc.reason).split())), secrets), REASON_CHARS)",
             "return str(exc.reason)",
             ("tests/test_source_http_live.py::test_a_servers_reason_phrase_and_error_body_are_cut_and_their_control_"
              "characters_seen",)),
    Mutation("source-error-kept-unbounded", "flows/source_batches.py",
             "            self.error = error_text(self.error)", "            pass",
             ("tests/test_source_http_live.py::test_a_sources_error_is_kept_at_most_max_error_chars_with_its_secrets_"
              "masked_and_control_characters_seen",)),
    Mutation("query-planned-past-its-timeout", "flows/query_command.py",
             "        os._exit(2 if deadline else 130)", "        return",
             ("tests/test_query_command.py::test_a_query_still_planned_at_its_timeout_or_ctrl_c_ends_with_its_process",
              *SLOW_TOO)),
    Mutation("query-ctrl-c-seen-after-planning", "flows/query_command.py",
             "            if signal.SIGINT in data:", "            if False:",
             ("tests/test_query_command.py::test_a_query_still_planned_at_its_timeout_or_ctrl_c_ends_with_its_process",
              *SLOW_TOO)),
    Mutation("live-list-unbounded", "flows/sources/_common.py",
             "    if len(value) > MAX_LIVE_LIST_ITEMS:", "    if False:",
             ("tests/test_source_limits.py::test_a_live_list_option_is_a_list_of_at_most_500_names",
              "tests/test_catalog.py::test_a_live_list_of_a_plain_string_or_past_its_bound_is_named_by_hweval_check")),
    Mutation("aws-pricing-regions-unchecked", "flows/sources/aws_pricing.py",
             '    name_list(options, "regions", WHAT, required=True)\n', "",
             ("tests/test_source_limits.py::test_a_live_list_option_is_a_list_of_at_most_500_names",
              "tests/test_source_limits.py::test_an_aws_live_fetch_given_a_plain_string_makes_no_call")),
    Mutation("aws-spot-list-options-unchecked", "flows/sources/aws_spot.py",
             '    name_list(options, "instance_types", WHAT, hint=" (leave it out for every type)")\n', "",
             ("tests/test_source_limits.py::test_a_live_list_option_is_a_list_of_at_most_500_names",)),
    Mutation("frontier-through-points-at-one-speed", "flows/frontier_chart.py",
             "        count(distinct tokens_per_s_per_user) as points,", "        count(*) as points,",
             ("tests/test_frontier.py::test_two_rounds_server_results_at_one_speed_draw_no_frontier", *SLOW_TOO)),
    Mutation("bedrock-price-in-another-currency-fails-the-source", "flows/sources/bedrock_pricing.py",
             'currency, price_text = aws_pricing._price(require(dim, "pricePerUnit", dim_where, dict))',
             'currency, price_text = "USD", require(require(dim, "pricePerUnit", dim_where, dict), "USD", dim_where)',
             (BEDROCK_CURRENCY,)),
    Mutation("bedrock-price-in-another-currency-landed-as-usd", "flows/sources/bedrock_pricing.py",
             "term_type=term_type, currency_code=currency,", 'term_type=term_type, currency_code="USD",',
             (BEDROCK_CURRENCY,)),
    Mutation("azure-volume-tier-priced-as-on-demand", "flows/sources/azure_model_prices.py",
             "if tier_minimum(item, item_where) > 0:", "if tier_minimum(item, item_where) < 0:", (AZURE_TIERS_LOGGED,)),
    Mutation("azure-tier-text-read-as-a-number", "flows/sources/azure_model_prices.py",
             "units = to_float(value) if isinstance(value, (int, float)) else None", "units = to_float(value)",
             (AZURE_TIER_REFUSED,)),
    Mutation("azure-negative-tier-taken-as-on-demand", "flows/sources/azure_model_prices.py",
             "if units is None or units < 0:", "if units is None:", (AZURE_TIER_REFUSED,)),
    Mutation("azure-meters-not-asked-for-not-counted", "flows/sources/azure_model_prices.py",
             "            count.skip(NOT_ASKED_FOR)\n", "", (AZURE_TIERS_LOGGED,)),
    Mutation("azure-model-prices-counts-not-logged", "flows/sources/azure_model_prices.py",
             'log.info("azure model prices%s: %s"', 'log.debug("azure model prices%s: %s"', (AZURE_TIERS_LOGGED,)),
    Mutation("vertex-later-tiers-not-counted", "flows/sources/vertex_model_prices.py",
             "for _ in rates[1:]:", "for _ in rates[2:]:", (VERTEX_LOGGED,)),
    Mutation("vertex-skus-filtered-out-not-counted", "flows/sources/vertex_model_prices.py",
             "            count.skip(NOT_ASKED_FOR)\n", "", (VERTEX_LOGGED,)),
    Mutation("vertex-model-prices-counts-not-logged", "flows/sources/vertex_model_prices.py",
             'log.info("vertex model prices%s: %s"', 'log.debug("vertex model prices%s: %s"', (VERTEX_LOGGED,)),
    Mutation("vertex-volume-first-tier-priced", "flows/sources/vertex_model_prices.py",
             '        if gcp_billing.start_usage(rates[0], f"{rates_where}[0]") != 0:', "        if False:",
             ("tests/test_model_api_prices.py::test_a_vertex_sku_whose_first_tier_starts_above_0_is_not_priced_and_is_"
              "counted",)),
    Mutation("calibrated-training-row-has-no-as-of", "sql/intermediate/int_training_estimates_computed.sql",
             "            when 'calibrated' then calibration_as_of  -- the newest",
             "            when 'calibrated' then null  -- the newest",
             ("tests/test_cost_model.py::test_model_and_tokens_training_calibrated_on_a_published_mfu",)),
    Mutation("calibration-dated-by-its-oldest-measurement", "sql/intermediate/int_estimate_calibration.sql",
             "max(benchmark_as_of) as measurements_as_of", "min(benchmark_as_of) as measurements_as_of",
             ("tests/test_flow.py::test_every_ranked_row_but_a_spec_estimate_names_its_benchmark_date",)),
    Mutation("calibrated-serving-row-has-no-as-of", "sql/intermediate/int_inference_estimates_computed.sql",
             "case when checked.calibration_factor is not null then checked.calibration_as_of end as benchmark_as_of",
             "null::date as benchmark_as_of",
             ("tests/test_calibration.py::test_a_workload_without_a_measurement_on_the_offer_gets_a_calibrated_"
              "estimate",)),
    Mutation("calibrated-label-date-written-twice", "flows/report_templates.py",
             'dated = r["benchmark_as_of"] and r.get("basis") != "calibrated"', 'dated = r["benchmark_as_of"]',
             ("tests/test_reports.py::test_the_decision_says_where_and_as_of_when_its_prices_and_benchmarks_are",)),
    Mutation("calibrated-decision-date-said-as-a-benchmarks", "flows/templates/_sentences.j2",
             '("fitted from benchmarks as of " ~ benchmark ~ " (newest)" if', '("benchmark as of " ~ benchmark if',
             ("tests/test_reports.py::test_the_decision_says_where_and_as_of_when_its_prices_and_benchmarks_are",)),
    Mutation("rank-on-the-raw-double", "sql/marts/rankings.sql",
             "order by outcome_key(outcome_value)) as outcome_rank", "order by outcome_value) as outcome_rank",
             ("tests/test_marts.py::test_costs_equal_but_for_the_last_bits_tie_on_rank_pick_and_reversals",)),
    Mutation("pick-on-the-raw-double", "sql/marts/rankings.sql",
             "                           order by outcome_key(outcome_value), usd_per_chip_hour, candidate_id) = 1\n"
             "            as is_pick",
             "                           order by outcome_value, usd_per_chip_hour, candidate_id) = 1\n"
             "            as is_pick",
             ("tests/test_marts.py::test_costs_equal_but_for_the_last_bits_tie_on_rank_pick_and_reversals",)),
    Mutation("decision-pick-on-the-raw-double", "sql/marts/decisions.sql",
             "                           order by outcome_key(outcome_value), usd_per_chip_hour, candidate_id)\n"
             "            as outcome_order",
             "                           order by outcome_value, usd_per_chip_hour, candidate_id)\n"
             "            as outcome_order",
             ("tests/test_marts.py::test_costs_equal_but_for_the_last_bits_tie_on_rank_pick_and_reversals",)),
    Mutation("reversals-on-the-raw-double", "sql/macros.sql",
             "select workload_id, candidate_id, outcome_key(outcome_value) as outcome_value, usd_per_chip_hour",
             "select workload_id, candidate_id, outcome_value, usd_per_chip_hour",
             ("tests/test_macros.py::test_reversal_counts_take_outcomes_equal_but_for_the_last_bits_as_a_tie",
              "tests/test_marts.py::test_costs_equal_but_for_the_last_bits_tie_on_rank_pick_and_reversals")),
    Mutation("outcome-key-absolute-not-relative", "sql/macros.sql",
             "cast(printf('%.11e', value::double) as double)", "round(value::double, 11)",
             ("tests/test_macros.py::test_outcome_key_ties_a_figure_computed_in_two_orders_and_keeps_zero_negatives_"
              "and_extremes",)),
    Mutation("training-precision-cell-blank-where-undeclared", "flows/reports.py",
             "            _precision(r), f\"{count(int(r['chips']))}",
             "            r[\"precision\"] or \"\", f\"{count(int(r['chips']))}",
             ("tests/test_reports.py::test_a_training_pages_full_ranking_gives_each_rows_precision",)),
    Mutation("energy-load-factor-shows-pue", "flows/templates/_sentences.j2",
             "the load factor of its family, {{ declared(e.load_factor) }}",
             "the load factor of its family, {{ declared(e.pue) }}",
             ("tests/test_reports.py::test_a_workload_page_says_what_its_energy_figures_assume",)),
    Mutation("energy-figure-rounded", "flows/reports.py",
             'return [{"value": f"{value:g}"', 'return [{"value": f"{value:.1f}"',
             ("tests/test_reports.py::test_a_workload_page_says_what_its_energy_figures_assume",)),
    Mutation("serving-csv-without-energy-label", "flows/reports.py",
             '"power_as_of", "energy_label"]),', '"power_as_of"]),',
             ("tests/test_reports.py::test_the_csv_beside_a_page_has_the_rows_of_the_warehouse_ranking",)),
    Mutation("source-dates-newest-only", "flows/reports.py",
             'return str(oldest) if oldest == newest else f"{oldest} to {newest}"', "return str(newest)",
             ("tests/test_reports.py::test_the_index_gives_the_dates_of_the_rows_each_source_landed_oldest_to_newest",)),
    Mutation("source-dates-no-fallback", "flows/reports.py",
             '        return str(load["data_as_of"] or "—")\n    return str(oldest)',
             '        return "—"\n    return str(oldest)',
             ("tests/test_reports.py::test_the_index_gives_the_dates_of_the_rows_each_source_landed_oldest_to_newest",)),
    Mutation("excluded-offers-bound-back-to-60", "flows/reports.py",
             "EXCLUDED_OFFERS_LISTED = 5", "EXCLUDED_OFFERS_LISTED = 60",
             ("tests/test_reports.py::test_a_workload_page_lists_its_ranking_and_exclusions_up_to_its_bounds_and_says_"
              "where_the_rest_is",)),
    Mutation("excluded-query-never-given", "flows/reports.py",
             '"offers_cut": any(r["labels"] > len(r["listed"]) for r in listed)', '"offers_cut": False',
             ("tests/test_reports.py::test_a_workload_page_lists_its_ranking_and_exclusions_up_to_its_bounds_and_says_"
              "where_the_rest_is",)),
    Mutation("server-shutdown-output-shown", "flows/prefect_server.py",
             "        self.stopping = True  # what it writes as it stops", "        pass  # what it writes as it stops",
             ("tests/test_prefect_server.py::test_what_a_server_writes_as_it_is_stopped_is_dropped_and_what_it_wrote_"
              "before_is_shown",)),
    Mutation("server-error-not-waited-for", "flows/prefect_server.py",
             "                self._output_written()\n", "",
             ("tests/test_prefect_server.py::test_a_server_that_exits_before_it_answers_has_its_error_written_before_"
              "the_message_pointing_at_it",)),
    Mutation("server-output-not-copied", "flows/prefect_server.py",
             "                        line = line[os.write(2, line):]", "                        line = b''",
             ("tests/test_prefect_server.py::test_what_a_server_writes_as_it_is_stopped_is_dropped_and_what_it_wrote_"
              "before_is_shown",)),
    Mutation("query-ctrl-c-raises-keyboardinterrupt", "flows/query_command.py",
             "            self.previous_handler = signal.signal(signal.SIGINT, self._note_ctrl_c)  # first",
             "            pass  # first",
             ("tests/test_query_command.py::test_a_ctrl_c_while_the_query_runs_is_noted_not_raised_and_sigints_"
              "handler_is_given_back",)),
    Mutation("query-sigint-handler-not-given-back", "flows/query_command.py",
             "            signal.signal(signal.SIGINT, self.previous_handler)\n", "            pass\n",
             ("tests/test_query_command.py::test_a_ctrl_c_while_the_query_runs_is_noted_not_raised_and_sigints_"
              "handler_is_given_back",)),
    Mutation("query-ctrl-c-read-as-duckdbs-error", "flows/query_command.py",
             "        elif stopper.ctrl_c:\n", "        elif False:\n",
             ("tests/test_query_command.py::test_a_query_interrupted_by_ctrl_c_in_the_same_process_says_so_and_"
              "returns_130",)),
    Mutation("query-ctrl-c-as-it-ended-ignored", "flows/query_command.py",
             "    if stopper.ctrl_c:  # a Ctrl-C as the query ended", "    if False:  # a Ctrl-C as the query ended",
             ("tests/test_query_command.py::test_a_ctrl_c_while_the_query_ended_ends_the_command_with_130",)),
    Mutation("query-interrupt-sent-once", "flows/query_command.py",
             "took no interrupt within {QUERY_INTERRUPT_GRACE_S:g} s\")\n            con.interrupt()\n",
             "took no interrupt within {QUERY_INTERRUPT_GRACE_S:g} s\")\n",
             ("tests/test_query_command.py::test_a_ctrl_c_before_duckdb_executes_the_query_is_sent_again_until_it_"
              "is_taken",)),
    Mutation("query-ctrl-c-before-connecting-runs-the-query", "flows/query_command.py",
             "        if stopper.ctrl_c:  # a Ctrl-C as the command started: nothing is run\n",
             "        if False:\n",
             ("tests/test_query_command.py::test_a_ctrl_c_as_the_command_starts_runs_nothing_and_exits_130",)),
    Mutation("query-ctrl-c-as-rows-are-written-a-traceback", "flows/query_command.py",
             "    except KeyboardInterrupt:  # Python's own handler again, as the rows are written",
             "    except ZeroDivisionError:  # Python's own handler again, as the rows are written",
             ("tests/test_query_command.py::test_a_ctrl_c_as_the_rows_are_written_says_so_in_one_line_and_exits_130",)),
    Mutation("query-ctrl-c-waits-for-the-connection", "flows/query_command.py",
             "            if time.monotonic() >= give_up:\n                self._exit(deadline, f\"still connecting",
             "            if False:\n                self._exit(deadline, f\"still connecting",
             ("tests/test_query_command.py::test_a_ctrl_c_while_the_warehouse_does_not_answer_ends_the_command_"
              "within_its_grace", *SLOW_TOO)),
    Mutation("query-wakeup-fd-not-given-back", "flows/query_command.py",
             "            signal.set_wakeup_fd(self.previous_wakeup_fd)\n", "            pass\n",
             ("tests/test_query_command.py::test_a_ctrl_c_while_the_query_runs_is_noted_not_raised_and_sigints_"
              "handler_is_given_back",)),
    Mutation("cpu-baseline-pick-split-by-the-last-bit", "sql/marts/cpu_baselines.sql",
             "    select *, count(*) over (partition by workload_id) as ranked_candidates\n    from rankings\n"
             "    qualify row_number() over (partition by workload_id\n"
             "                               order by outcome_key(outcome_value), usd_per_chip_hour, candidate_id) = 1\n",
             "    select *, count(*) over (partition by workload_id) as ranked_candidates\n    from rankings\n"
             "    qualify row_number() over (partition by workload_id\n"
             "                               order by outcome_value, usd_per_chip_hour, candidate_id) = 1\n",
             ("tests/test_marts.py::test_costs_equal_but_for_the_last_bits_"
              "tie_in_the_cpu_baseline_pick_and_the_reversal_pairs",)),
    Mutation("reversal-paired-with-a-tie", "flows/reports.py",
             "        and outcome_key(worse.outcome_value) > outcome_key(better.outcome_value)\n",
             "        and worse.outcome_value > better.outcome_value\n",
             ("tests/test_marts.py::test_costs_equal_but_for_the_last_bits_"
              "tie_in_the_cpu_baseline_pick_and_the_reversal_pairs",)),
    # stop 60: the live sources' bounds and secrets (a review's findings)
    Mutation("reason-phrase-not-scrubbed", "flows/sources/_http.py",
             "    return cut(scrub(visible(\" \".join(str(exc.reason).split())), secrets), REASON_CHARS)\n",
             "    return cut(visible(\" \".join(str(exc.reason).split())), REASON_CHARS)\n",
             ("tests/test_source_http_live.py::test_a_reason_phrase_that_echoes_the_requests_key_has_it_masked",)),
    Mutation("error-body-read-past-its-deadline", "flows/sources/_http.py",
             "and time.monotonic() <= deadline:\n", ":\n",
             ("tests/test_source_http_live.py::test_an_error_body_that_trickles_in_is_read_no_longer_than_a_body_"
              "may_take",)),
    Mutation("invalid-url-retried", "flows/sources/_http.py",
             "        except http.client.InvalidURL as exc:", "        except KeyError as exc:",
             ("tests/test_source_http_live.py::test_a_next_page_link_that_is_no_url_fails_at_once_not_after_retries",)),
    Mutation("aws-page-bytes-unbounded", "flows/sources/_aws.py",
             "        if isinstance(body, bytes | bytearray) and len(body) > limits.max_file_bytes:\n",
             "        if False:\n",
             ("tests/test_source_aws_live.py::test_a_page_past_max_file_bytes_is_refused_before_it_is_parsed_and_the_"
              "next_listing_has_its_own_bound",)),
    Mutation("aws-page-bound-left-on-the-client", "flows/sources/_aws.py",
             "        api_client.meta.events.unregister(event, within_bytes)\n", "        pass\n",
             ("tests/test_source_aws_live.py::test_a_page_past_max_file_bytes_is_refused_before_it_is_parsed_and_the_"
              "next_listing_has_its_own_bound",)),
    Mutation("aws-deep-page-recursion-error", "flows/sources/_aws.py",
             "            except RecursionError:", "            except KeyError:",
             ("tests/test_source_aws_live.py::test_a_page_nested_past_pythons_recursion_limit_is_a_format_error_"
              "naming_it",)),
    Mutation("aws-failed-page-not-named", "flows/sources/_aws.py",
             "                where = f\"{what}: page {page_no + 1}\"", "                where = what",
             ("tests/test_source_aws_live.py::test_a_page_still_failing_after_every_retry_is_named",)),
    Mutation("azure-skus-location-not-quoted", "flows/sources/azure_skus.py",
             "f\"location eq {odata_literal(region)}\"", "f\"location eq '{region}'\"",
             ("tests/test_source_instance_types.py::test_azure_a_location_is_written_into_the_filter_as_an_odata_"
              "literal",)),
    Mutation("cluster-folder-not-asked-of-its-user", "flows/services.py",
             "        if subprocess.run([*prefix, \"test\", \"-w\", str(folder)]", "        if subprocess.run([\"test\", \"-w\", str(folder)]",
             ("tests/test_lake.py::test_a_cluster_run_as_postgres_lives_in_a_temporary_directory_that_user_can_write_in",)),
    Mutation("cluster-folder-without-tmp-to-fall-back-on", "flows/services.py",
             "dict.fromkeys((tempfile.gettempdir(), \"/tmp\"))", "dict.fromkeys((tempfile.gettempdir(),))",
             ("tests/test_lake.py::test_a_cluster_run_as_postgres_lives_in_a_temporary_directory_that_user_can_write_in",)),
    Mutation("cluster-folder-taken-unasked", "flows/services.py",
             "                          timeout=START_TIMEOUT_S).returncode == 0:",
             "                          timeout=START_TIMEOUT_S).returncode in (0, 1):",
             ("tests/test_lake.py::test_a_cluster_run_as_postgres_lives_in_a_temporary_directory_that_user_can_write_in",)),
    # a run whose end Prefect did not record leaves its run file; the next run marks its flow run Failed, untold
    Mutation("unrecorded-end-leaves-no-run-file", "flows/run_command.py",
             "        left = killed_runs.leave_unrecorded(nightly_module.HOLDER, f\"published, but {unrecorded}\")",
             "        left = None",
             ("tests/test_changes.py::test_a_run_whose_prefect_api_fails_after_its_publish_says_it_published_and_"
              "exits_5", *SLOW_TOO)),
    Mutation("unrecorded-end-marked-crashed", "flows/killed_runs.py",
             '            state_name, message = "Failed", f"{ended}; {found}"',
             '            state_name, message = "Crashed", f"{ended}; {found}"',
             ("tests/test_killed_runs.py::test_a_run_whose_end_prefect_did_not_record_leaves_its_file_and_the_next_run_marks_it_failed_untold",)),
    Mutation("unrecorded-end-told-again", "flows/killed_runs.py",
             "        if ended or run.deployment_id is not None:", "        if run.deployment_id is not None:",
             ("tests/test_killed_runs.py::test_a_run_whose_end_prefect_did_not_record_leaves_its_file_and_the_next_run_marks_it_failed_untold",)),
    Mutation("left-run-file-kept-locked", "flows/run_files.py",
             "        os.close(_made(runs, name, info))", "        _made(runs, name, info)",
             ("tests/test_killed_runs.py::test_a_run_whose_end_prefect_did_not_record_leaves_its_file_and_the_next_run_marks_it_failed_untold",)),
    # a Ctrl-C inside pydantic's JSON serializer (an error that keeps only its text) ends in one line, by SIGINT
    Mutation("pydantic-json-ctrl-c-a-failure", "flows/cli.py",
             "                         or _pydantic_json_ctrl_c(exc)\n", "",
             ("tests/test_cli.py::test_a_ctrl_c_ends_a_command_in_one_line_by_sigint_not_a_traceback",
              "tests/test_cli.py::test_only_a_ctrl_c_inside_pydantics_json_serializer_is_taken_for_one")),
    Mutation("pydantic-json-any-error-a-ctrl-c", "flows/cli.py",
             "PYDANTIC_JSON_CTRL_C.fullmatch(str(exc)) is not None", 'str(exc).endswith(": KeyboardInterrupt: ")',
             ("tests/test_cli.py::test_only_a_ctrl_c_inside_pydantics_json_serializer_is_taken_for_one",)),
    Mutation("pydantic-json-nested-ctrl-c-a-failure", "flows/cli.py",
             '`[^`]*`): )*"\n', '`[^`]*`): ){,3}"\n',
             ("tests/test_cli.py::test_only_a_ctrl_c_inside_pydantics_json_serializer_is_taken_for_one",)),
    Mutation("unrecorded-end-failed-not-forced", "flows/killed_runs.py",
             'force=state_name == "Failed"', "force=False", ("tests/test_killed_runs.py::test_a_run_whose_end_prefect_did_not_record_leaves_its_file_and_the_next_run_marks_it_failed_untold",)),
    Mutation("unrecorded-end-not-cut-to-fit", "flows/killed_runs.py",
             "    while ended and run_files.written_bytes(", "    while False and run_files.written_bytes(", ("tests/test_killed_runs.py::test_what_a_run_leaves_as_it_ended_is_cut_to_what_the_next_run_reads_back",)),
    Mutation("left-run-file-past-what-is-read-back", "flows/run_files.py",
             "    if size > MAX_HOLDER_BYTES:", "    if False:", ("tests/test_killed_runs.py::test_what_a_run_leaves_as_it_ended_is_cut_to_what_the_next_run_reads_back",)),
    Mutation("scipy-stats-loaded-with-gx", "flows/validate.py",
             'DEFERRED_IMPORTS = ("scipy.stats",)', 'DEFERRED_IMPORTS = ()',
             ("tests/test_gx_process.py::test_the_gx_process_validates_every_expectation_type_of_the_suites_without_loading_scipy_stats",)),
    Mutation("gx-process-imports-gx-without-deferring", "flows/gx_process.py",
             "    import_gx()\n", "    import great_expectations  # noqa: F401\n",
             ("tests/test_gx_process.py::test_the_gx_process_validates_every_expectation_type_of_the_suites_without_loading_scipy_stats",)),
    Mutation("deferred-module-not-put-on-its-package", "flows/validate.py",
             "        setattr(sys.modules[parent], child, module)", "        pass",
             ("tests/test_gx_process.py::test_the_gx_process_validates_every_expectation_type_of_the_suites_without_loading_scipy_stats",)),
    Mutation("gx-process-kept-after-its-runs-data-docs", "flows/gx_process.py",
             "    if releases_after_site():\n", "    if False:\n",
             ("tests/test_gx_process.py::test_a_run_in_its_own_process_stops_the_gx_process_once_its_data_docs_are_"
              "built_and_another_keeps_it",)),
    Mutation("gx-release-cancels-a-call-asked-after-the-site", "flows/gx_process.py",
             "        shutdown(pool, cancel_queued=False)\n", "        shutdown(pool, cancel_queued=True)\n",
             ("tests/test_gx_process.py::test_a_run_in_its_own_process_stops_the_gx_process_once_its_data_docs_are_"
              "built_and_another_keeps_it",)),
    Mutation("chart-workers-start-beside-gx-in-the-command", "flows/land.py",
             "    if not gx_process.releases_after_site():\n        chart_workers.start()",
             "    if True:\n        chart_workers.start()",
             ("tests/test_gx_process.py::test_a_landing_starts_the_chart_workers_beside_gx_only_where_gx_s_process_is_"
              "kept",)),
    Mutation("chart-workers-not-started-at-gx-release", "flows/gx_process.py",
             "        shutdown(pool, cancel_queued=False)\n        chart_workers.start()\n",
             "        shutdown(pool, cancel_queued=False)\n",
             ("tests/test_gx_process.py::test_a_run_in_its_own_process_stops_the_gx_process_once_its_data_docs_are_"
              "built_and_another_keeps_it",)),
    Mutation("gx-process-keeps-arrow-memory-after-a-call", "flows/gx_process.py",
             "    pa.default_memory_pool().release_unused()\n", "    pass\n",
             ("tests/test_gx_process.py::test_the_gx_process_gives_back_the_arrow_memory_of_a_batch_it_validated",)),
    Mutation("hweval-command-keeps-gx-after-its-data-docs", "flows/cli.py",
             "    gx_process.RELEASE_AFTER_SITE = True", "    gx_process.RELEASE_AFTER_SITE = False",
             ("tests/test_cli.py::test_the_console_script_is_entry_which_skips_the_last_full_collection_at_exit",)),
    Mutation("ddl-applied-a-statement-at-a-time", "flows/warehouse.py",
             "    with transaction(con):\n        for text in ddl:", "    with contextlib.nullcontext(con):\n        for text in ddl:",
             ("tests/test_migrations.py::test_apply_ddl_that_fails_part_way_changes_nothing",)),
    Mutation("read-ahead-taken-though-its-file-changed", "flows/read_ahead.py",
             "    if read.signature is not None and signature(read.root / read.file.path) == read.signature:\n",
             "    if True:\n",
             ("tests/test_read_ahead.py::test_a_file_changed_after_its_read_began_is_read_again",)),
    Mutation("read-ahead-taken-with-another-declaration", "flows/read_ahead.py",
             "    if (read.kind, read.root, read.file, read.limits) != (source.kind, root, file, limits_for(source, "
             "source_id)):\n",
             "    if (read.kind, read.root) != (source.kind, root):\n",
             ("tests/test_read_ahead.py::test_a_file_read_ahead_with_another_declaration_is_read_again",)),
    Mutation("read-ahead-not-taken-by-the-fetch", "flows/source_batches.py",
             "                    ahead = read_ahead.take(catalog.root, source, source_id, index)\n",
             "                    ahead = None\n",
             ("tests/test_read_ahead.py",)),
    Mutation("hweval-run-reads-nothing-ahead", "flows/run_command.py",
             "        run_startup.read_given_files_ahead(args.catalog, source_files, args.as_of)\n", "",
             ("tests/test_read_ahead.py::test_hweval_run_reads_its_offer_file_ahead_of_the_flow_and_keeps_none_after_"
              "it",)),
    Mutation("hweval-run-keeps-the-read-ahead-of-a-refused-run", "flows/run_command.py",
             "        read_ahead.abandon()\n        if server is not None:\n            server.stop()\n",
             "        if server is not None:\n            server.stop()\n",
             ("tests/test_read_ahead.py::test_hweval_run_reads_its_offer_file_ahead_of_the_flow_and_keeps_none_after_"
              "it",)),
    Mutation("hweval-run-keeps-the-read-ahead-when-its-server-fails", "flows/run_command.py",
             "            read_ahead.abandon()\n            print(f\"hweval: {exc}; the run did not start\"",
             "            print(f\"hweval: {exc}; the run did not start\"",
             ("tests/test_read_ahead.py::test_hweval_run_reads_its_offer_file_ahead_of_the_flow_and_keeps_none_after_"
              "it",)),
    Mutation("hweval-run-keeps-the-read-ahead-at-a-ctrl-c-before-its-flow", "flows/run_command.py",
             "        except BaseException:  # a Ctrl-C while the server starts: the reads queued are not run before the "
             "exit\n            read_ahead.abandon()\n            raise\n", "",
             ("tests/test_read_ahead.py::test_hweval_run_reads_its_offer_file_ahead_of_the_flow_and_keeps_none_after_"
              "it",)),
    Mutation("read-ahead-taken-under-other-limits", "flows/read_ahead.py",
             "    if (read.kind, read.root, read.file, read.limits) != (source.kind, root, file, limits_for(source, "
             "source_id)):\n",
             "    if (read.kind, read.root, read.file) != (source.kind, root, file):\n",
             ("tests/test_read_ahead.py::test_a_file_read_ahead_under_other_limits_is_read_again_under_the_runs",)),
    Mutation("read-ahead-taken-though-its-file-changed-during-the-read", "flows/read_ahead.py",
             "    if not _unchanged(read, source_id):\n        return None\n    if error is not None:",
             "    if error is not None:",
             ("tests/test_read_ahead.py::test_a_file_changed_while_it_was_read_ahead_is_read_again",)),
    Mutation("hweval-run-keeps-a-read-ahead-not-taken", "flows/run_command.py",
             "        read_ahead.abandon()  # a file the flow did not fetch", "        pass  # a file the flow did not fetch",
             ("tests/test_read_ahead.py::test_hweval_run_reads_its_offer_file_ahead_of_the_flow_and_keeps_none_after_"
              "it",)),
)


@dataclass
class Outcome:
    mutation: Mutation
    status: str  # caught | survived | error
    detail: str
    seconds: float
    line: int = 0


def project_files(root: Path) -> list[str]:
    """The working tree's files as git sees them (tracked and new, not ignored)."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                         check=True, capture_output=True).stdout.decode()
    return sorted({name for name in out.split("\0") if name and (root / name).is_file()})


def scratch_copy(root: Path, files: list[str], into: Path) -> Path:
    for name in files:
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target)
    return into


def line_of(text: str, old: str) -> int:
    return text[:text.index(old)].count("\n") + 1


RUNNING: set[subprocess.Popen] = set()  # pytest processes to stop if mutate.py is interrupted
STOPPING = threading.Event()


def pytest(copy: Path, tests: tuple[str, ...]) -> subprocess.CompletedProcess:
    """The copy's tests against the copy's code: PYTHONPATH puts its `flows` ahead of the editable install."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(copy), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
               PYTHONDONTWRITEBYTECODE="1")
    args = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    with subprocess.Popen(args, cwd=copy, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        RUNNING.add(proc)
        try:
            out, err = proc.communicate()
        finally:
            RUNNING.discard(proc)
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def stop_running() -> None:
    STOPPING.set()
    for proc in list(RUNNING):
        proc.terminate()


def first_failure(output: str, verbose: bool = False) -> str:
    """The first failing test's id (and, verbose, the first line of its error)."""
    found = re.search(r"^(?:FAILED|ERROR) (\S+)", output, re.M)
    what = found.group(1) if found else output.strip().splitlines()[-1] if output.strip() else "(no output)"
    error = re.search(r"^E +(.+)$", output, re.M)
    return f"{what}\n{'':11}{error.group(1).strip()}" if verbose and error else what


def try_mutation(copy: Path, mutation: Mutation, tests: tuple[str, ...] = (), verbose: bool = False) -> Outcome:
    path = copy / mutation.path
    original = path.read_text()
    count = original.count(mutation.old)
    if count != 1:
        return Outcome(mutation, "error", f"the text to replace occurs {count} times in {mutation.path}", 0.0)
    line = line_of(original, mutation.old)
    start = time.monotonic()
    path.write_text(original.replace(mutation.old, mutation.new))
    try:
        proc = pytest(copy, tests or mutation.tests)
    finally:
        path.write_text(original)
    seconds = time.monotonic() - start
    if proc.returncode == 1:
        return Outcome(mutation, "caught", first_failure(proc.stdout + proc.stderr, verbose), seconds, line)
    if proc.returncode == 0:
        return Outcome(mutation, "survived", "all of " + " ".join(tests or mutation.tests) + " passed", seconds, line)
    detail = f"pytest exit status {proc.returncode}: {first_failure(proc.stdout + proc.stderr)}"
    return Outcome(mutation, "error", detail, seconds, line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="mutations to try (default: all)")
    parser.add_argument("--list", action="store_true", help="print the mutations and exit")
    parser.add_argument("--jobs", type=int, default=1, help="mutations tried at once, each in its own copy")
    parser.add_argument("--no-baseline", action="store_true", help="skip running the tests on the unmutated copy")
    parser.add_argument("--tests", nargs="+", default=[], metavar="TEST",
                        help="run these tests (pytest ids) instead of each mutation's own")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the first error line of a caught mutation")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))  # clean up as on Ctrl-C

    by_name = {m.name: m for m in MUTATIONS}
    unknown = [n for n in args.names if n not in by_name]
    if unknown:
        parser.error(f"unknown mutation(s) {', '.join(unknown)}; see --list")
    chosen = [by_name[n] for n in args.names] or list(MUTATIONS)
    if args.list:
        for m in chosen:
            print(f"{m.name:40} {m.path}")
        return 0

    files = project_files(ROOT)
    jobs = max(1, min(args.jobs, len(chosen)))
    with tempfile.TemporaryDirectory(prefix="hweval-mutate-") as scratch:
        copies = [scratch_copy(ROOT, files, Path(scratch) / f"copy{i}") for i in range(jobs)]
        stale = [m for m in chosen if (copies[0] / m.path).read_text().count(m.old) != 1]
        for m in stale:
            print(f"mutate: {m.name}: its text no longer occurs exactly once in {m.path}; update tests/mutate.py")
        if stale:
            return 2
        if not args.no_baseline:
            selected = args.tests or list(dict.fromkeys(t for m in chosen for t in m.tests))
            print(f"mutate: baseline: {' '.join(selected)}", flush=True)
            proc = pytest(copies[0], tuple(selected))
            if proc.returncode != 0:
                print(proc.stdout[-3000:] + proc.stderr[-2000:])
                print("mutate: the unmutated copy fails its tests; fix them first")
                return 2
        print(f"mutate: {len(chosen)} mutation(s), each in a scratch copy of the project", flush=True)
        free = list(copies)

        def run(mutation: Mutation) -> Outcome:
            copy = free.pop()
            try:
                outcome = try_mutation(copy, mutation, tuple(args.tests), args.verbose)
            finally:
                free.append(copy)
            if STOPPING.is_set():
                return outcome
            where = f"{mutation.path}:{outcome.line}"
            print(f"  {outcome.status:8} {mutation.name:40} {where:58} {outcome.seconds:5.1f} s  {outcome.detail}",
                  flush=True)
            return outcome

        pool = ThreadPoolExecutor(max_workers=jobs)
        try:
            outcomes = list(pool.map(run, chosen))
        finally:  # interrupted: start no more, stop the running ones; the scratch copies are deleted on the way out
            pool.shutdown(wait=False, cancel_futures=True)
            stop_running()
            pool.shutdown(wait=True)

    caught = sum(o.status == "caught" for o in outcomes)
    survived = [o for o in outcomes if o.status == "survived"]
    errors = [o for o in outcomes if o.status == "error"]
    print(f"mutate: caught {caught} / tried {len(outcomes)}"
          + (f"; survived: {', '.join(o.mutation.name for o in survived)}" if survived else "")
          + (f"; errors: {', '.join(o.mutation.name for o in errors)}" if errors else ""))
    return 2 if errors else 1 if survived else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("mutate: interrupted (the working tree was never changed; the scratch copies are deleted)")
        sys.exit(130)
