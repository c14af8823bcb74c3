"""Markdown reports from the marts: an index that opens with a decision per workload, and one page per workload (a
short table, charts, the explanation, the full ranking's first rows and all of it as CSV, the exclusions); `render`
adds the offers page (flows/offers_page.py) and the back-test page (flows/estimates_page.py). A page's lists are
bounded (RANKING_ROWS_LISTED and below); its facts about the whole ranking (reversal pairs, utilization, exclusions)
are worked out in the warehouse.

Python gathers the rows; the wording lives in flows/templates/ (Jinja2, its environment in
flows/report_templates.py), the number formats in flows/formatting.py.
"""

from __future__ import annotations

import datetime as dt
import re

import duckdb

from flows import charts, estimates_page, offers_page, relations
from flows.chart_kit import Chart
from flows.formatting import (
    count,
    cut_sql,
    figures,
    last_loaded,
    num,
    percent,
    plural,
    ratio,
    signed_usd,
    time_to_train,
    usd,
)
from flows.report_templates import (
    MARKDOWN,
    OUTCOME_LABELS,
    PLAIN_TEXT,
    UNTESTED_BAND,
    benchmark_label,
    csv_text,
    link,
    price_source,
)
from flows.warehouse import RAW_TABLES, fetch_dicts

TOP_ROWS = 10  # rows of the short table at the top of a workload page
# A workload page stays one a person reads at any market size (the bench's 35,000 offers made pages of 17 MB, with
# 36,668 ranked rows and cells of a million characters): past these, the page counts what it leaves out and says where
# all of it is (the workload's CSV and marts.rankings, or marts.excluded_candidates).
RANKING_ROWS_LISTED = 100  # rows of the Full ranking table
EXCLUSION_REASONS_LISTED = 60  # reasons under Excluded
# offers named for one reason before "and N more" (offers that read alike: one name): a reason that excludes more
# gives their number and its first few, and the page gives the query that lists them all (2,378 characters of 51 names
# in one cell was not read)
EXCLUDED_OFFERS_LISTED = 5
NOTHING_EXCLUDED = (0, [], {"reasons": 0, "candidates": 0, "offers_cut": False})
REVERSALS_LISTED = 5  # pairs under "Where the hourly price disagrees"
API_RANGES_LISTED = 4  # traffic ranges where self-hosting beats a hosted API, before "in N more ranges"
CHANGES_LISTED = 8  # lines of one kind of change shown before "and N more"
QUARANTINE_VALUES_LISTED = 12  # distinct rejected values named per source and expectation before "and N others"
BASES = ["measured", "scaled", "calibrated", "estimated"]


def best_offer_sentence(c: dict) -> str:
    """One plain-text line for a person (a notification): a workload's new best offer, the old one, why, the money."""
    return str(PLAIN_TEXT.get_template("_sentences.j2").module.best_offer(c))


def _offer(r: dict) -> str:
    return f"{r['cloud']} {r['instance_type']}"


def _energy(value: float | None) -> str:
    """An energy figure to three significant figures at least (as hours), or what its absence means: the chip's power
    is not published (never a blank)."""
    return "no published power" if value is None else figures(value)


def _energy_source(c: dict) -> str:
    """Where a serving row's energy comes from, short: the MLPerf power result and its date, TDP, or the site."""
    if c.get("energy_basis") == "measured":
        return f"MLPerf power ({c['power_as_of']})"
    return {"tdp": "TDP x load factor", "site": "site power"}.get(c.get("energy_basis"), "—")


def chip_hours(r: dict) -> float:
    """The chip-hours a completed run is paid for: its time to train with the rework after reclaims (as
    completed_run_usd counts it, and the Full ranking shows it)."""
    return r["chips"] * r["time_to_train_with_rework_minutes"] / 60


# Each workload's candidates that are dearer per chip-hour and cheaper per outcome (is_reversal), best first, at most
# $limit, each with the one it beats that is cheapest per chip-hour (then lowest outcome): found in the warehouse,
# whatever the number of candidates, for every workload at once.
REVERSALS_SQL = """
with ranked as (
    select workload_id, candidate_id, outcome_rank, outcome_value, usd_per_chip_hour, is_reversal
    from marts.rankings where as_of = $as_of
),
better as (
    select workload_id, candidate_id, outcome_value, usd_per_chip_hour
    from ranked
    where is_reversal
    qualify row_number() over (partition by workload_id order by outcome_rank, usd_per_chip_hour, candidate_id)
        <= $limit
),
paired as (
    select better.workload_id, better.candidate_id,
           arg_min(worse.candidate_id, (worse.usd_per_chip_hour, worse.outcome_value, worse.candidate_id)) as worse_id
    from better
    inner join ranked as worse
        on worse.workload_id = better.workload_id
        -- outcomes compared as marts.rankings counts reversals (outcome_key: equal to 12 significant digits ties)
        and outcome_key(worse.outcome_value) > outcome_key(better.outcome_value)
        and worse.usd_per_chip_hour < better.usd_per_chip_hour
    group by all
)
select rankings.*, paired.worse_id, better.candidate_id is not null as is_better,
    -- the pair too close to call, by the Decision's rule: the one's likely range (or figure) reaches the other's
    bands_overlap(rankings.outcome_value, rankings.outcome_high, worse.outcome_value, worse.outcome_low)
        as too_close_to_worse
from marts.rankings as rankings
left join better using (workload_id, candidate_id)
left join paired using (workload_id, candidate_id)
left join marts.rankings as worse
    on worse.as_of = rankings.as_of and worse.workload_id = rankings.workload_id
    and worse.candidate_id = paired.worse_id
where rankings.as_of = $as_of
    and (better.candidate_id is not null
         or exists (select 1 from paired
                    where paired.workload_id = rankings.workload_id and paired.worse_id = rankings.candidate_id))
order by workload_id, outcome_rank, usd_per_chip_hour, candidate_id
"""


def reversal_pairs(con: duckdb.DuckDBPyConnection, as_of: dt.date,
                   limit: int = REVERSALS_LISTED) -> dict[str, list[dict]]:
    """Each workload's pairs where a candidate dearer per chip-hour is cheaper per outcome, with the figure that
    explains it (workload id -> pairs; a workload without any has none)."""
    rows = fetch_dicts(con, REVERSALS_SQL, {"as_of": as_of, "limit": limit})
    by_id = {(r["workload_id"], r["candidate_id"]): r for r in rows}
    pairs: dict[str, list[dict]] = {}
    for better in rows:
        if better["is_better"]:
            pairs.setdefault(better["workload_id"], []).append(
                _reversal_pair(better, by_id[(better["workload_id"], better["worse_id"])]))
    return pairs


def _reversal_pair(better: dict, worse: dict) -> dict:
    pair = {"better": better, "worse": worse, "why": None, "too_close": None,
            "hour_ratio": better["usd_per_chip_hour"] / worse["usd_per_chip_hour"],
            "outcome_ratio": better["outcome_value"] / worse["outcome_value"]}
    if better["time_to_train_with_rework_minutes"] and worse["time_to_train_with_rework_minutes"]:
        pair |= {"why": "chip_hours", "better_chip_hours": chip_hours(better), "worse_chip_hours": chip_hours(worse)}
    elif better.get("utilization") is not None and worse.get("utilization") is not None and (
            better["utilization"] > 1.5 * worse["utilization"]):
        pair["why"] = "utilization"
    elif better["tokens_per_s_per_chip"] and worse["tokens_per_s_per_chip"]:
        pair["why"] = "tokens"
    if better["too_close_to_worse"]:  # its lead is not settled, as the Decision says of the cheapest chip-hour
        pair["too_close"] = (_range_or_figure(better), _range_or_figure(worse))
    return pair


def _range_or_figure(r: dict) -> str:
    """A candidate's likely range, or its figure where it has none (a measured row), as a pair too close to call
    names them."""
    if r.get("outcome_low") is None or r.get("outcome_high") is None:
        return f"figure, {usd(r['outcome_value'])}"
    return f"likely range, {likely_range(r)}"


def _training_rows(ranking: list[dict], costs: dict[str, dict]) -> tuple[list[str], list[list[str]]]:
    # the precision each row trained at, as the serving tables give it: a measured result's may not be the one the
    # workload asks (MLPerf gpt3 on H100 at fp8, TPU v5p at int8); none where the benchmark declares none
    headers = ["rank", "offer", "accelerator x count", "cloud / region", "term", "USD per chip-hour",
               "chip-hour rank", "precision", "chips", "time to train", OUTCOME_LABELS[ranking[0]["outcome_metric"]],
               "likely range", "energy (kWh)", "basis", "price source (as of)", "benchmark or assumption (as of)"]
    rows = []
    for r in ranking:
        # the wall clock a completed run takes, the rework after its reclaims included (as its USD counts it)
        minutes = r["time_to_train_with_rework_minutes"]
        redone = f" ({num(r['interruption_overhead'] * 100)}% redone)" if r["interruption_overhead"] else ""
        rows.append([
            str(r["outcome_rank"]), _offer(r), f"{r['accelerator_id']} x {r['accelerator_count']}",
            f"{r['cloud']} / {r['region']}", r["pricing_term"], usd(r["usd_per_chip_hour"]), str(r["chip_hour_rank"]),
            _precision(r), f"{count(int(r['chips']))} ({plural(r['instances'], 'instance')})",
            time_to_train(minutes) + redone, usd(r["outcome_value"]),
            likely_range(r), _energy(costs.get(r["candidate_id"], {}).get("energy_kwh")), r["basis"],
            price_source(r), benchmark_label(r),
        ])
    return headers, rows


def _inference_rows(ranking: list[dict], costs: dict[str, dict], offline: bool) -> tuple[list[str], list[list[str]]]:
    label = OUTCOME_LABELS[ranking[0]["outcome_metric"]]
    headers = ["rank", "offer", "accelerator x count", "cloud / region", "term", "USD per chip-hour",
               "chip-hour rank", "precision", "tokens/s per chip"]
    # beside the month's USD, the month's energy of the same instances, idle or not, at the energy column's power
    headers += [] if offline else ["instances", "utilization", "USD per month",
                                   "kWh per month, idle at load power"]
    headers += [label, "likely range"] + ([] if offline else ["USD per million output tokens"])
    # energy per outcome: per million output tokens offline, per million successful requests for a service
    energy_column = "kwh_per_million_tokens" if offline else "kwh_per_million_successful_requests"
    headers += ["USD per million total tokens", OUTCOME_LABELS[energy_column], "tokens/s per watt",
                "energy from", "basis", "price source (as of)", "benchmark or estimate (as of)"]
    rows = []
    for r in ranking:
        c = costs.get(r["candidate_id"], {})
        row = [str(r["outcome_rank"]), _offer(r), f"{r['accelerator_id']} x {r['accelerator_count']}",
               f"{r['cloud']} / {r['region']}", r["pricing_term"], usd(r["usd_per_chip_hour"]), str(r["chip_hour_rank"]),
               r["precision"], num(r["tokens_per_s_per_chip"], 0)]
        if not offline:
            row += [count(c.get("instances")), percent(c.get("utilization")), usd(c.get("monthly_usd")),
                    _energy(c.get("provisioned_kwh_per_month"))]
        row += [usd(r["outcome_value"]), likely_range(r)] + ([] if offline else [usd(r["usd_per_million_tokens"])])
        row += [usd(r["usd_per_million_total_tokens"]), _energy(c.get(energy_column)),
                _energy(c.get("tokens_per_s_per_watt")), _energy_source(c), r["basis"], price_source(r),
                benchmark_label(r)]
        rows.append(row)
    return headers, rows


def _precision(r: dict) -> str:
    """A row's precision, as the Top 10 and the training Full ranking write it: "not declared" where its benchmark
    declares none (MLPerf Training's), said, not guessed."""
    return r["precision"] or "not declared"


def likely_range(r: dict) -> str:
    """An estimate's error band from the back-test, as `low to high`; a measured row (no band) gets a dash. A calibrated
    row whose factor no leave-one-out comparison tested (band_untested) says so beside it."""
    if r.get("outcome_low") is None or r.get("outcome_high") is None:
        return "—"
    untested = f" ({UNTESTED_BAND})" if r.get("band_untested") else ""
    return f"{usd(r['outcome_low'])} to {usd(r['outcome_high'])}{untested}"


def _top_rows(ranking: list[dict]) -> list[list[str]]:
    # a row without a precision is a result whose benchmark declares none (MLPerf Training's): said, not guessed
    return [[str(r["outcome_rank"]), f"{_offer(r)} ({r['region']})", r["pricing_term"],
             _precision(r), usd(r["outcome_value"]), likely_range(r), str(r["chip_hour_rank"]),
             r["basis"]] for r in ranking[:TOP_ROWS]]


# Each workload's Utilization facts from its whole ranking: the candidates that run below 25% utilization, and the
# best one-chip offer and the best GPU instance of 8 chips or more, in the ranking's order.
UTILIZATION_SQL = """
select
    ranked.workload_id,
    count(*) filter (where costs.utilization < 0.25) as idle,
    arg_min(ranked.candidate_id, (ranked.outcome_rank, ranked.usd_per_chip_hour, ranked.candidate_id))
        filter (where ranked.accelerator_count = 1) as small_id,
    arg_min(ranked.candidate_id, (ranked.outcome_rank, ranked.usd_per_chip_hour, ranked.candidate_id))
        filter (where ranked.accelerator_count >= 8 and ranked.family = 'gpu') as large_id
from marts.rankings as ranked
left join marts.inference_costs as costs using (as_of, candidate_id)
where ranked.as_of = $as_of
group by ranked.workload_id
"""


def _utilization(con: duckdb.DuckDBPyConnection, as_of: dt.date, workloads: list[dict]) -> dict[str, dict]:
    """Facts for the Utilization section of each service's page (workload id -> facts; none for training and
    offline batch work)."""
    services = {w["workload_id"] for w in workloads if w["kind"] == "inference" and not w["is_offline"]}
    facts = [f for f in fetch_dicts(con, UTILIZATION_SQL, {"as_of": as_of}) if f["workload_id"] in services]
    rows = {r["candidate_id"]: r for r in fetch_dicts(
        con, "select * from marts.rankings where as_of = $as_of and candidate_id in (select unnest($ids))",
        {"as_of": as_of, "ids": [f[key] for f in facts for key in ("small_id", "large_id") if f[key] is not None]})}
    found: dict[str, dict] = {}
    for f in facts:
        one, eight = rows.get(f["small_id"]), rows.get(f["large_id"])  # a candidate id names its workload
        paired = one is not None and eight is not None and one["outcome_rank"] < eight["outcome_rank"]
        found[f["workload_id"]] = {"idle": f["idle"], "small": one if paired else None,
                                   "large": eight if paired else None}
    return found


def _basis_by_family(rows: list[dict]) -> list[tuple[str, list[str]]]:
    """Each accelerator family of a ranking with the bases of its rows (rows: at least family and basis)."""
    by_family: dict[str, set[str]] = {}
    for r in rows:
        by_family.setdefault(r["family"], set()).add(r["basis"])
    return [(family, sorted(bases, key=BASES.index)) for family, bases in sorted(by_family.items())]


# A ranked precision the workload does not list by name but ranks as one it lists (precision_class in sql/macros.sql:
# fp16 counts as bf16), with the precisions it lists (as the exclusion reasons write them) and the width they share
PRECISION_ALIASES_SQL = """
with listed as (
    select workload_id, string_agg(precision, ', ' order by precision) as listed_precisions
    from catalog.workload_precisions
    group by workload_id
)
select distinct ranked.workload_id, listed.listed_precisions, ranked.precision as ranked_precision,
    accepted.precision as listed_precision, cast(bytes_per_value(ranked.precision) * 8 as integer) as bits
from marts.rankings as ranked
inner join catalog.workload_precisions as accepted
    on accepted.workload_id = ranked.workload_id and accepted.precision <> ranked.precision
    and precision_class(accepted.precision) = precision_class(ranked.precision)
inner join listed on listed.workload_id = ranked.workload_id
where ranked.as_of = ? and not exists (
    select 1 from catalog.workload_precisions as named
    where named.workload_id = ranked.workload_id and named.precision = ranked.precision)
order by ranked.workload_id, ranked_precision, listed_precision
"""


def _precision_aliases(con: duckdb.DuckDBPyConnection, as_of: dt.date) -> dict[str, dict]:
    """Workload id -> the precisions it lists and the ranked precisions that count as one of them (fp16 as bf16), for
    the one sentence of its page that says so; none where every ranked precision is listed by name."""
    aliases: dict[str, dict] = {}
    for r in fetch_dicts(con, PRECISION_ALIASES_SQL, [as_of]):
        aliases.setdefault(r["workload_id"], {"listed": r["listed_precisions"], "aliases": []})["aliases"].append(r)
    return aliases


def _excluded(con: duckdb.DuckDBPyConnection, as_of: dt.date) -> dict[str, tuple[int, list[list[str]], dict]]:
    """Each workload's excluded candidates (workload id -> a tuple): how many, the rows of its Excluded table (each
    reason with the offers it excludes, at most EXCLUSION_REASONS_LISTED reasons and EXCLUDED_OFFERS_LISTED offers
    each, in the order of reason, then offer), and what the table leaves out. Offers that read alike (one instance type
    in one region on one pricing term, at one precision: reserved terms of other lengths, say) are named once, with
    their number; a name stands for all of its candidates (a training offer may be excluded at several chip counts)."""
    reasons: dict[str, list[dict]] = {}
    for r in fetch_dicts(con, """
            with named as (
                select workload_id, exclusion_reason,
                       concat_ws(' ', cloud, instance_type, region, pricing_term) as offer,
                       nullif(precision, '') as precision, count(*) as candidates, count(distinct offer_id) as offers,
                       min((offer_id, precision)) as first
                from marts.excluded_candidates where as_of = $as_of
                group by workload_id, exclusion_reason, offer, precision
            )
            select workload_id, exclusion_reason, sum(candidates) as candidates, count(*) as labels,
                   any_value(reason_offers) as offers, max(offers) as most_offers_a_label,
                   list(offer || coalesce(' (' || nullif(concat_ws(', ', precision, case when offers > 1
                                                                        then offers || ' offers' end), '') || ')', '')
                        order by first)
                       [1:$offers_listed] as listed
            from named
            inner join (select workload_id, exclusion_reason, count(distinct offer_id) as reason_offers
                        from marts.excluded_candidates where as_of = $as_of group by all) using (workload_id,
                                                                                               exclusion_reason)
            group by workload_id, exclusion_reason order by workload_id, exclusion_reason""",
            {"as_of": as_of, "offers_listed": EXCLUDED_OFFERS_LISTED}):
        reasons.setdefault(r["workload_id"], []).append(r)
    found = {}
    for workload_id, mine in reasons.items():
        mine.sort(key=lambda r: _figures_as_numbers(r["exclusion_reason"]))
        listed = mine[:EXCLUSION_REASONS_LISTED]
        rows = [[r["exclusion_reason"], _excluded_offers(r)] for r in listed]
        left_out = mine[EXCLUSION_REASONS_LISTED:]
        found[workload_id] = (int(sum(r["candidates"] for r in mine)), rows,
                              {"reasons": len(left_out), "candidates": int(sum(r["candidates"] for r in left_out)),
                               "offers_cut": any(r["labels"] > len(r["listed"]) for r in listed)})
    return found


def _excluded_offers(reason: dict) -> str:
    """A reason's cell of the Excluded table: its offers' names, or, past EXCLUDED_OFFERS_LISTED, their number (and
    their names', where offers share one), the first names and how many names more."""
    more = reason["labels"] - len(reason["listed"])
    if not more:
        return ", ".join(reason["listed"])
    # "and N more" counts names, and a name is not always an offer: offers that read alike share one ("(2 offers)" in
    # it), and an offer excluded at two precisions has two. Unless every name is one offer (as many names as offers,
    # none of them several), the cell says how many names there are
    names_are_offers = reason["labels"] == reason["offers"] and reason["most_offers_a_label"] == 1
    under = "" if names_are_offers else f" under {count(reason['labels'])} names"
    return (f"{plural(reason['offers'], 'offer')}{under}, the first: {', '.join(reason['listed'])}, "
            f"and {count(more)} more")


_FIGURE = re.compile(r"(\d[\d,]*(?:\.\d+)?)")


# The measured MLPerf Training rows of a date trained at another precision class than their workload asks (the class
# as the models compare it, precision_class in sql/macros.sql: fp16 counts as bf16), with the precision models.yaml
# declares their submission trained at (trained_at). An own run's precision is the run's own: not among them.
TRAINED_AT_ANOTHER_PRECISION_SQL = """
    select rankings.candidate_id, rankings.precision
    from marts.rankings as rankings
    inner join catalog.workloads as workloads using (workload_id)
    where rankings.as_of = ? and rankings.basis = 'measured' and rankings.precision is not null
        and starts_with(rankings.benchmark_label, 'MLPerf Training ')
        and precision_class(rankings.precision) <> precision_class(workloads.training_precision)"""


def trained_at_another_precision(con: duckdb.DuckDBPyConnection, as_of: dt.date) -> dict[str, str]:
    """TRAINED_AT_ANOTHER_PRECISION_SQL's rows: candidate id -> the precision it was measured at."""
    return dict(con.execute(TRAINED_AT_ANOTHER_PRECISION_SQL, [as_of]).fetchall())


def trained_at_sides(decision: dict, trained_otherwise: dict[str, str]) -> list[tuple[str, str]]:
    """The pick and runner-up of `decision` that are MLPerf Training results measured at another precision class than
    the one the workload asks, as ("pick" or "runner-up", precision): `trained_otherwise` is
    `trained_at_another_precision`."""
    found = [(word, trained_otherwise.get(decision.get(f"{side}_candidate_id")))
             for side, word in (("pick", "pick"), ("runner_up", "runner-up"))]
    return [(word, precision) for word, precision in found if precision]


def _figures_as_numbers(text: str) -> tuple:
    """`text` to sort by, its figures as numbers: "needs 3,453 h" before "needs 15,480 h" (as text, 15,480 came
    first), "need 5 chips" before "need 10 chips"."""
    parts = _FIGURE.split(text)
    return tuple((word, float(figure.replace(",", ""))) for word, figure in zip(parts[::2], [*parts[1::2], "-1"],
                                                                               strict=True))


def _offer_coverage(con: duckdb.DuckDBPyConnection, as_of: dt.date) -> list[list[str]]:
    """Per accelerator family and cloud: offers ranked for at least one workload, offers every workload excluded
    (or none could use), and listings whose hardware is not known."""
    rows = con.execute("""
        with ranked as (select distinct offer_id from marts.rankings where as_of = $as_of),
        priced as (
            select coalesce(accelerators.family, 'unknown') as family, offers.cloud,
                   offers.offer_id in (select offer_id from ranked) as is_ranked
            from marts.offers as offers
            left join catalog.accelerators as accelerators using (accelerator_id)
            where offers.as_of = $as_of
        ),
        counted as (
            select family, cloud, count(*) filter (where is_ranked) as ranked,
                   count(*) filter (where not is_ranked) as excluded, 0 as unknown
            from priced group by all
            union all
            select 'unknown', cloud, 0, 0, count(*) from marts.unknown_offers where as_of = $as_of group by all
        )
        select family, cloud, sum(ranked), sum(excluded), sum(unknown) from counted group by family, cloud
        order by family = 'unknown', family, cloud""", {"as_of": as_of}).fetchall()
    return [[family, cloud, count(int(r)), count(int(e)), count(int(u))] for family, cloud, r, e, u in rows]


# What a workload's energy figures assume, under its Full ranking: the facility PUE and (serving) the share of TDP a
# chip draws, as catalog.family_defaults declares them for the families of its ranked rows that use them (TDP rows;
# MLPerf power rows take the PUE alone), and how many rows are on another basis (a site's declared power, none)
ENERGY_BASES_SQL = """
    select rankings.workload_id, accelerators.family, defaults.pue, defaults.serving_load_factor,
           coalesce(serving.energy_basis, case when training.energy_usd is not null then 'site'
                                               when training.energy_kwh is not null then 'tdp' end) as energy_basis,
           count(*) as rows
    from marts.rankings as rankings
    inner join catalog.accelerators as accelerators using (accelerator_id)
    inner join catalog.family_defaults as defaults on defaults.family = accelerators.family
    left join marts.training_costs as training using (as_of, candidate_id)
    left join marts.inference_costs as serving using (as_of, candidate_id)
    where rankings.as_of = ?
    group by all order by all"""


def _grouped(rows: list[dict], column: str) -> list[dict]:
    """One declared figure of family_defaults (written as the energy labels write it, 1.2) with the families that
    declare it, largest figure first: [{"value": "1.2", "families": ["gpu", "trainium"]}, ...]."""
    by_value: dict[float, list[str]] = {}
    for r in rows:
        families = by_value.setdefault(r[column], [])
        if r["family"] not in families:
            families.append(r["family"])
    return [{"value": f"{value:g}", "families": families} for value, families in sorted(by_value.items(), reverse=True)]


def _energy_bases(con: duckdb.DuckDBPyConnection, as_of: dt.date) -> dict[str, dict]:
    """Each workload's energy basis (workload id -> a dict): the PUE of the families whose rows use a declared one
    (TDP and MLPerf power rows), the serving load factor of those with TDP rows, and the rows on a site's own power,
    measured power and none."""
    found: dict[str, list[dict]] = {}
    for r in fetch_dicts(con, ENERGY_BASES_SQL, [as_of]):
        found.setdefault(r["workload_id"], []).append(r)
    return {workload_id: {
        "pue": _grouped([r for r in rows if r["energy_basis"] in ("tdp", "measured")], "pue"),
        "load_factor": _grouped([r for r in rows if r["energy_basis"] == "tdp"], "serving_load_factor"),
        **{basis: sum(r["rows"] for r in rows if r["energy_basis"] == basis) for basis in ("tdp", "measured", "site")},
        "none": sum(r["rows"] for r in rows if r["energy_basis"] is None),
    } for workload_id, rows in found.items()}


# The Full ranking table's columns that marts.rankings does not hold, from the workload kind's cost mart: the CSV
# beside a page carries them after every column of marts.rankings (energy from: energy_basis and power_as_of), and
# what each row's energy figure assumes, in words (energy_label), which the page says once under the table
PAGE_COST_COLUMNS = {
    "training": ("training_costs", ["energy_kwh", "energy_label"]),
    "inference": ("inference_costs", ["monthly_usd", "provisioned_kwh_per_month", "kwh_per_million_tokens",
                                      "kwh_per_million_successful_requests", "tokens_per_s_per_watt", "energy_basis",
                                      "power_as_of", "energy_label"]),
}


def ranking_csv(con: duckdb.DuckDBPyConnection, as_of: dt.date, workload_id: str, kind: str) -> str:
    """The full ranking of one workload as CSV, in the page's order: every column of marts.rankings, then those of
    the page's Full ranking table that come from the cost mart (PAGE_COST_COLUMNS)."""
    mart, columns = PAGE_COST_COLUMNS[kind]
    return csv_text(relations.fetch_frame(
        con, f"select rankings.*, {', '.join(f'costs.{c}' for c in columns)} from marts.rankings as rankings "
             f"left join marts.{mart} as costs using (as_of, candidate_id) "
             "where rankings.as_of = ? and rankings.workload_id = ? "
             "order by rankings.outcome_rank, rankings.usd_per_chip_hour, rankings.candidate_id", [as_of, workload_id]))


def _extra_cost(decision: dict | None) -> str:
    """What picking the cheapest chip-hour costs more per outcome, for the index's workload table; not settled where its
    error band overlaps the pick's (marts.decisions chip_hour_pick_may_cost_less), as the Decision says."""
    if decision is None:
        return "—"
    if decision["is_chip_hour_pick_same_offer"]:
        return "nothing (same offer)"
    unsettled = "; too close to call: it may be cheaper" if decision.get("chip_hour_pick_may_cost_less") else ""
    return f"{signed_usd(decision['chip_hour_pick_extra_usd'])} ({ratio(decision['chip_hour_pick_ratio'])}{unsettled})"


# The dates of the rows each source's load put before the models (its used run's landed rows, a stale or reused
# source's included): ops.source_loads keeps the newest file's alone (data_as_of), while a source of several files
# dated apart prices some offers from its oldest (azure_retail: six files, 2026-07-30 to 2026-09-27)
DATA_DATES_SQL = f"""
    select loads.source_id, min(landed.data_as_of) as oldest, max(landed.data_as_of) as newest
    from ops.source_loads as loads
    inner join ({" union all ".join(f"select source_id, run_id, data_as_of from raw.{t}" for t in RAW_TABLES)})
        as landed
        on landed.source_id = loads.source_id and landed.run_id = loads.used_run_id
    where loads.as_of = ?
    group by loads.source_id"""


def _data_as_of(load: dict, dates: dict[str, tuple]) -> str:
    """A source's data date for the index's Sources table: the range of its landed rows' dates where they differ
    ("2026-07-30 to 2026-09-27"), else the one date; the load's own (its newest file's) where no row is kept."""
    oldest, newest = dates.get(load["source_id"], (None, None))
    if oldest is None:
        return str(load["data_as_of"] or "—")
    return str(oldest) if oldest == newest else f"{oldest} to {newest}"


def _source_status(load: dict) -> str:
    if load["status"] != "stale":
        return load["status"]
    return f"stale, {last_loaded(load['stale_since'])}"  # not its data's date: the next column


def _quarantine_groups(rows: list[dict]) -> list[dict]:
    """ops.quarantine counted by source, expectation and rejected value, most frequent first."""
    groups: dict[tuple, dict] = {}
    for r in rows:
        key = (r["source_id"], r["expectation"], r["column_name"], r["reason"])
        group = groups.setdefault(key, {"source_id": key[0], "expectation": key[1], "column_name": key[2],
                                        "reason": key[3] or "no reason declared", "rows": 0, "top_values": []})
        group["rows"] += r["rows"]
        group["top_values"].append({"value": {"": "(empty)", None: "(missing)"}.get(r["value"], r["value"]),
                                "rows": r["rows"]})
    ordered = sorted(groups.values(), key=lambda g: (-g["rows"], g["source_id"], g["expectation"]))
    for g in ordered:
        g["top_values"].sort(key=lambda v: (-v["rows"], v["value"]))
        rest = g["top_values"][QUARANTINE_VALUES_LISTED:]
        g["top_values"] = g["top_values"][:QUARANTINE_VALUES_LISTED]
        g["more_values"], g["more_rows"] = len(rest), sum(v["rows"] for v in rest)
    return ordered


def render(con: duckdb.DuckDBPyConnection, as_of: dt.date) -> dict[str, str | bytes]:
    """File name (relative to the report folder) -> Markdown, CSV text or chart image, for the run at `as_of`."""
    workloads = fetch_dicts(con, "select * from catalog.workloads order by workload_id")
    # each workload's first candidates (what its page lists: its Top table and Full ranking), and how many it ranked
    rankings = fetch_dicts(con, """
        select * from marts.rankings where as_of = ?
        qualify row_number() over (partition by workload_id order by outcome_rank, usd_per_chip_hour, candidate_id)
            <= ?
        order by workload_id, outcome_rank, usd_per_chip_hour, candidate_id""",
        [as_of, max(RANKING_ROWS_LISTED, TOP_ROWS)])
    # each workload's ranked candidates, and those dearer per chip-hour and cheaper per outcome (its page lists
    # REVERSALS_LISTED of them)
    ranked_counts = {workload_id: (ranked, reversals) for workload_id, ranked, reversals in con.execute(
        "select workload_id, count(*), count(*) filter (where is_reversal) from marts.rankings where as_of = ? "
        "group by all", [as_of]).fetchall()}
    bases = fetch_dicts(con, "select distinct workload_id, family, basis from marts.rankings where as_of = ?", [as_of])
    reversals, utilization = reversal_pairs(con, as_of), _utilization(con, as_of, workloads)
    exclusions, precision_aliases = _excluded(con, as_of), _precision_aliases(con, as_of)
    energy_bases = _energy_bases(con, as_of)
    decisions = {d["workload_id"]: d for d in fetch_dicts(
        con, "select * from marts.decisions where as_of = ?", [as_of])}
    api_comparisons: dict[str, list[dict]] = {}
    for a in fetch_dicts(con, "select * from marts.api_comparisons where as_of = ? "
                              "order by workload_id, api_usd_per_hour, cloud, region, api_model", [as_of]):
        api_comparisons.setdefault(a["workload_id"], []).append(a)
    run = fetch_dicts(con, "select * from ops.runs where as_of = ?", [as_of])
    listed_ids = [r["candidate_id"] for r in rankings]
    training_costs, inference_costs = ({r["candidate_id"]: r for r in fetch_dicts(
        con, f"select * from marts.{mart} where as_of = ? and candidate_id in (select unnest(?))", [as_of, listed_ids])}
        for mart in ("training_costs", "inference_costs"))
    cpu_baselines = {b["workload_id"]: b for b in fetch_dicts(
        con, "select * from marts.cpu_baselines where as_of = ?", [as_of])}
    loads = fetch_dicts(con, "select * from ops.source_loads where as_of = ? order by source_id", [as_of])
    data_dates = {source_id: (oldest, newest) for source_id, oldest, newest in con.execute(
        DATA_DATES_SQL, [as_of]).fetchall()}
    # a price whose source this run could not refresh is its last good load's: said beside it and on a pick
    stale = {r["source_id"]: r for r in loads if r["status"] == "stale"}
    for r in rankings:
        r["price_stale"] = r["price_source_id"] in stale
    picks = {r["candidate_id"]: r for r in rankings if r["price_stale"]}
    for d in decisions.values():
        pick = picks.get(d["pick_candidate_id"])
        d["pick_price_stale"] = pick and (pick["price_source_id"], stale[pick["price_source_id"]]["stale_since"])
    for a in (a for compared in api_comparisons.values() for a in compared):  # the Hosted API's compared offer too
        a["self_hosted_price_stale"] = picks.get(a["self_hosted_candidate_id"]) and picks[
            a["self_hosted_candidate_id"]]["price_source_id"]
    # the precision a training workload asks: said beside a measured pick or runner-up whose benchmark declares none,
    # and beside an MLPerf Training one measured at another precision class, the one models.yaml declares its
    # submission trained at (trained_at_another_precision)
    asked = {w["workload_id"]: w["training_precision"] for w in workloads}
    trained_otherwise = trained_at_another_precision(con, as_of)
    for d in decisions.values():
        d["asked_precision"] = asked.get(d["workload_id"])
        d["trained_at_sides"] = trained_at_sides(d, trained_otherwise)
    # a rejected value can be of any length (a 200,000-character one made an index of 2 MB): cut in the warehouse
    quarantined = fetch_dicts(con, f"""
        select source_id, expectation, column_name, reason, {cut_sql('unexpected_value')} as value, rows
        from (select source_id, expectation, column_name, reason, unexpected_value, count(*) as rows
              from ops.quarantine where as_of = ? group by all)""", [as_of])
    changes = fetch_dicts(con, "select * from marts.changes where as_of = ? order by change_kind, workload_id, subject",
                          [as_of])
    # the run this one is compared with, by the rule the changes mart uses
    previous_as_of = con.execute("select previous_as_of from intermediate.int_runs_compared").fetchall()[0][0]
    previous_tracked = previous_as_of is not None and con.execute(
        "select count(*) from marts.rank_history where as_of = ?", [previous_as_of]).fetchall()[0][0] > 0
    best_changes = [c for c in changes if c["change_kind"] == "best_offer_changed"]
    # what every page says at its top: which run, and the sources stale past their limit (the run failed)
    head = {"run_id": run[0]["run_id"] if run else None,
            "stale_past_limit": run[0]["stale_past_limit"] if run else None,
            "stale_sources": sorted(stale)}
    common = {"as_of": as_of.isoformat(), **head,
              "previous_as_of": previous_as_of, "previous_tracked": previous_tracked, "changes_listed": CHANGES_LISTED,
              "other_changes": [c for c in changes if c["change_kind"] != "best_offer_changed"]}

    pages, _goals = estimates_page.render(con, as_of, head)
    offer_pages, offer_counts = offers_page.render(con, as_of, head)
    pages |= offer_pages
    workload_rows = []
    for w in workloads:
        workload_id = w["workload_id"]
        ranking = [r for r in rankings if r["workload_id"] == workload_id]
        ranked, reversals_found = ranked_counts.get(workload_id, (0, 0))
        costs = training_costs if w["kind"] == "training" else inference_costs
        excluded, excluded_rows, excluded_left_out = exclusions.get(workload_id, NOTHING_EXCLUDED)
        cpu_baseline = cpu_baselines.get(workload_id)
        page = {"w": w, "ranking": ranking, "ranked": ranked, "excluded": excluded, "excluded_rows": excluded_rows,
                "excluded_left_out": excluded_left_out, "offers_listed": EXCLUDED_OFFERS_LISTED,
                **common, "cpu_baseline": cpu_baseline,
                "precisions": precision_aliases.get(workload_id),
                "cpu_label": OUTCOME_LABELS.get(cpu_baseline["outcome_metric"]) if cpu_baseline else None,
                "best_changes": [c for c in best_changes if c["workload_id"] == workload_id]}
        # a market change the page's best-offer line already names (its reason) is not counted again among the rest
        named = {s for c in page["best_changes"] for s in c["reason_subjects"] or ()}
        page["other_changes"] = [c for c in common["other_changes"] if c["subject"] not in named]
        page |= {"hosted_apis": api_comparisons.get(workload_id, []), "api_ranges_listed": API_RANGES_LISTED}
        if ranking:
            listed = ranking[:RANKING_ROWS_LISTED]
            headers, rows = (_training_rows(listed, costs) if w["kind"] == "training"
                             else _inference_rows(listed, costs, w["is_offline"]))
            workload_charts = charts.workload_charts(con, as_of, workload_id)
            pages |= {c.file_name: c for c in workload_charts}  # their PNGs at the end: workers may draw them
            pages[f"{workload_id}.csv"] = ranking_csv(con, as_of, workload_id, w["kind"])
            best_costs = costs.get(ranking[0]["candidate_id"], {})
            page |= {
                "label": OUTCOME_LABELS[ranking[0]["outcome_metric"]], "csv_name": f"{workload_id}.csv",
                "decision": decisions[workload_id], "top": ranking[:TOP_ROWS], "top_rows": _top_rows(ranking),
                "charts": workload_charts, "reversals": reversals.get(workload_id, []),
                "reversals_found": reversals_found,
                "utilization": utilization.get(workload_id),
                "lifetime": best_costs if best_costs.get("lifetime_usd") is not None
                and best_costs.get("training_usd") is not None else None,
                "basis_by_family": _basis_by_family([b for b in bases if b["workload_id"] == workload_id]),
                "full_headers": headers, "full_rows": rows, "listed": len(listed),
                "energy": energy_bases.get(workload_id),
            }
        pages[f"{workload_id}.md"] = MARKDOWN.get_template("workload.md.j2").render(page)

        decision = decisions.get(workload_id)
        cheapest_hour = (f"{decision['chip_hour_pick_cloud']} {decision['chip_hour_pick_instance_type']} "
                         f"({decision['chip_hour_pick_pricing_term']}, {usd(decision['chip_hour_pick_usd_per_chip_hour'])})"
                         if decision else "—")
        workload_rows.append([
            link(workload_id, f"{workload_id}.md"), w["kind"],
            OUTCOME_LABELS[decision["outcome_metric"]] if decision else "—",
            f"{decision['pick_cloud']} {decision['pick_instance_type']} ({decision['pick_pricing_term']}, "
            f"{decision['pick_accelerator_id']})" if decision else "no candidate",
            usd(decision["pick_outcome_value"]) if decision else "—", decision["pick_basis"] if decision else "—",
            cheapest_hour, _extra_cost(decision),
        ])

    pages["index.md"] = MARKDOWN.get_template("index.md.j2").render(
        **common, best_changes=best_changes, pick_errors=estimates_page.pick_errors(con, as_of),
        min_comparisons=estimates_page.BAND_MIN_COMPARISONS,
        workloads=[{"workload_id": w["workload_id"], "decision": decisions.get(w["workload_id"]),
                    "precisions": precision_aliases.get(w["workload_id"])} for w in workloads],
        run=run[0] if run else None,
        stale_loads=[{"source_id": r["source_id"], "status_text": _source_status(r)} for r in loads
                     if r["status"] == "stale"],
        reused_loads=[{"source_id": r["source_id"], "run_id": r["reused_from"]} for r in loads
                      if r.get("reused_from")],
        workload_rows=workload_rows, **offer_counts,
        coverage_rows=_offer_coverage(con, as_of),
        source_rows=[[r["source_id"], r["kind"], _source_status(r), _data_as_of(r, data_dates), count(r["files"]),
                      count(r["rows_in"]), count(r["rows_landed"]), count(r["rows_quarantined"]), r["error"] or "—"]
                     for r in loads],
        quarantine=_quarantine_groups(quarantined))
    return {name: content.image if isinstance(content, Chart) else content for name, content in pages.items()}
