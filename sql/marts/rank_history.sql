-- marts.rank_history — grain: one row per run x workload x candidate (offer, term, precision, chips): the outcome
-- metric, its rank, the rank by USD per chip-hour and the basis. `is_pick` marks the best candidate of the
-- workload (the reports' first row: lowest outcome, then lowest chip-hour price, then candidate id).
with rankings as (
    select * from marts.rankings
    where as_of = cast(getvariable('as_of') as date)
),

final as (
    select
        run_id,
        as_of,
        workload_id,
        candidate_id,
        offer_id,
        cloud,
        region,
        instance_type,
        pricing_term,
        precision,
        accelerator_id,
        family,
        chips,
        usd_per_chip_hour,
        chip_hour_rank,
        outcome_metric,
        outcome_value,
        outcome_rank,
        row_number() over (partition by workload_id order by outcome_value, usd_per_chip_hour, candidate_id) = 1
            as is_pick,
        basis,
        benchmark_label,
        benchmark_ref,
        price_source_id,
        benchmark_source_id
    from rankings
)

select * from final
