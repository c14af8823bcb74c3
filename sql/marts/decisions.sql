-- marts.decisions — grain: one row per run x workload that has a ranked candidate. The decision a person reads
-- first: the pick, the runner-up (the best candidate on another offer) and the gap, and what ranking by USD per
-- chip-hour would have picked instead and what that choice costs more per outcome (zero when it is the pick), with its
-- error band and whether that overlaps the pick's (then it may cost less); and
-- whether the error bands of the pick and the runner-up overlap (too close to call), with the candidate whose
-- measurement would settle it; for a spot price taken from the cheapest of several zones, the outcome at the
-- dearest zone and whether the pick would still lead there; and what a pick on reclaimable capacity pays for its
-- reclaims. The cheapest chip-hour is the cheapest of the ranked candidates: the offers cheaper per
-- chip-hour on a term the workload buys that it excludes (a deadline they miss, a model that does not fit) are
-- counted, the cheapest named.
with rankings as (
    select * from marts.rankings
    where as_of = cast(getvariable('as_of') as date)
),

ordered as (
    select
        *,
        -- the same order as the report tables and rank_history.is_pick (outcomes compared on outcome_key)
        row_number() over (partition by workload_id
                           order by outcome_key(outcome_value), usd_per_chip_hour, candidate_id)
            as outcome_order,
        -- what a ranking by the hourly price would pick: the cheapest chip-hour, its best candidate
        row_number() over (partition by workload_id
                           order by usd_per_chip_hour, outcome_key(outcome_value), candidate_id)
            as chip_hour_order
    from rankings
),

picks as (
    select * from ordered where outcome_order = 1
),

runners_up as (
    select
        ordered.*,
        row_number() over (partition by ordered.workload_id order by ordered.outcome_order) as runner_up_order
    from ordered
    inner join picks using (workload_id)
    where ordered.offer_id <> picks.offer_id
),

chip_hour_picks as (
    select * from ordered where chip_hour_order = 1
),

excluded_cheaper as (
    -- each excluded offer cheaper per chip-hour than the ranking's cheapest, with the reason the page lists first
    -- for it (an offer may be excluded at several precisions or chip counts)
    select
        excluded.workload_id,
        excluded.offer_id,
        excluded.cloud,
        excluded.region,
        excluded.instance_type,
        excluded.pricing_term,
        offers.usd_per_chip_hour,
        offers.price_source_id,
        offers.price_as_of,
        min(excluded.exclusion_reason) as exclusion_reason
    from marts.excluded_candidates as excluded
    inner join marts.offers as offers
        on offers.as_of = excluded.as_of and offers.offer_id = excluded.offer_id
    inner join chip_hour_picks
        on chip_hour_picks.workload_id = excluded.workload_id
    inner join catalog.workloads as workloads
        on workloads.workload_id = excluded.workload_id
    where excluded.as_of = cast(getvariable('as_of') as date)
        and offers.usd_per_chip_hour < chip_hour_picks.usd_per_chip_hour
        -- a term the workload does not buy is no chip-hour it could choose
        and offer_term_accepted(workloads.pricing_terms, offers.pricing_term, offers.term_months, workloads.months)
    group by all
),

cheapest_excluded as (
    select
        *,
        count(*) over (partition by workload_id) as offers_excluded
    from excluded_cheaper
    qualify row_number() over (partition by workload_id order by usd_per_chip_hour, offer_id) = 1
),

decided as (
    select
        picks.run_id,
        picks.as_of,
        picks.workload_id,
        picks.workload_kind,
        picks.outcome_metric,
        picks.candidate_id as pick_candidate_id,
        picks.offer_id as pick_offer_id,
        picks.cloud as pick_cloud,
        picks.region as pick_region,
        picks.instance_type as pick_instance_type,
        picks.pricing_term as pick_pricing_term,
        picks.precision as pick_precision,
        picks.accelerator_id as pick_accelerator_id,
        picks.chips as pick_chips,
        picks.basis as pick_basis,
        picks.price_unverified as pick_price_unverified,
        -- when its price was read, and its benchmark's date (measured or scaled): the decision names both
        picks.price_source_id as pick_price_source_id,
        picks.price_as_of as pick_price_as_of,
        picks.benchmark_as_of as pick_benchmark_as_of,
        -- a split whose communication the estimate does not charge (no link figure): the decision says so
        picks.split_uncharged as pick_split_uncharged,
        picks.usd_per_chip_hour as pick_usd_per_chip_hour,
        picks.outcome_value as pick_outcome_value,
        picks.outcome_low as pick_outcome_low,
        picks.outcome_high as pick_outcome_high,
        picks.band_untested as pick_band_untested,
        picks.price_zone as pick_price_zone,
        picks.price_zones as pick_price_zones,
        picks.highest_zone_usd_per_hour as pick_highest_zone_usd_per_hour,
        picks.outcome_at_highest_zone as pick_outcome_at_highest_zone,
        -- priced at its dearest zone, the pick would still cost less than the runner-up
        outcome_key(picks.outcome_at_highest_zone) < outcome_key(runners_up.outcome_value)
            as pick_leads_at_highest_zone,
        -- on reclaimable capacity, what the pick's reclaims cost and the rate they rest on
        picks.interruption_overhead as pick_interruption_overhead,
        picks.expected_interruptions as pick_expected_interruptions,
        picks.spare_deployments as pick_spare_deployments,
        picks.reclaim_loss as pick_reclaim_loss,
        picks.reclaims_per_instance_month as pick_reclaims_per_instance_month,
        picks.reclaim_rate_source as pick_reclaim_rate_source,
        picks.reclaim_rate_note as pick_reclaim_rate_note,
        runners_up.candidate_id as runner_up_candidate_id,
        runners_up.offer_id as runner_up_offer_id,
        runners_up.cloud as runner_up_cloud,
        runners_up.region as runner_up_region,
        runners_up.instance_type as runner_up_instance_type,
        runners_up.pricing_term as runner_up_pricing_term,
        runners_up.precision as runner_up_precision,
        runners_up.basis as runner_up_basis,
        runners_up.price_unverified as runner_up_price_unverified,
        runners_up.price_source_id as runner_up_price_source_id,
        runners_up.price_as_of as runner_up_price_as_of,
        runners_up.benchmark_as_of as runner_up_benchmark_as_of,
        runners_up.split_uncharged as runner_up_split_uncharged,
        runners_up.chips as runner_up_chips,
        runners_up.outcome_value as runner_up_outcome_value,
        runners_up.outcome_value / picks.outcome_value - 1 as runner_up_gap,
        runners_up.outcome_low as runner_up_outcome_low,
        runners_up.outcome_high as runner_up_outcome_high,
        runners_up.band_untested as runner_up_band_untested,
        runners_up.accelerator_id as runner_up_accelerator_id,
        runners_up.price_zone as runner_up_price_zone,
        runners_up.price_zones as runner_up_price_zones,
        runners_up.highest_zone_usd_per_hour as runner_up_highest_zone_usd_per_hour,
        runners_up.outcome_at_highest_zone as runner_up_outcome_at_highest_zone,
        -- the error bands overlap: the runner-up may well be the cheaper one
        bands_overlap(picks.outcome_value, picks.outcome_high, runners_up.outcome_value, runners_up.outcome_low)
            as too_close_to_call,
        -- the measurement that would settle it: of the two, the one not measured with the wider band (bands of the
        -- same ratios, equal but for rounding, name the pick)
        case
            when runners_up.candidate_id is null then null
            when picks.outcome_high is null then runners_up.candidate_id
            when runners_up.outcome_high is null then picks.candidate_id
            when runners_up.outcome_high / runners_up.outcome_low
                > picks.outcome_high / picks.outcome_low * (1 + 1e-9)
                then runners_up.candidate_id
            else picks.candidate_id
        end as settle_candidate_id,
        chip_hour_picks.candidate_id as chip_hour_pick_candidate_id,
        chip_hour_picks.offer_id as chip_hour_pick_offer_id,
        chip_hour_picks.cloud as chip_hour_pick_cloud,
        chip_hour_picks.region as chip_hour_pick_region,
        chip_hour_picks.instance_type as chip_hour_pick_instance_type,
        chip_hour_picks.pricing_term as chip_hour_pick_pricing_term,
        chip_hour_picks.precision as chip_hour_pick_precision,
        chip_hour_picks.basis as chip_hour_pick_basis,
        chip_hour_picks.usd_per_chip_hour as chip_hour_pick_usd_per_chip_hour,
        chip_hour_picks.price_source_id as chip_hour_pick_price_source_id,
        chip_hour_picks.price_as_of as chip_hour_pick_price_as_of,
        chip_hour_picks.outcome_value as chip_hour_pick_outcome_value,
        chip_hour_picks.outcome_low as chip_hour_pick_outcome_low,
        chip_hour_picks.outcome_high as chip_hour_pick_outcome_high,
        chip_hour_picks.band_untested as chip_hour_pick_band_untested,
        -- the pick's band and the cheapest chip-hour's overlap, by the rule that calls the runner-up too close: what
        -- the hourly ranking costs more is not settled, the cheapest chip-hour may cost less (never the pick's offer)
        chip_hour_picks.offer_id <> picks.offer_id
            and bands_overlap(picks.outcome_value, picks.outcome_high,
                              chip_hour_picks.outcome_value, chip_hour_picks.outcome_low)
            as chip_hour_pick_may_cost_less,
        chip_hour_picks.offer_id = picks.offer_id as is_chip_hour_pick_same_offer,
        -- the money the hourly ranking leaves on the table; zero when both rankings pick the same offer
        case when chip_hour_picks.offer_id = picks.offer_id then 0.0
            else chip_hour_picks.outcome_value - picks.outcome_value end as chip_hour_pick_extra_usd,
        case when chip_hour_picks.offer_id = picks.offer_id then 1.0
            else chip_hour_picks.outcome_value / picks.outcome_value end as chip_hour_pick_ratio,
        coalesce(cheapest_excluded.offers_excluded, 0) as cheaper_excluded_offers,
        cheapest_excluded.offer_id as cheapest_excluded_offer_id,
        cheapest_excluded.cloud as cheapest_excluded_cloud,
        cheapest_excluded.region as cheapest_excluded_region,
        cheapest_excluded.instance_type as cheapest_excluded_instance_type,
        cheapest_excluded.pricing_term as cheapest_excluded_pricing_term,
        cheapest_excluded.usd_per_chip_hour as cheapest_excluded_usd_per_chip_hour,
        cheapest_excluded.price_source_id as cheapest_excluded_price_source_id,
        cheapest_excluded.price_as_of as cheapest_excluded_price_as_of,
        cheapest_excluded.exclusion_reason as cheapest_excluded_reason
    from picks
    left join runners_up
        on runners_up.workload_id = picks.workload_id and runners_up.runner_up_order = 1
    inner join chip_hour_picks
        on chip_hour_picks.workload_id = picks.workload_id
    left join cheapest_excluded
        on cheapest_excluded.workload_id = picks.workload_id
),

settling as (
    -- the accelerator and precision of the candidate whose measurement would settle a close call
    select
        workload_id,
        case when settle_candidate_id = pick_candidate_id then pick_accelerator_id
            else runner_up_accelerator_id end as settle_accelerator_id,
        case when settle_candidate_id = pick_candidate_id then pick_precision
            else runner_up_precision end as settle_precision
    from decided
    where too_close_to_call
),

unranked as (
    -- a measured result of the settling accelerator that the workload's rules keep out of the ranking: the decision
    -- names it and why, rather than ask for a measurement as if none existed (one of the settling candidate's own
    -- precision first, then of its own scenario)
    select
        settling.workload_id,
        results.measurement,
        results.unranked_reason
    from settling
    inner join intermediate.int_serving_results_unranked as results
        on results.workload_id = settling.workload_id
        and results.accelerator_id = settling.settle_accelerator_id
    qualify row_number() over (
        partition by settling.workload_id
        order by precision_class(results.precision) = precision_class(settling.settle_precision) desc nulls last,
            results.is_workload_scenario desc nulls last, results.measurement
    ) = 1
),

final as (
    select
        decided.* replace (
            case when decided.too_close_to_call then decided.settle_candidate_id end as settle_candidate_id
        ),
        unranked.measurement as settle_unranked_measurement,
        unranked.unranked_reason as settle_unranked_reason
    from decided
    left join unranked on unranked.workload_id = decided.workload_id
)

select * from final
