-- marts.rankings — grain: one row per run x workload x candidate (a training or inference cost row).
-- Candidates ranked by the outcome metric and, beside it, by USD per chip-hour; scaled, calibrated and estimated rows
-- carry an error band from the back-test (int_estimate_bands; `band_untested` where a calibrated row's factor was
-- never tested leave-one-out, int_estimate_calibration). `reversals` counts the
-- candidates this one beats on the outcome although it costs more per chip-hour. A workload whose objective is
-- energy is ranked by kWh per outcome, one whose objective is emissions by kg CO2e per outcome; a candidate without
-- that figure is not ranked (excluded_candidates says why).
with training as (
    select * exclude (past_deadline_reason) from intermediate.int_training_costs_computed
    where past_deadline_reason is null  -- listed in excluded_candidates
),

inference as (
    select * from intermediate.int_inference_costs_computed
),

workloads as (
    select * from catalog.workloads
),

accelerators as (
    select * from catalog.accelerators
),

bands as (
    select * from intermediate.int_estimate_bands
),

calibration as (
    select * from intermediate.int_estimate_calibration
),

candidates as (
    select
        workload_id, candidate_id, offer_id, cloud, region, instance_type, pricing_term,
        accelerator_id, accelerator_count, cast(chips as integer) as chips, instances, precision,
        usd_per_hour, usd_per_chip_hour, basis,
        case workloads.objective when 'energy' then 'kwh_per_completed_run'
                                 when 'emissions' then 'kgco2e_per_completed_run' else 'completed_run_usd' end
            as outcome_metric,
        case workloads.objective when 'energy' then energy_kwh when 'emissions' then kgco2e
                                 else completed_run_usd end as outcome_value,
        time_to_train_minutes, interruption_overhead, expected_interruptions,
        null::bigint as spare_deployments, null::double as reclaim_loss,
        null::double as tokens_per_s_per_chip, null::double as utilization,
        null::double as usd_per_million_tokens, null::double as usd_per_million_total_tokens,
        price_source_id, price_as_of, price_ref, benchmark_label, benchmark_source_id, benchmark_as_of, benchmark_ref,
        false as precision_doubtful,  -- training results' precision is not cross-checked
        false as split_uncharged  -- communication between instances is modelled or pays the declared flat loss
    from training
    inner join workloads using (workload_id)
    union all by name
    select
        workload_id, candidate_id, offer_id, cloud, region, instance_type, pricing_term,
        accelerator_id, accelerator_count, replica_chips as chips,  -- the replica's chips, across the instances it spans
        coalesce(instances, instances_per_replica) as instances, precision,
        usd_per_hour, usd_per_chip_hour, basis,
        outcome_metric,
        outcome_value,
        null::double as time_to_train_minutes, null::double as interruption_overhead,
        null::double as expected_interruptions, spare_deployments, reclaim_loss,
        tokens_per_s_per_chip, utilization, usd_per_million_tokens,
        usd_per_million_total_tokens,
        price_source_id, price_as_of, price_ref, benchmark_label, benchmark_source_id, benchmark_as_of, benchmark_ref,
        precision_doubtful,
        coalesce(split_uncharged, false) as split_uncharged  -- a measured row's split is in its measurement
    from inference
),

ranked as (
    select
        *,
        -- outcomes equal to 12 significant digits share a rank (outcome_key, sql/macros.sql): one cost computed in
        -- two orders differs in its last bits
        rank() over (partition by workload_id order by outcome_key(outcome_value)) as outcome_rank,
        rank() over (partition by workload_id order by usd_per_chip_hour) as chip_hour_rank,
        -- the workload's pick, the reports' first row: lowest outcome, then lowest chip-hour price, then candidate id
        row_number() over (partition by workload_id
                           order by outcome_key(outcome_value), usd_per_chip_hour, candidate_id) = 1
            as is_pick
    from candidates
    -- no figure for the workload's objective (energy, on a chip that publishes no power): excluded, not ranked last
    where outcome_value is not null
),

reversals as (  -- the candidates of its workload each one beats although they are cheaper per chip-hour
    select * from reversal_counts('ranked')
),

final as (
    select
        getvariable('run_id') as run_id,
        cast(getvariable('as_of') as date) as as_of,
        ranked.workload_id,
        workloads.kind as workload_kind,
        ranked.candidate_id,
        ranked.offer_id,
        ranked.cloud,
        ranked.region,
        ranked.instance_type,
        ranked.pricing_term,
        ranked.accelerator_id,
        ranked.accelerator_count,
        ranked.chips,
        ranked.instances,
        ranked.precision,
        ranked.usd_per_hour,
        ranked.usd_per_chip_hour,
        ranked.chip_hour_rank,
        ranked.outcome_metric,
        ranked.outcome_value,
        ranked.outcome_rank,
        ranked.is_pick,
        -- the error band: where the outcome would land if this estimate were as wrong as the back-test's best and
        -- worst (a measured row has none)
        ranked.outcome_value * bands.low_ratio as outcome_low,
        ranked.outcome_value * bands.high_ratio as outcome_high,
        bands.comparisons as band_comparisons,
        bands.scope as band_scope,
        -- a calibrated row whose accelerator's factor no leave-one-out comparison tested (it comes from one setup):
        -- its band is the family's calibrated spread, never checked on this chip, and the pages say so beside it
        coalesce(bands.low_ratio is not null and calibration.loo_comparisons = 0, false) as band_untested,
        reversals.reversals,
        reversals.reversals > 0 as is_reversal,
        ranked.time_to_train_minutes,
        -- on reclaimable capacity: what its reclaims cost (training: the share of the run redone, as the completed-run
        -- USD and the deadline count it; a service: a spare unit; offline work: the hours lost restarting)
        ranked.time_to_train_minutes * (1 + ranked.interruption_overhead) as time_to_train_with_rework_minutes,
        ranked.interruption_overhead,
        ranked.expected_interruptions,
        ranked.spare_deployments,
        ranked.reclaim_loss,
        rates.per_instance_month as reclaims_per_instance_month,
        rates.source as reclaim_rate_source,
        rates.note as reclaim_rate_note,
        ranked.tokens_per_s_per_chip,
        ranked.usd_per_million_tokens,
        ranked.usd_per_million_total_tokens,
        ranked.utilization,
        accelerators.family,
        ranked.basis,
        ranked.price_source_id,
        ranked.price_as_of,
        ranked.price_ref,
        coalesce(offers.price_unverified, false) as price_unverified,
        -- a spot price is its cheapest zone's: the zones, the dearest one's price, and the outcome at it (a cloud
        -- offer's USD outcome scales with its hourly price), where the zones' prices differ
        offers.price_zone,
        offers.price_zones,
        offers.highest_zone_usd_per_hour,
        case when offers.highest_zone_usd_per_hour > ranked.usd_per_hour
                  and ranked.outcome_metric in ('completed_run_usd', 'usd_per_million_tokens',
                                                'usd_per_million_successful_requests')
             then ranked.outcome_value * offers.highest_zone_usd_per_hour / ranked.usd_per_hour
        end as outcome_at_highest_zone,
        ranked.benchmark_label,
        ranked.split_uncharged,
        ranked.precision_doubtful,
        ranked.benchmark_source_id,
        ranked.benchmark_as_of,
        ranked.benchmark_ref
    from ranked
    inner join reversals using (workload_id, candidate_id)
    inner join workloads using (workload_id)
    inner join accelerators using (accelerator_id)
    left join intermediate.int_offers_priced as offers using (offer_id)
    left join catalog.interruption_rates as rates
        on rates.pricing_term = ranked.pricing_term and rates.cloud = ranked.cloud
    left join bands
        on bands.phase = case workloads.kind when 'training' then 'training' else 'serving' end
        and bands.family = accelerators.family
        and bands.band_kind = case ranked.basis when 'estimated' then 'uncalibrated' when 'measured' then null
                                                else 'calibrated' end
    -- a calibrated row's factor, by the keys the estimates fit it on (serving: precision class and the workload's
    -- model; training: the accelerator)
    left join calibration
        on ranked.basis = 'calibrated'
        and calibration.phase = case workloads.kind when 'training' then 'training' else 'serving' end
        and calibration.accelerator_id = ranked.accelerator_id
        and calibration.precision_class
            = case workloads.kind when 'training' then '*' else precision_class(ranked.precision) end
        and calibration.model_id = case workloads.kind when 'training' then '*' else workloads.model_id end
)

select * from final
