-- Grain: one row per model + tokens training workload x offer (eligible or excluded, with the reason).
-- Chips: the workload's chip count, at least the fewest that hold the training state (params x
-- state_bytes_per_param), rounded up to whole instances. Time: 6 x params x tokens over the chips' effective
-- FLOP/s, with the scaling loss between instances. Basis: `scaled` where a published training figure of this
-- accelerator exists (same model first, then another model: its MFU) or an MLPerf dense task measured it
-- (achieved FLOP/s); else `estimated` with the workload's MFU or the family default.
with workloads as (
    select * from catalog.workloads where kind = 'training' and tokens is not null
),

models as (
    select * from catalog.models
),

offers as (
    select * from intermediate.int_offers_priced
),

accelerators as (
    select * from catalog.accelerators
),

defaults as (
    select * from catalog.family_defaults
),

terms as (
    select * from catalog.pricing_terms
),

peaks as (
    select * from intermediate.int_accelerator_precisions_listed
),

published as (
    select * from catalog.published_training
),

mlperf_achieved as (
    -- achieved FLOP/s per chip of the best dense MLPerf Training result per accelerator
    select
        results.accelerator_id,
        training_flops(models.params, results.samples_to_converge * tasks.tokens_per_sample)
            / (results.time_to_train_minutes * 60 * results.chips) as achieved_flops_per_chip,
        results.source_ref
    from staging.stg_mlperf_training__results as results
    inner join catalog.mlperf_training_tasks as tasks on tasks.task = results.benchmark
    inner join models on models.model_id = tasks.model
    where results.samples_to_converge > 0 and results.time_to_train_minutes > 0
    qualify row_number() over (partition by results.accelerator_id order by achieved_flops_per_chip desc) = 1
),

sized as (
    select
        workloads.workload_id,
        workloads.tokens,
        workloads.training_precision as precision,
        workloads.deadline_hours,
        workloads.mfu as workload_mfu,
        workloads.model_id,
        models.params,
        offers.*,
        accelerators.family,
        accelerators.memory_gb,
        accelerators.tdp_w,
        defaults.training_mfu as default_mfu,
        defaults.usable_memory_fraction,
        defaults.scaling_efficiency_per_doubling,
        defaults.pue,
        defaults.can_train,
        peaks.peak_tflops,
        coalesce(terms.interruption_overhead, 0) as interruption_overhead,
        chips_to_hold(models.params * workloads.state_bytes_per_param / 1e9, accelerators.memory_gb,
                      defaults.usable_memory_fraction) as state_chips,
        instances_needed(
            greatest(coalesce(workloads.training_chips, 0),
                     chips_to_hold(models.params * workloads.state_bytes_per_param / 1e9, accelerators.memory_gb,
                                   defaults.usable_memory_fraction)),
            offers.accelerator_count
        ) as instances
    from workloads
    inner join models on models.model_id = workloads.model_id
    cross join offers
    inner join accelerators on accelerators.accelerator_id = offers.accelerator_id
    inner join defaults on defaults.family = accelerators.family
    left join terms on terms.pricing_term = offers.pricing_term
    left join peaks
        on peaks.accelerator_id = offers.accelerator_id and peaks.precision = workloads.training_precision
),

throughput as (
    select
        sized.*,
        sized.instances * sized.accelerator_count as chips,
        same_model.mfu as same_model_mfu,
        same_model.source as same_model_source,
        other_model.mfu as other_model_mfu,
        other_model.model_id || ' ' || other_model.source as other_model_source,
        mlperf_achieved.achieved_flops_per_chip,
        mlperf_achieved.source_ref as mlperf_ref
    from sized
    left join published as same_model
        on same_model.model_id = sized.model_id and same_model.accelerator = sized.accelerator_id
    left join (
        select * from published
        qualify row_number() over (partition by accelerator order by mfu desc, model_id) = 1
    ) as other_model
        on other_model.accelerator = sized.accelerator_id and other_model.model_id <> sized.model_id
    left join mlperf_achieved on mlperf_achieved.accelerator_id = sized.accelerator_id
),

based as (
    select
        *,
        case
            when workload_mfu is not null then 'estimated'
            when same_model_mfu is not null or other_model_mfu is not null then 'scaled'
            when achieved_flops_per_chip <= peak_tflops * 1e12 then 'scaled'
            else 'estimated'
        end as basis,
        case
            when workload_mfu is not null then workload_mfu
            when same_model_mfu is not null then same_model_mfu
            when other_model_mfu is not null then other_model_mfu
            when achieved_flops_per_chip <= peak_tflops * 1e12 then achieved_flops_per_chip / (peak_tflops * 1e12)
            else default_mfu
        end as mfu,
        case
            when workload_mfu is not null then 'MFU declared by the workload'
            when same_model_mfu is not null then 'published MFU of this model: ' || same_model_source
            when other_model_mfu is not null then 'published MFU of ' || other_model_source
            when achieved_flops_per_chip <= peak_tflops * 1e12 then 'achieved FLOP/s of MLPerf ' || mlperf_ref
            else 'family default MFU (declared assumption)'
        end as benchmark_label
    from throughput
),

timed as (
    select
        *,
        scaling_factor(scaling_efficiency_per_doubling, instances) as scaling,
        training_hours(params, tokens, chips, peak_tflops, mfu,
                       scaling_factor(scaling_efficiency_per_doubling, instances)) as run_hours
    from based
),

final as (
    select
        workload_id,
        offer_id, cloud, region, instance_type, pricing_term, accelerator_id, accelerator_count,
        usd_per_hour, usd_per_chip_hour, price_source_id, price_as_of, price_ref,
        precision,
        chips,
        instances,
        state_chips,
        mfu,
        scaling,
        run_hours,
        run_hours * 60 as time_to_train_minutes,
        interruption_overhead,
        completed_run_usd_with_overhead(run_hours, instances, usd_per_hour, interruption_overhead) as completed_run_usd,
        energy_kwh(run_hours, chips, tdp_w, pue) as energy_kwh,
        basis,
        benchmark_label,
        null as benchmark_source_id,
        null::date as benchmark_as_of,
        null as benchmark_ref,
        workload_id || '|' || offer_id || '|' || cast(chips as integer) as candidate_id,
        case
            when not can_train then accelerator_id || ' is an inference accelerator: it does not train'
            when peak_tflops is null then
                'no published ' || precision || ' peak for ' || accelerator_id || ': the chip cannot be priced at '
                || precision
            when memory_gb is null then 'memory of ' || accelerator_id || ' not published'
            when deadline_hours is not null and run_hours > deadline_hours then
                'needs ' || cast(round(run_hours) as bigint) || ' h on ' || chips || ' chips; the deadline is '
                || cast(round(deadline_hours) as bigint) || ' h'
        end as exclusion_reason
    from timed
)

select * from final
