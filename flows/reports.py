"""Markdown reports from the marts: an index and one page per workload with its ranking table."""

from __future__ import annotations

import datetime as dt

import duckdb

from flows.warehouse import fetch_dicts

OUTCOME_LABELS = {
    "completed_run_usd": "completed-run USD",
    "usd_per_million_tokens": "USD per million tokens",
    "usd_per_million_successful_requests": "USD per million successful requests",
}
BASIS_NOTES = {
    "measured": "a benchmark of this accelerator on this task",
    "scaled": "a benchmark or published figure of this accelerator, scaled to the workload",
    "estimated": "the chip's specs with declared efficiencies (catalogs/accelerators.yaml family_defaults)",
}
DERIVED_NOTE = (
    "MLPerf figures on this page are derived from MLPerf, not an official MLPerf result: hweval combines "
    "published results with public prices."
)


def usd(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.2f}" if abs(value) >= 10 else f"{value:,.3f}"


def num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def percent(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value * 100:.1f}%" if value < 0.1 else f"{value * 100:.0f}%"


def _table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _offer(r: dict) -> str:
    return f"{r['cloud']} {r['instance_type']}"


def _where(r: dict) -> str:
    return f"{r['cloud']} / {r['region']}"


def chip_hours(r: dict) -> float:
    return r["chips"] * r["time_to_train_minutes"] / 60


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _reversal_lines(ranking: list[dict], metric_label: str, limit: int = 5) -> list[str]:
    """Plain-language pairs where a candidate dearer per chip-hour is cheaper per outcome."""
    lines = []
    for better in sorted(ranking, key=lambda r: r["outcome_rank"]):
        if not better["is_reversal"]:
            continue
        beaten = [w for w in ranking
                  if w["outcome_value"] > better["outcome_value"] and w["usd_per_chip_hour"] < better["usd_per_chip_hour"]]
        worse = min(beaten, key=lambda w: (w["usd_per_chip_hour"], w["outcome_value"]))
        hour_ratio = better["usd_per_chip_hour"] / worse["usd_per_chip_hour"]
        outcome_ratio = better["outcome_value"] / worse["outcome_value"]
        reason = ""
        if better["time_to_train_minutes"] and worse["time_to_train_minutes"]:
            digits = 0 if min(chip_hours(better), chip_hours(worse)) >= 100 else 1
            reason = (f"; the run takes {num(chip_hours(better), digits)} chip-hours ({int(better['chips'])} chips x "
                      f"{num(better['time_to_train_minutes'])} min) against {num(chip_hours(worse), digits)} "
                      f"({int(worse['chips'])} x {num(worse['time_to_train_minutes'])} min)")
        elif better.get("utilization") is not None and worse.get("utilization") is not None and (
                better["utilization"] > 1.5 * worse["utilization"]):
            reason = (f"; whole instances are sized for the peak, and it runs at {percent(better['utilization'])} "
                      f"utilization ({plural(better['accelerator_count'], 'chip')} an instance) against "
                      f"{percent(worse['utilization'])} ({worse['accelerator_count']} chips an instance): the idle "
                      f"capacity is paid for")
        elif better["tokens_per_s_per_chip"] and worse["tokens_per_s_per_chip"]:
            reason = (f"; each chip produces {num(better['tokens_per_s_per_chip'], 0)} tokens/s against "
                      f"{num(worse['tokens_per_s_per_chip'], 0)}")
        lines.append(
            f"- **{_offer(better)}** ({better['region']}, {better['pricing_term']}, {better['accelerator_count']} x "
            f"{better['accelerator_id']}) costs {hour_ratio:.2f}x as much per chip-hour as **{_offer(worse)}** "
            f"({worse['region']}, {worse['pricing_term']}, {usd(better['usd_per_chip_hour'])} vs "
            f"{usd(worse['usd_per_chip_hour'])} USD) "
            f"but {outcome_ratio:.2f}x as much per outcome ({usd(better['outcome_value'])} vs "
            f"{usd(worse['outcome_value'])} {metric_label}){reason}. It beats "
            f"{plural(better['reversals'], 'candidate')} that {'is' if better['reversals'] == 1 else 'are'} "
            f"cheaper per chip-hour."
        )
        if len(lines) == limit:
            break
    return lines


def _training_table(ranking: list[dict], costs: dict[str, dict], label: str) -> str:
    headers = ["rank", "offer", "accelerator x count", "cloud / region", "term", "USD per chip-hour",
               "chip-hour rank", "chips", "time to train", label, "energy (kWh)", "basis",
               "price source (as of)", "benchmark or assumption (as of)"]
    rows = []
    for r in ranking:
        c = costs.get(r["candidate_id"], {})
        minutes = r["time_to_train_minutes"]
        duration = f"{num(minutes)} min" if minutes < 600 else f"{num(minutes / 60, 0)} h"
        rows.append([
            str(r["outcome_rank"]), _offer(r), f"{r['accelerator_id']} x {r['accelerator_count']}", _where(r),
            r["pricing_term"], usd(r["usd_per_chip_hour"]), str(r["chip_hour_rank"]),
            f"{int(r['chips'])} ({plural(r['instances'], 'instance')})", duration, usd(r["outcome_value"]),
            num(c.get("energy_kwh"), 0), r["basis"], f"{r['price_source_id']} ({r['price_as_of']})",
            r["benchmark_label"] + (f" ({r['benchmark_as_of']})" if r["benchmark_as_of"] else ""),
        ])
    return _table(headers, rows)


def _inference_table(ranking: list[dict], costs: dict[str, dict], label: str, offline: bool) -> str:
    headers = ["rank", "offer", "accelerator x count", "cloud / region", "term", "USD per chip-hour",
               "chip-hour rank", "precision", "tokens/s per chip"]
    headers += [] if offline else ["instances", "utilization", "USD per month"]
    headers += [label, "basis", "price source (as of)", "benchmark or estimate (as of)"]
    rows = []
    for r in ranking:
        c = costs.get(r["candidate_id"], {})
        row = [str(r["outcome_rank"]), _offer(r), f"{r['accelerator_id']} x {r['accelerator_count']}", _where(r),
               r["pricing_term"], usd(r["usd_per_chip_hour"]), str(r["chip_hour_rank"]), r["precision"],
               num(r["tokens_per_s_per_chip"], 0)]
        if not offline:
            row += [str(c.get("instances")), percent(c.get("utilization")), usd(c.get("monthly_usd"))]
        row += [usd(r["outcome_value"]), r["basis"], f"{r['price_source_id']} ({r['price_as_of']})",
                r["benchmark_label"] + (f" ({r['benchmark_as_of']})" if r["benchmark_as_of"] else "")]
        rows.append(row)
    return _table(headers, rows)


def _basis_lines(ranking: list[dict]) -> list[str]:
    """Per accelerator family, the bases its candidates rest on; estimated-only families are called out."""
    by_family: dict[str, set[str]] = {}
    for r in ranking:
        by_family.setdefault(r["family"], set()).add(r["basis"])
    lines = []
    for family in sorted(by_family):
        bases = sorted(by_family[family], key=["measured", "scaled", "estimated"].index)
        text = f"- **{family}**: " + ", ".join(f"{b} ({BASIS_NOTES[b]})" for b in bases)
        if bases == ["estimated"]:
            text += f". No benchmark of this task exists for {family}: its figures are estimates."
        lines.append(text)
    return lines


def render_workload(workload: dict, ranking: list[dict], costs: dict[str, dict], excluded: list[dict],
                    as_of: dt.date, changed: list[str] = ()) -> str:
    out = [f"# {workload['workload_id']}: {workload['title']}", "", *changed, workload["description"], ""]
    if not ranking:
        out += ["No candidate could be priced for this workload in this run.", ""]
    else:
        metric = ranking[0]["outcome_metric"]
        label = OUTCOME_LABELS[metric]
        benchmark = (f"Benchmark: {workload['benchmark_task']}"
                     + (f" ({workload['benchmark_scenario']})" if workload["benchmark_scenario"] else "") + ". "
                     if workload["benchmark_task"] else "")
        out += [
            f"As of {as_of.isoformat()}. Ranked by **{label}** (lower is better); beside it, the rank by USD per "
            f"chip-hour, the metric this ranking replaces. {benchmark}"
            f"{plural(len(ranking), 'candidate')}, {plural(len(excluded), 'exclusion')}.",
            "",
        ]
        if workload["kind"] == "training":
            out += [_training_table(ranking, costs, label), ""]
        else:
            out += [_inference_table(ranking, costs, label, workload["is_offline"]), ""]
        out += ["## Where the hourly price disagrees", ""]
        out += _reversal_lines(ranking, label) or [
            "The ranking by outcome agrees with the ranking by USD per chip-hour for this workload."]
        if workload["kind"] == "inference" and not workload["is_offline"]:
            idle = [r for r in ranking if (costs.get(r["candidate_id"], {}).get("utilization") or 1) < 0.25]
            out += ["", "## Utilization", "",
                    f"Instances are whole and sized for the peak ({num(workload['mean_requests_per_s'], 0)} requests/s "
                    f"on average, x{num(workload['peak_factor'], 1)} at the peak), so capacity beyond the load is paid "
                    f"for idle. {plural(len(idle), 'candidate')} of {len(ranking)} run below 25% utilization"
                    + (": for this traffic their instances are mostly idle." if idle else ".")]
            one_chip = [r for r in ranking if r["accelerator_count"] == 1]
            eight_chip = [r for r in ranking if r["accelerator_count"] >= 8 and r["family"] == "gpu"]
            if one_chip and eight_chip and one_chip[0]["outcome_rank"] < eight_chip[0]["outcome_rank"]:
                small, large = one_chip[0], eight_chip[0]
                out += ["", f"The best one-chip offer, **{_offer(small)}** ({small['pricing_term']}, "
                        f"{usd(small['usd_per_chip_hour'])} USD per chip-hour), serves this traffic for "
                        f"{usd(small['outcome_value'])} {label} against {usd(large['outcome_value'])} on the best "
                        f"{large['accelerator_count']}-GPU instance, **{_offer(large)}** ({large['pricing_term']}, "
                        f"{usd(large['usd_per_chip_hour'])} USD per chip-hour), which runs at "
                        f"{percent(large['utilization'])} utilization against {percent(small['utilization'])}."]
            best = costs.get(ranking[0]["candidate_id"], {})
            if best.get("lifetime_usd") is not None and best.get("training_usd") is not None:
                out += ["", f"Lifetime with the best offer: training {usd(best['training_usd'])} USD "
                        f"(cheapest run of {workload['trained_by']}) + {num(workload['months'], 0)} months x "
                        f"{usd(best['monthly_usd'])} USD = {usd(best['lifetime_usd'])} USD; serving is "
                        f"{percent(best['inference_share'])} of it."]
        out += ["", "## Bases", ""] + _basis_lines(ranking)
    if excluded:
        by_reason: dict[str, list[str]] = {}
        for e in excluded:
            offer = f"{_offer(e)} {e['region']} {e['pricing_term']}" + (f" ({e['precision']})" if e["precision"] else "")
            by_reason.setdefault(e["exclusion_reason"], []).append(offer)
        out += ["", "## Excluded", "",
                f"{plural(len(excluded), 'candidate')} cannot run this workload; each reason with the offers it excludes:",
                "", _table(["reason", "offers"], [[reason, ", ".join(offers)] for reason, offers in by_reason.items()])]
    out += ["", f"_{DERIVED_NOTE}_", ""]
    return "\n".join(out)


def _term_label(o: dict) -> str:
    return o["pricing_term"] + (f" ({o['term_detail']})" if o["term_detail"] else "")


def render_offers(offers: list[dict], unknown: list[dict], as_of: dt.date, unmatched: list[dict] = ()) -> str:
    """Every priced term of every offer side by side, the cheapest term per offer, and offers the catalog lacks."""
    by_instance: dict[tuple, list[dict]] = {}
    for o in offers:
        by_instance.setdefault((o["cloud"], o["region"], o["instance_type"]), []).append(o)
    rows = []
    for (cloud, region, instance_type), terms in sorted(by_instance.items()):
        cheapest = min(terms, key=lambda o: (o["usd_per_hour"], o["offer_id"]))
        on_demand = [o for o in terms if o["pricing_term"] == "on_demand"]
        spot = [o for o in terms if o["pricing_term"] == "spot"]
        reserved = sorted((o for o in terms if o["pricing_term"] == "reserved"), key=lambda o: o["usd_per_hour"])
        saving = (f"{1 - cheapest['usd_per_hour'] / on_demand[0]['usd_per_hour']:.0%}"
                  if on_demand and cheapest is not on_demand[0] else "—")
        rows.append([
            f"{cloud} {instance_type}", region, f"{cheapest['accelerator_id']} x {cheapest['accelerator_count']}",
            usd(on_demand[0]["usd_per_hour"]) if on_demand else "—",
            usd(spot[0]["usd_per_hour"]) if spot else "—",
            f"{usd(reserved[0]['usd_per_hour'])} ({reserved[0]['term_detail']})" if reserved else "—",
            f"**{_term_label(cheapest)}**", usd(cheapest["usd_per_hour"]), usd(cheapest["usd_per_chip_hour"]), saving,
            f"{cheapest['price_source_id']} ({cheapest['price_as_of']})",
        ])
    out = [
        f"# Offers and pricing terms, as of {as_of.isoformat()}", "",
        "Every priced term of every offer side by side (USD per instance-hour; reserved terms amortised: "
        "recurring hourly + upfront fee / term hours), and the cheapest term per offer. A cheaper term is not "
        "always a better buy: spot can be reclaimed (training runs pay a declared rework overhead), a reserved "
        "term is paid whether or not the instance runs. The workload pages rank only the terms each workload "
        "accepts (`pricing_terms` in catalogs/workloads.yaml).", "",
        _table(["offer", "region", "accelerators", "on-demand", "spot", "cheapest reserved", "cheapest term",
                "USD per hour", "USD per chip-hour", "saving vs on-demand", "price source (as of)"], rows)
        if rows else "No offer could be priced in this run.", "",
        "## Offers the catalog does not know", "",
    ]
    if unknown:
        out += [f"{plural(len(unknown), 'listing')} from the price sources {'names' if len(unknown) == 1 else 'name'} instance types (or GCP accelerator "
                "SKUs) that catalogs/instances.yaml does not know: they are landed, not ranked. Add them to the "
                "catalog to rank them.", "",
                _table(["cloud", "region", "instance type or SKU", "term", "price", "unit", "accelerators listed",
                        "price source (as of)", "where"],
                       [[u["cloud"], u["region"], u["instance_type"], u["pricing_term"], usd(u["usd_per_hour"]),
                         u["unit"], u["accelerators_listed"] or "—", f"{u['price_source_id']} ({u['price_as_of']})",
                         u["price_ref"]] for u in unknown])]
    else:
        out += ["Every listed instance type is in the catalog."]
    if unmatched:
        out += ["", "## Price components that matched no SKU", "",
                "These GCP price components (catalogs/instances.yaml `price_components`) matched no SKU landed in "
                "this run, so their instances could not be priced: a typo, or a SKU renamed upstream.", "",
                _table(["instance type", "SKU description prefix"],
                       [[u["instance_type"], u["sku_description_prefix"]] for u in unmatched])]
    return "\n".join(out + ["", f"_{DERIVED_NOTE}_", ""])


CHANGE_HEADINGS = {
    "offer_added": "New offers",
    "offer_removed": "Offers withdrawn",
    "price_moved": "Prices that moved",
    "benchmark_added": "New benchmark results",
    "benchmark_withdrawn": "Benchmark results withdrawn",
    "source_stale": "Sources that turned stale",
    "source_fresh": "Sources fresh again",
    "catalog_changed": "Catalog",
}
CHANGES_LISTED = 8  # lines of one kind of change shown before "and N more"


_MARKDOWN_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*[]|#"} | {"<": "&lt;", ">": "&gt;", "&": "&amp;"})


def md_escape(text: str) -> str:
    """Text from data, safe inside a Markdown line: no emphasis, links, code, table cells or HTML."""
    return text.translate(_MARKDOWN_SPECIAL)


def _ratio(value: float) -> str:
    return f"{value:.2f}x" if value < 10 else f"{value:,.0f}x"


def best_offer_sentence(c: dict) -> str:
    """One line for a person: the workload's new best offer, the old one, why, and what it does to the outcome."""
    label = OUTCOME_LABELS.get(c["unit"], c["unit"] or "outcome")
    if c["offer_id"] is None:
        return f"No candidate for {c['workload_id']} in this run (was {c['previous_label']}): {c['reason_detail']}."
    if c["previous_offer_id"] is None:
        return f"Best for {c['workload_id']} is {c['label']}; the previous run had no candidate."
    text = (f"Best for {c['workload_id']} is now {c['label']} (was {c['previous_label']}): {c['reason_detail']}; "
            f"{label} {usd(c['after_value'])} instead of {usd(c['before_value'])} USD")
    if c["previous_pick_now_value"] is not None:
        text += f" ({c['previous_label']} would now cost {usd(c['previous_pick_now_value'])})"
    return text + "."


def change_sentence(c: dict) -> str:
    """One line for a person for any row of marts.changes."""
    kind = c["change_kind"]
    if kind == "best_offer_changed":
        return best_offer_sentence(c)
    if kind == "offer_added":
        return f"{c['label']}: {usd(c['after_value'])} USD per hour."
    if kind == "offer_removed":
        return f"{c['label']} (was {usd(c['before_value'])} USD per hour)."
    if kind == "price_moved":
        direction = "rose" if c["after_value"] > c["before_value"] else "fell"
        return (f"{c['label']} {direction} {_ratio(c['ratio'])}: {usd(c['before_value'])} to "
                f"{usd(c['after_value'])} USD per hour.")
    return f"{c['label']}."


def render_changes(changes: list[dict], previous_as_of: dt.date | None, workload_id: str | None = None,
                   previous_tracked: bool = True) -> list[str]:
    """The "What changed" section: the index lists every change; a workload page its best offer, then the rest."""
    if previous_as_of is None:
        return ["## What changed", "", "No earlier run in this warehouse to compare with.", ""]
    if not previous_tracked:
        return ["## What changed", "", f"The previous run ({previous_as_of.isoformat()}) was built before hweval "
                "kept price and rank history: there is nothing to compare with yet.", ""]
    out = [f"## What changed since {previous_as_of.isoformat()}", ""]
    best = [c for c in changes if c["change_kind"] == "best_offer_changed"
            and (workload_id is None or c["workload_id"] == workload_id)]
    others = [c for c in changes if c["change_kind"] != "best_offer_changed"]
    if workload_id is not None and not best:
        out += [f"The best offer is the same as on {previous_as_of.isoformat()}."]
    out += [f"- **{md_escape(best_offer_sentence(c))}**" for c in best]
    if not best and not others and workload_id is None:
        out += [f"Nothing changed since {previous_as_of.isoformat()}: the same offers, prices (within the "
                f"threshold), results and best offers."]
    if others and workload_id is not None:
        out += ["", f"{plural(len(others), 'other market change')} since {previous_as_of.isoformat()}: see the "
                f"[index](index.md)."]
    elif others:
        out += ["", "Market changes:", ""]
        for kind, heading in CHANGE_HEADINGS.items():
            of_kind = [c for c in others if c["change_kind"] == kind]
            if not of_kind:
                continue
            shown = [md_escape(change_sentence(c)) for c in of_kind[:CHANGES_LISTED]]
            more = f" … and {len(of_kind) - CHANGES_LISTED} more (marts.changes)" if len(of_kind) > CHANGES_LISTED else ""
            out += [f"- {heading}: " + " ".join(shown) + more]
    return out + [""]


def stale_banner(stale_past_limit: str | None) -> list[str]:
    """A warning at the top of every page when a source has been stale past its limit (the run is marked Failed)."""
    if not stale_past_limit:
        return []
    return ["> **Warning: data stale past its limit.** This run could not refresh "
            + md_escape(stale_past_limit)
            + ". The figures below use the last good data of these sources; the run is marked failed.", ""]


def _source_status(load: dict) -> str:
    if load["status"] != "stale":
        return load["status"]
    return f"stale since {load['stale_since']}" if load["stale_since"] else "stale, no earlier data"


def render(con: duckdb.DuckDBPyConnection, as_of: dt.date) -> dict[str, str]:
    """File name -> Markdown for every page of the run at `as_of`."""
    workloads = fetch_dicts(con, "select * from catalog.workloads order by workload_id")
    rankings = fetch_dicts(con, "select * from marts.rankings where as_of = ? order by workload_id, outcome_rank, "
                          "usd_per_chip_hour, candidate_id", [as_of])
    run = fetch_dicts(con, "select * from ops.runs where as_of = ?", [as_of])
    training_costs = {r["candidate_id"]: r for r in fetch_dicts(
        con, "select * from marts.training_costs where as_of = ?", [as_of])}
    inference_costs = {r["candidate_id"]: r for r in fetch_dicts(
        con, "select * from marts.inference_costs where as_of = ?", [as_of])}
    excluded = fetch_dicts(con, "select * from marts.excluded_candidates where as_of = ? "
                          "order by workload_id, exclusion_reason, offer_id, precision", [as_of])
    loads = fetch_dicts(con, "select * from ops.source_loads where as_of = ? order by source_id", [as_of])
    reasons = fetch_dicts(con, """
        select source_id, expectation, column_name, reason, count(*) as rows, min(unexpected_value) as example
        from ops.quarantine where as_of = ? group by all order by rows desc, source_id, expectation, column_name
        """, [as_of])
    offers = fetch_dicts(con, "select * from marts.offers where as_of = ? order by offer_id", [as_of])
    unknown = fetch_dicts(con, "select * from marts.unknown_offers where as_of = ? "
                          "order by cloud, region, instance_type, pricing_term, price_ref", [as_of])
    unmatched = fetch_dicts(con, "select * from intermediate.int_price_components_unmatched "
                                 "order by instance_type, sku_description_prefix")
    changes = fetch_dicts(con, "select * from marts.changes where as_of = ? order by change_kind, workload_id, subject",
                          [as_of])
    # the run this one is compared with, by the rule the changes mart uses
    previous_as_of = con.execute("select previous_as_of from intermediate.int_runs_compared").fetchall()[0][0]
    previous_tracked = previous_as_of is not None and con.execute(
        "select count(*) from marts.rank_history where as_of = ?", [previous_as_of]).fetchall()[0][0] > 0
    banner = stale_banner(run[0]["stale_past_limit"] if run else None)
    pages: dict[str, str] = {"offers.md": render_offers(offers, unknown, as_of, unmatched)}
    summary = []
    for w in workloads:
        ranking = [r for r in rankings if r["workload_id"] == w["workload_id"]]
        costs = training_costs if w["kind"] == "training" else inference_costs
        pages[f"{w['workload_id']}.md"] = render_workload(
            w, ranking, costs, [e for e in excluded if e["workload_id"] == w["workload_id"]], as_of,
            banner + render_changes(changes, previous_as_of, w["workload_id"], previous_tracked))
        if ranking:
            best = ranking[0]
            cheapest_hour = min(ranking, key=lambda r: (r["chip_hour_rank"], r["outcome_rank"]))
            summary.append([
                f"[{w['workload_id']}]({w['workload_id']}.md)", w["kind"], OUTCOME_LABELS[best["outcome_metric"]],
                f"{_offer(best)} ({best['pricing_term']}, {best['accelerator_id']} x {best['accelerator_count']})",
                usd(best["outcome_value"]), best["basis"],
                f"{_offer(cheapest_hour)} ({cheapest_hour['pricing_term']}, {usd(cheapest_hour['usd_per_chip_hour'])})",
                "yes" if any(r["is_reversal"] for r in ranking) else "no",
            ])
        else:
            summary.append([f"[{w['workload_id']}]({w['workload_id']}.md)", w["kind"], "—", "no candidate", "—", "—",
                            "—", "—"])
    run_line = (f"Run `{run[0]['run_id']}`: {run[0]['rows_in']} rows in, {run[0]['rows_landed']} landed, "
                f"{run[0]['rows_quarantined']} quarantined." if run else "")
    stale = [r for r in loads if r["status"] == "stale"]
    if stale:
        run_line += (" **Stale sources** (could not be read this run; their last good data is used, see Sources): "
                     + ", ".join(f"{r['source_id']} ({_source_status(r)})" for r in stale) + ".")
    index = [
        f"# hweval report, as of {as_of.isoformat()}",
        "",
        *banner,
        *render_changes(changes, previous_as_of, None, previous_tracked),
        "Price per accelerator-hour is the wrong metric: each workload is ranked by the cost of its outcome "
        "(a completed training run, a million tokens), with the rank by USD per chip-hour beside it. "
        "A reversal means a candidate dearer per chip-hour is cheaper per outcome.",
        "",
        run_line,
        "",
        "## Workloads",
        "",
        _table(["workload", "kind", "ranked by", "best offer", "best outcome", "basis", "cheapest per chip-hour",
                "reversal"], summary),
        "",
        "Bases: measured (a benchmark of this accelerator on this task), scaled (a benchmark or published figure "
        "of this accelerator, scaled to the workload), estimated (the chip's specs with declared efficiencies). "
        "An estimate can rank above a measured result on another offer: read the basis before acting on a rank.",
        "",
        "## Offers",
        "",
        f"{plural(len(offers), 'priced offer')} ({', '.join(sorted({o['pricing_term'] for o in offers}))}); "
        f"the cheapest term of each offer and {plural(len(unknown), 'listing')} the catalog does not know: "
        f"[offers.md](offers.md).",
        "",
        "## Sources",
        "",
        _table(["source", "kind", "status", "data as of", "files", "rows in", "landed", "quarantined", "why stale"],
               [[r["source_id"], r["kind"], _source_status(r), str(r["data_as_of"] or "—"), str(r["files"]),
                 str(r["rows_in"]), str(r["rows_landed"]), str(r["rows_quarantined"]), r["error"] or "—"]
                for r in loads]),
        "",
        "## Quarantined rows by reason",
        "",
        _table(["source", "expectation", "column", "rows", "example value", "why it is rejected"],
               [[r["source_id"], r["expectation"], r["column_name"] or "—", str(r["rows"]),
                 {"": "(empty)", None: "(missing)"}.get(r["example"], r["example"]), r["reason"] or "—"]
                for r in reasons])
        if reasons else "No row was quarantined.",
        "",
        "Every rejected row is kept in `ops.quarantine` with the expectation it failed. The Great Expectations "
        "Data Docs of this run's validations, one page per source batch: [data-docs/index.html](data-docs/index.html).",
        "",
        f"_{DERIVED_NOTE}_",
        "",
    ]
    pages["index.md"] = "\n".join(index)
    return pages
