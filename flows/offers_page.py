"""The offers page (offers.md): one row per cloud x instance type at its cheapest term in any region, with that
region's other terms beside it, bounded per cloud; every offer, with every column, in offers.csv beside it; where the
offers' hardware comes from, and the listings whose hardware is not known."""

from __future__ import annotations

import datetime as dt

import duckdb
from markupsafe import Markup

from flows import relations
from flows.formatting import count, cut_sql, md_escape, percent, usd
from flows.report_templates import MARKDOWN, NO_HEAD, STALE_MARK, csv_text
from flows.warehouse import fetch_dicts

# The offers page lists instance types, not offers (the bench's 35,000 offers made a page of 926 KB, one row per
# instance type and region); every offer is in offers.csv and marts.offers, every unknown listing in
# marts.unknown_offers.
OFFER_TYPES_LISTED = 200  # rows of the offers table for one cloud (instance types)
UNKNOWN_LISTINGS_LISTED = 100  # rows of the unknown-hardware table (listings)
UNUSED_PRICES_LISTED = 100  # rows of the table of prices that priced no offer
HARDWARE_NOTES_LISTED = 200  # rows of the table of corrections and listings overridden (instance types)

# one row per instance type: its cheapest term in any region, with that region's other terms beside it
OFFERS_BY_TYPE_SQL = """
    with offers as (
        select * from marts.offers where as_of = $as_of
    ),
    types as (  -- each instance type: its cheapest term in any region, its regions, on-demand's range across them
        select cloud, instance_type, count(distinct region) as regions,
               arg_min(offer_id, (usd_per_hour, offer_id)) as cheapest_id,
               arg_min(region, (usd_per_hour, offer_id)) as cheapest_region,
               min(usd_per_hour) filter (pricing_term = 'on_demand') as on_demand_low,
               max(usd_per_hour) filter (pricing_term = 'on_demand') as on_demand_high
        from offers group by all
    ),
    region_terms as (  -- the terms of the cheapest term's region, side by side, each with where its price comes from
        select types.cheapest_id,
               arg_min(o.offer_id, (o.usd_per_hour, o.offer_id)) filter (o.pricing_term = 'on_demand') as on_demand_id,
               min(o.usd_per_hour) filter (o.pricing_term = 'on_demand') as on_demand,
               min(o.usd_per_hour) filter (o.pricing_term = 'spot') as spot,
               -- structs: arg_min skips a row whose value is null, and a term's detail may be null
               arg_min({'source_id': o.price_source_id, 'as_of': o.price_as_of, 'unverified': o.price_unverified},
                       (o.usd_per_hour, o.offer_id)) filter (o.pricing_term = 'on_demand') as on_demand_source,
               arg_min({'source_id': o.price_source_id, 'as_of': o.price_as_of, 'unverified': o.price_unverified},
                       (o.usd_per_hour, o.offer_id)) filter (o.pricing_term = 'spot') as spot_source,
               arg_min({'usd': o.usd_per_hour, 'detail': o.term_detail, 'source_id': o.price_source_id,
                        'as_of': o.price_as_of, 'unverified': o.price_unverified}, (o.usd_per_hour, o.offer_id))
                   filter (o.pricing_term = 'reserved') as reserved
        from types
        join offers as o on o.cloud = types.cloud and o.instance_type = types.instance_type
            and o.region = types.cheapest_region
        group by types.cheapest_id
    )
    select types.regions, types.on_demand_low, types.on_demand_high, region_terms.*, cheapest.*,
           count(*) over (partition by cheapest.cloud) as cloud_types
    from types
    join region_terms using (cheapest_id)
    join offers as cheapest on cheapest.offer_id = types.cheapest_id
    -- the first of each cloud: a cloud that sells more types than the bound leaves the others their rows
    qualify row_number() over (partition by cheapest.cloud order by cheapest.instance_type) <= $listed
    order by cheapest.cloud, cheapest.instance_type"""


def _offer_type_row(o: dict, stale: frozenset[str] = frozenset()) -> list[str]:
    """One instance type on the offers page: where it is cheapest and on which term, that region's terms, its regions."""
    term = o["pricing_term"] + (f" ({o['term_detail']})" if o["term_detail"] else "")
    saving = (percent(1 - o["usd_per_hour"] / o["on_demand"])
              if o["on_demand"] is not None and o["offer_id"] != o["on_demand_id"] else "—")
    low, high = o["on_demand_low"], o["on_demand_high"]
    across = "—" if o["regions"] == 1 or low is None else usd(low) if low == high else f"{usd(low)} to {usd(high)}"
    return [
        f"{o['cloud']} {o['instance_type']}", f"{o['accelerator_id']} x {o['accelerator_count']}", count(o["regions"]),
        o["region"], usd(o["on_demand"]), usd(o["spot"]),
        _reserved(o["reserved"]),
        Markup(f"**{md_escape(term)}**"), usd(o["usd_per_hour"]), usd(o["usd_per_chip_hour"]), saving, across,
        _price_sources(o, stale),
    ]


# the term columns of an offers-page row, in their order: the term, what the row names it, where its source is
TERM_COLUMNS = [("on_demand", "on-demand", "on_demand_source"), ("spot", "spot", "spot_source"),
                ("reserved", "reserved", "reserved")]


def _price_sources(o: dict, stale: frozenset[str] = frozenset()) -> str:
    """Where each price of an offers-page row comes from: one source and date when they all share it, else each
    term's ("on-demand, reserved: aws_pricing (2026-09-10); spot: aws_spot (2026-11-20)"), UNVERIFIED where
    sources.yaml marks a file so, STALE where the source is in `stale` (this run could not refresh it: its last good
    load's price)."""
    sourced = [(label, o[column]) for _, label, column in TERM_COLUMNS if o[column] is not None]
    if o["pricing_term"] not in [term for term, _, _ in TERM_COLUMNS]:  # the cheapest term has no column (owned, say)
        sourced.append((o["pricing_term"], {"source_id": o["price_source_id"], "as_of": o["price_as_of"],
                                            "unverified": o["price_unverified"]}))
    by_source: dict[str, list[str]] = {}
    for label, source in sourced:
        named = (f"{source['source_id']} ({source['as_of']})" + (", UNVERIFIED" if source["unverified"] else "")
                 + (STALE_MARK if source["source_id"] in stale else ""))
        by_source.setdefault(named, []).append(label)
    if len(by_source) == 1:
        return next(iter(by_source))
    return "; ".join(f"{', '.join(labels)}: {named}" for named, labels in by_source.items())


def _reserved(term: dict | None) -> str:
    """The cheapest reserved term of a region: its amortised price per hour and, when it has one, its detail."""
    if term is None:
        return "—"
    return usd(term["usd"]) + (f" ({term['detail']})" if term["detail"] else "")


def render(con: duckdb.DuckDBPyConnection, as_of: dt.date, head: dict | None = None) -> tuple[dict[str, str], dict]:
    """offers.md and offers.csv (every offer, every column), and what the index says of the offers. `head`: what
    every page says at its top (the run's id, the sources stale past their limit; flows/reports.py)."""
    types = fetch_dicts(con, OFFERS_BY_TYPE_SQL, {"as_of": as_of, "listed": OFFER_TYPES_LISTED})
    [(offers, terms, unknown)] = con.execute("""
        select count(*), coalesce(list(distinct pricing_term order by pricing_term), []),
               (select count(*) from marts.unknown_offers where as_of = $as_of)
        from marts.offers where as_of = $as_of""", {"as_of": as_of}).fetchall()
    # a listing's own text can be of any length: each cell is cut in the warehouse (flows/formatting.py cut_sql)
    unknown_listed = fetch_dicts(con, f"""
        select u.* replace ({cut_sql('u.instance_type')} as instance_type,
                            {cut_sql('u.accelerators_listed')} as accelerators_listed,
                            {cut_sql('u.unknown_reason')} as unknown_reason, {cut_sql('u.price_ref')} as price_ref)
        from marts.unknown_offers as u where u.as_of = ?
        order by u.cloud, u.region, u.instance_type, u.pricing_term, u.price_ref limit ?""",
        [as_of, UNKNOWN_LISTINGS_LISTED])
    # where the priced offers' hardware comes from, and each instance type instances.yaml corrects or a listing
    # disagrees on, once (its offers in every region and term share the note)
    bases = con.execute("""
        select coalesce(nullif(hardware_basis, ''), '—'), count(distinct (cloud, instance_type)) from marts.offers
        where as_of = ? group by all order by 1""", [as_of]).fetchall()
    notes = fetch_dicts(con, f"""
        select cloud, {cut_sql('instance_type')} as instance_type, {cut_sql('note')} as note,
               count(*) over () as instance_types
        from (select cloud, instance_type, arg_max(hardware_note, offer_id) as note from marts.offers
              where as_of = ? and hardware_note <> '' group by all)
        order by cloud, instance_type limit ?""", [as_of, HARDWARE_NOTES_LISTED])
    unmatched = fetch_dicts(con, "select * from intermediate.int_price_components_unmatched "
                                 "order by instance_type, sku_description_prefix")
    unused = fetch_dicts(con, f"select u.* replace ({cut_sql('u.source_ref')} as source_ref) "
                              "from intermediate.int_prices_unused as u "
                              "order by u.cloud, u.instance_type, u.region, u.pricing_term, u.source_ref limit ?",
                         [UNUSED_PRICES_LISTED + 1])
    per_cloud = {o["cloud"]: o["cloud_types"] for o in types}
    head = head or NO_HEAD
    stale = frozenset(head["stale_sources"])
    page = MARKDOWN.get_template("offers.md.j2").render(
        **head, as_of=as_of.isoformat(), offers=offers, types_listed=OFFER_TYPES_LISTED, instance_types=sum(per_cloud.values()),
        clouds_cut=[[cloud, n] for cloud, n in per_cloud.items() if n > OFFER_TYPES_LISTED],
        offer_rows=[_offer_type_row(o, stale) for o in types], unknown=unknown, unknown_listed=len(unknown_listed),
        unknown_rows=[[u["cloud"], u["region"], u["instance_type"], u["pricing_term"], usd(u["usd_per_hour"]),
                       u["unit"], u["accelerators_listed"] or "—", u["unknown_reason"] or "—",
                       f"{u['price_source_id']} ({u['price_as_of']})", u["price_ref"]] for u in unknown_listed],
        hardware={"bases": [[basis, count(n)] for basis, n in bases],
                  "notes": [[n["cloud"], n["instance_type"], n["note"]] for n in notes],
                  "noted": notes[0]["instance_types"] if notes else 0, "notes_listed": HARDWARE_NOTES_LISTED},
        unmatched=unmatched, unmatched_rows=[[u["instance_type"], u["sku_description_prefix"]] for u in unmatched],
        unused_rows=[[f"{u['source_id']}: {u['source_ref']}", u["unused_reason"]] for u in unused[:UNUSED_PRICES_LISTED]],
        unused_more=len(unused) > UNUSED_PRICES_LISTED, unused_listed=UNUSED_PRICES_LISTED)
    every_offer = relations.fetch_frame(con, "select * from marts.offers where as_of = ? "
                                             "order by cloud, instance_type, region, pricing_term, offer_id", [as_of])
    return {"offers.md": page, "offers.csv": csv_text(every_offer)}, {"offers": offers, "terms": terms, "unknown": unknown}
