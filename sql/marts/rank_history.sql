-- marts.rank_history — grain: one row per run x workload x candidate (offer, term, precision, chips): the outcome
-- metric, its rank, the rank by USD per chip-hour and the basis. `is_pick` marks the best candidate of the
-- workload (the reports' first row: lowest outcome, then lowest chip-hour price, then candidate id).
-- materialized: view
-- A slim history of marts.rankings, every as-of date: a view of its columns, so that a run's figures are stored once
-- (a table repeated them every night: 14% of the warehouse at five years of a 1,000-offer market).
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
    is_pick,
    basis,
    benchmark_label,
    benchmark_ref,
    price_source_id,
    benchmark_source_id
from marts.rankings
