-- marts.cpu_baselines — grain: one row per run x workload. The CPU baseline every workload page shows: the best
-- CPU candidate (family cpu) beside the pick, with its cost as a multiple of the pick's; where no CPU candidate is
-- ranked, the closest one and why not, with the figure it reached (the TPOT or TTFT of one sequence alone, the host
-- memory of the largest CPU instance, the hours a training run takes against the deadline).
with workloads as (
    select * from catalog.workloads
),

accelerators as (
    select * from catalog.accelerators
),

rankings as (
    select * from marts.rankings
    where as_of = cast(getvariable('as_of') as date)
),

inference_estimates as (
    select * from intermediate.int_inference_estimates_computed
),

training_estimates as (
    select * from intermediate.int_training_estimates_computed
),

picks as (
    -- the same order as marts.decisions: lowest outcome, then chip-hour price, then candidate id
    select *, count(*) over (partition by workload_id) as ranked_candidates
    from rankings
    qualify row_number() over (partition by workload_id
                               order by outcome_key(outcome_value), usd_per_chip_hour, candidate_id) = 1
),

cpu_ranked as (
    select *
    from rankings
    where family = 'cpu'
    qualify row_number() over (partition by workload_id
                               order by outcome_key(outcome_value), usd_per_chip_hour, candidate_id) = 1
),

cpu_excluded as (
    -- CPU candidates that cannot run the workload (a precision below the accuracy floor is not a CPU's limit)
    select
        estimates.workload_id, estimates.offer_id, estimates.cloud, estimates.region, estimates.instance_type,
        estimates.pricing_term, estimates.accelerator_id,
        -- a replica that does not fit has no group size: the instance's sockets, as the row shows them
        coalesce(estimates.replica_chips, estimates.accelerator_count) as chips,
        instances_needed(coalesce(estimates.replica_chips, estimates.accelerator_count), estimates.accelerator_count)
            as instances,
        estimates.precision,
        estimates.exclusion_kind, estimates.exclusion_reason,
        estimates.fastest_tpot_ms, estimates.fastest_prefill_ms,
        estimates.one_sequence_gb as needed_gb,
        estimates.memory_gb_per_chip * estimates.accelerator_count as host_memory_gb,
        estimates.memory_gb_per_chip * estimates.accelerator_count * defaults.usable_memory_fraction
            as usable_memory_gb,
        null::double as run_hours
    from inference_estimates as estimates
    inner join accelerators using (accelerator_id)
    inner join catalog.family_defaults as defaults on defaults.family = accelerators.family
    where accelerators.family = 'cpu' and estimates.exclusion_reason is not null
        and estimates.exclusion_kind <> 'precision'
    union all by name
    select
        estimates.workload_id, estimates.offer_id, estimates.cloud, estimates.region, estimates.instance_type,
        estimates.pricing_term, estimates.accelerator_id, estimates.chips, estimates.instances, estimates.precision,
        case when workloads.deadline_hours is not null and estimates.run_hours > workloads.deadline_hours
             then 'deadline' else 'no_figure' end as exclusion_kind,
        estimates.exclusion_reason,
        null::double as fastest_tpot_ms, null::double as fastest_prefill_ms, null::double as needed_gb,
        null::double as host_memory_gb,
        null::double as usable_memory_gb,
        estimates.run_hours
    from training_estimates as estimates
    inner join accelerators using (accelerator_id)
    inner join workloads using (workload_id)
    where accelerators.family = 'cpu' and estimates.exclusion_reason is not null
    union all by name
    -- estimated, but with no figure in the workload's objective (no published power, no grid intensity) or past its
    -- deadline once reclaims are counted: excluded after the estimators, listed in excluded_candidates
    select
        excluded.workload_id, excluded.offer_id, excluded.cloud, excluded.region, excluded.instance_type,
        excluded.pricing_term, excluded.accelerator_id, excluded.chips,
        instances_needed(excluded.chips, excluded.accelerator_count) as instances, excluded.precision,
        case when excluded.exclusion_reason like '%the deadline is%' then 'deadline' else 'objective' end
            as exclusion_kind,
        excluded.exclusion_reason,
        null::double as fastest_tpot_ms, null::double as fastest_prefill_ms, null::double as needed_gb,
        null::double as host_memory_gb, null::double as usable_memory_gb, null::double as run_hours
    from intermediate.int_candidates_excluded as excluded
    inner join accelerators using (accelerator_id)
    where accelerators.family = 'cpu'
        and (excluded.exclusion_reason like 'no published power for %'
             or excluded.exclusion_reason like 'no grid intensity declared for %'
             or excluded.exclusion_reason like '%of it redone after reclaims; the deadline is%')
),

cpu_closest as (
    -- the CPU candidate that came nearest: an objective missed by the least, else the largest host memory
    select *
    from cpu_excluded
    qualify row_number() over (
        partition by workload_id
        order by case exclusion_kind when 'deadline' then 1 when 'tpot' then 2 when 'ttft' then 3 when 'slo' then 4
                                     when 'memory' then 5 when 'objective' then 6 else 7 end,
                 run_hours, fastest_tpot_ms, fastest_prefill_ms, host_memory_gb desc, needed_gb, offer_id, precision
    ) = 1
),

final as (
    select
        getvariable('run_id') as run_id,
        cast(getvariable('as_of') as date) as as_of,
        workloads.workload_id,
        workloads.kind as workload_kind,
        picks.outcome_metric,
        case when cpu_ranked.candidate_id is not null then 'ranked'
             when cpu_closest.offer_id is not null then 'excluded'
             -- an MLPerf task without a token count is priced from measured runs only: nothing estimates a CPU
             when workloads.kind = 'training' and workloads.tokens is null then 'not_estimated'
             else 'no_offer' end as cpu_status,
        cpu_ranked.candidate_id as cpu_candidate_id,
        coalesce(cpu_ranked.offer_id, cpu_closest.offer_id) as cpu_offer_id,
        coalesce(cpu_ranked.cloud, cpu_closest.cloud) as cpu_cloud,
        coalesce(cpu_ranked.region, cpu_closest.region) as cpu_region,
        coalesce(cpu_ranked.instance_type, cpu_closest.instance_type) as cpu_instance_type,
        coalesce(cpu_ranked.pricing_term, cpu_closest.pricing_term) as cpu_pricing_term,
        coalesce(cpu_ranked.accelerator_id, cpu_closest.accelerator_id) as cpu_accelerator_id,
        coalesce(cpu_ranked.chips, cpu_closest.chips) as cpu_chips,
        -- what the page's sockets column says: the row's sockets over all its instances, as a training page counts
        -- chips; a ranked service's are those of every instance it keeps (its cpu_chips are one replica's), an
        -- excluded candidate's those of the one replica (or instance) it was tried on
        case when cpu_ranked.candidate_id is null then cpu_closest.chips
             when workloads.kind = 'training' then cpu_ranked.chips
             else cpu_ranked.instances * cpu_ranked.accelerator_count end as cpu_sockets,
        coalesce(cpu_ranked.instances, cpu_closest.instances) as cpu_instances,
        coalesce(cpu_ranked.precision, cpu_closest.precision) as cpu_precision,
        cpu_ranked.basis as cpu_basis,
        cpu_ranked.outcome_value as cpu_outcome_value,
        cpu_ranked.outcome_rank as cpu_outcome_rank,
        picks.ranked_candidates,
        picks.candidate_id as best_candidate_id,
        picks.instance_type as best_instance_type,
        picks.accelerator_id as best_accelerator_id,
        picks.outcome_value as best_outcome_value,
        cpu_ranked.outcome_value / picks.outcome_value as cpu_cost_ratio,
        -- why no CPU ranks: only where none does
        case when cpu_ranked.candidate_id is null then cpu_closest.exclusion_kind end as cpu_exclusion_kind,
        case when cpu_ranked.candidate_id is null then cpu_closest.exclusion_reason end as cpu_exclusion_reason,
        workloads.slo_tpot_ms,
        workloads.slo_ttft_ms,
        -- the closest excluded candidate's figures, only where it is the row's CPU (none ranks)
        case when cpu_ranked.candidate_id is null then cpu_closest.fastest_tpot_ms end as cpu_fastest_tpot_ms,
        case when cpu_ranked.candidate_id is null then cpu_closest.fastest_prefill_ms end as cpu_fastest_prefill_ms,
        case when cpu_ranked.candidate_id is null then cpu_closest.needed_gb end as cpu_needed_gb,
        case when cpu_ranked.candidate_id is null then cpu_closest.host_memory_gb end as cpu_host_memory_gb,
        case when cpu_ranked.candidate_id is null then cpu_closest.usable_memory_gb end as cpu_usable_memory_gb,
        workloads.deadline_hours,
        case when cpu_ranked.candidate_id is null then cpu_closest.run_hours end as cpu_run_hours,
        -- both as the deadline reasons write them (never "best 1,368 h" against "the 1,367.5 h deadline")
        deadline_text(workloads.deadline_hours) as deadline_text,
        case when cpu_ranked.candidate_id is null then
            case when cpu_closest.run_hours > workloads.deadline_hours
                 then hours_needed_text(cpu_closest.run_hours, workloads.deadline_hours)
                 else hours_text(cpu_closest.run_hours) end
        end as cpu_run_hours_text
    from workloads
    left join picks using (workload_id)
    left join cpu_ranked using (workload_id)
    left join cpu_closest using (workload_id)
)

select * from final
