-- Grain: one row per model + tokens training workload x offer (eligible or excluded, with the reason).
-- Chips: the workload's chip count, at least the fewest that hold the training state (params x
-- state_bytes_per_param), rounded up to whole instances. Time: 6 x params x tokens over the chips' effective
-- FLOP/s. Basis `scaled` where this accelerator has a published training MFU (a benchmark_runs training row:
-- same model first, else the model closest in size) or an MLPerf dense-task result (its achieved FLOP/s as a share of the chip's fastest training
-- peak); these figures were measured at their own scale, so only instances beyond it pay the scaling loss.
-- Basis `estimated` with the workload's MFU or the family default, times the scaling loss between instances.
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

training_peaks as (
    -- the fastest precision a chip publishes for training (bf16 or fp8): what an MLPerf run's MFU is measured against
    select accelerator_id, max(peak_tflops) as peak_tflops
    from peaks
    where precision in ('bf16', 'fp8')
    group by accelerator_id
),

published as (
    -- published training figures landed as benchmark_runs rows (kind training)
    select
        runs.model_id,
        runs.accelerator_id as accelerator,
        runs.chips,
        runs.mfu,
        runs.source_id,
        runs.data_as_of,
        runs.source_ref,
        coalesce(runs.run_source, runs.source_id) as source,
        models.params as published_params
    from staging.stg_benchmark_runs__results as runs
    inner join models on models.model_id = runs.model_id
    where runs.kind = 'training' and runs.mfu > 0
    qualify row_number() over (partition by runs.model_id, runs.accelerator_id order by runs.mfu desc) = 1
),

mlperf_mfu as (
    -- the best MFU an MLPerf dense training task achieved per accelerator
    select
        results.accelerator_id,
        -- mfu_achieved counts 6 FLOPs per parameter and token; a task declaring another factor scales it
        mfu_achieved(models.params, results.samples_to_converge * tasks.tokens_per_sample,
                     results.time_to_train_minutes, results.chips, training_peaks.peak_tflops)
            * tasks.flops_per_token / 6 as mfu,
        results.chips,
        results.source_id,
        results.data_as_of,
        results.source_ref
    from staging.stg_mlperf_training__results as results
    inner join catalog.mlperf_training_tasks as tasks on tasks.task = results.benchmark
    inner join models on models.model_id = tasks.model
    inner join training_peaks on training_peaks.accelerator_id = results.accelerator_id
    where results.samples_to_converge > 0 and results.time_to_train_minutes > 0
    qualify row_number() over (partition by results.accelerator_id order by mfu desc, results.source_ref) = 1
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
        defaults.source as defaults_source,
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
    inner join offers on offer_term_accepted(workloads.pricing_terms, offers.pricing_term, offers.term_months, workloads.months)
    inner join accelerators on accelerators.accelerator_id = offers.accelerator_id
    inner join defaults on defaults.family = accelerators.family
    left join terms on terms.pricing_term = offers.pricing_term
    left join peaks
        on peaks.accelerator_id = offers.accelerator_id and peaks.precision = workloads.training_precision
),

sourced as (
    select
        sized.*,
        sized.instances * sized.accelerator_count as chips,
        same_model.mfu as same_model_mfu,
        same_model.source as same_model_source,
        same_model.source_id as same_model_source_id,
        same_model.data_as_of as same_model_as_of,
        same_model.source_ref as same_model_ref,
        same_model.chips as same_model_chips,
        other_model.mfu as other_model_mfu,
        other_model.chips as other_model_chips,
        other_model.source_id as other_model_source_id,
        other_model.data_as_of as other_model_as_of,
        other_model.source_ref as other_model_ref,
        other_model.model_id as other_model_id,
        other_model.source as other_model_source,
        mlperf_mfu.mfu as mlperf_mfu,
        mlperf_mfu.chips as mlperf_chips,
        mlperf_mfu.source_id as mlperf_source_id,
        mlperf_mfu.data_as_of as mlperf_as_of,
        mlperf_mfu.source_ref as mlperf_ref
    from sized
    left join published as same_model
        on same_model.model_id = sized.model_id and same_model.accelerator = sized.accelerator_id
    left join (
        -- another model's published figure on this accelerator: the one closest in size
        select sized_keys.workload_id, published.*
        from (select distinct workload_id, params from sized) as sized_keys
        cross join published
        qualify row_number() over (
            partition by sized_keys.workload_id, published.accelerator
            order by abs(ln(published.published_params / sized_keys.params)), published.model_id
        ) = 1
    ) as other_model
        on other_model.workload_id = sized.workload_id
        and other_model.accelerator = sized.accelerator_id
        and other_model.model_id <> sized.model_id
    left join mlperf_mfu on mlperf_mfu.accelerator_id = sized.accelerator_id
),

based as (
    select
        *,
        case
            when workload_mfu is not null then 'workload'
            when same_model_mfu is not null then 'same_model'
            when other_model_mfu is not null then 'other_model'
            when mlperf_mfu is not null then 'mlperf'
            else 'default'
        end as mfu_from
    from sourced
),

timed as (
    select
        *,
        case when mfu_from in ('same_model', 'other_model', 'mlperf') then 'scaled' else 'estimated' end as basis,
        case mfu_from
            when 'workload' then workload_mfu
            when 'same_model' then same_model_mfu
            when 'other_model' then other_model_mfu
            when 'mlperf' then mlperf_mfu
            else default_mfu
        end as mfu,
        -- published and MLPerf figures were measured at their own scale: only the instances beyond it lose more
        -- (a figure without a chip count is taken as measured on one instance)
        pow(scaling_efficiency_per_doubling, greatest(0, log2(instances) - log2(
            case mfu_from
                when 'same_model' then greatest(1, ceil(coalesce(same_model_chips, 1) / accelerator_count))
                when 'other_model' then greatest(1, ceil(coalesce(other_model_chips, 1) / accelerator_count))
                when 'mlperf' then greatest(1, ceil(mlperf_chips / accelerator_count))
                else 1
            end))) as scaling
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
        training_hours(params, tokens, chips, peak_tflops, mfu, scaling) as run_hours,
        training_hours(params, tokens, chips, peak_tflops, mfu, scaling) * 60 as time_to_train_minutes,
        interruption_overhead,
        completed_run_usd_with_overhead(training_hours(params, tokens, chips, peak_tflops, mfu, scaling), instances,
                                        usd_per_hour, interruption_overhead) as completed_run_usd,
        energy_kwh(training_hours(params, tokens, chips, peak_tflops, mfu, scaling), chips, tdp_w, pue) as energy_kwh,
        basis,
        case mfu_from
            when 'workload' then 'MFU ' || mfu || ' declared by the workload'
            when 'same_model' then 'published MFU ' || mfu || ' of this model on ' || accelerator_id || ': '
                || same_model_source
            when 'other_model' then 'published MFU ' || mfu || ' of ' || other_model_id || ' on ' || accelerator_id
                || ': ' || other_model_source
            when 'mlperf' then 'MFU ' || round(mfu, 3) || ' achieved in MLPerf on ' || accelerator_id
            else 'family default MFU ' || mfu || ' (declared assumption)'
        end as benchmark_label,
        case mfu_from
            when 'workload' then 'workloads.yaml'
            when 'same_model' then same_model_source_id
            when 'other_model' then other_model_source_id
            when 'mlperf' then mlperf_source_id
            else defaults_source
        end as benchmark_source_id,
        case mfu_from
            when 'same_model' then same_model_as_of
            when 'other_model' then other_model_as_of
            when 'mlperf' then mlperf_as_of
        end as benchmark_as_of,
        case mfu_from
            when 'workload' then 'catalogs/workloads.yaml: workloads.' || workload_id || '.mfu'
            when 'same_model' then same_model_ref
            when 'other_model' then other_model_ref
            when 'mlperf' then mlperf_ref
            else 'catalogs/accelerators.yaml: family_defaults.' || family
        end as benchmark_ref,
        workload_id || '|' || offer_id || '|' || cast(chips as integer) as candidate_id,
        case
            when not can_train then accelerator_id || ' is an inference accelerator: it does not train'
            when peak_tflops is null then
                'the catalog has no ' || precision || ' peak for ' || accelerator_id || ': it cannot be estimated at '
                || precision
            when memory_gb is null then 'the catalog has no memory size for ' || accelerator_id
            when deadline_hours is not null
                and training_hours(params, tokens, chips, peak_tflops, mfu, scaling) > deadline_hours then
                'needs ' || cast(round(training_hours(params, tokens, chips, peak_tflops, mfu, scaling)) as bigint)
                || ' h on ' || chips || ' chips; the deadline is ' || cast(round(deadline_hours) as bigint) || ' h'
        end as exclusion_reason
    from timed
)

select * from final
