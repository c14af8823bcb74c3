-- Grain: one row per measured training result this run holds, with what the estimator says for the same
-- accelerator, chips, model and tokens at the family's default MFU (`estimated`, minutes), and the estimated/measured
-- time ratio that calibrates the MFU (int_estimate_calibration): above 1, the chip trains faster than its default.
-- Measured results: MLPerf Training rows of a task catalog.mlperf_training_tasks calibrates with (estimated at the chip's
-- fastest training precision, bf16 or fp8, as MLPerf summaries declare none, unless models.yaml declares what the
-- submission trained at: `precision_source` then names where it says so), the user's own runs of a workload in
-- minutes, and published MFU figures (benchmark_runs training rows), compared as minutes to train 1e9 tokens at the
-- published MFU (by 6 x N from the row's tokens/s per chip where it gives them, else the MFU it states). Scaling: the estimate loses the family's efficiency per doubling of instances, an instance being
-- the largest the catalog sells of that accelerator (a run without a chip count: one instance). An own run whose
-- instance type declares its network instead pays its gradient all-reduce (as int_training_estimates_computed);
-- `estimated_without_comm` keeps the flat loss, so the back-test shows the error before and after that term.
with models as (
    select * from catalog.models
),

accelerators as (
    select * from catalog.accelerators
),

defaults as (
    select * from catalog.family_defaults
),

peaks as (
    select * from intermediate.int_accelerator_precisions_listed
),

training_peaks as (
    -- the fastest precision a chip publishes for training: what an MLPerf run is estimated at, unless models.yaml
    -- declares what its submission trained at (mlperf_training_tasks.<task>.trained_at)
    -- (bf16 where fp8 lists the same peak, as TPU v5p's does: one answer whatever order the rows come in)
    select accelerator_id, arg_max(precision, (peak_tflops, precision = 'bf16')) as precision,
        max(peak_tflops) as peak_tflops
    from peaks
    where precision in ('bf16', 'fp8')
    group by accelerator_id
),

node_chips as (
    select accelerator_id, max(accelerator_count) as chips_per_instance
    from intermediate.int_instance_hardware
    where unknown_reason is null
    group by accelerator_id
),

mlperf as (
    select
        results.source_ref as comparison_id,
        'MLPerf Training' as measurement_basis,
        -- one submission (round file, submitter, task) at several system sizes is one setup: its results never
        -- calibrate each other's predictions
        results.source_id || '|' || results.submitter || '|' || results.benchmark as setup_key,
        results.accelerator_id,
        -- the precision its submission is declared to have trained at (staging), with the chip's peak there
        coalesce(declared.precision, training_peaks.precision) as precision,
        coalesce(declared.peak_tflops, training_peaks.peak_tflops) as peak_tflops,
        case when declared.precision is not null then results.precision_source end as precision_source,
        tasks.model as model_id,
        results.chips,
        cast(greatest(1, ceil(results.chips / results.chips_per_node)) as integer) as instances,
        -- training_flops counts 6 FLOPs per parameter and token; a task declaring another factor scales the tokens
        results.samples_to_converge * tasks.tokens_per_sample * coalesce(tasks.flops_per_token, 6) / 6 as tokens,
        results.time_to_train_minutes as measured,
        'minutes to train' as unit,
        null::double as published_mfu,
        results.source_id as benchmark_source_id,
        results.data_as_of as benchmark_as_of,
        results.source_ref as benchmark_ref,
        'MLPerf Training ' || results.benchmark || ': ' || results.submitter || ' ' || results.system
            || ' (' || format('{:,}', results.chips) || ' chips)' as benchmark_label
    from staging.stg_mlperf_training__results as results
    inner join catalog.mlperf_training_tasks as tasks on tasks.task = results.benchmark
    inner join training_peaks on training_peaks.accelerator_id = results.accelerator_id
    left join peaks as declared
        on declared.accelerator_id = results.accelerator_id and declared.precision = results.declared_precision
    where results.samples_to_converge > 0 and results.time_to_train_minutes > 0 and results.chips > 0
        -- a task declared for its model only (fine-tuning) calibrates nothing
        and tasks.tokens_per_sample is not null
),

runs as (
    select runs.*, models.params, node_chips.chips_per_instance
    from staging.stg_benchmark_runs__results as runs
    left join node_chips using (accelerator_id)
    left join models using (model_id)
    where runs.kind = 'training'
),

own_runs as (
    -- the user's own run of a workload, in minutes
    select
        runs.source_ref as comparison_id,
        'own run' as measurement_basis,
        runs.source_ref as setup_key,
        runs.accelerator_id,
        coalesce(runs.precision, workloads.training_precision) as precision,
        peaks.peak_tflops,
        workloads.model_id,
        runs.chips,
        cast(greatest(1, ceil(runs.chips / coalesce(instances.accelerator_count, runs.chips_per_instance, runs.chips)))
             as integer) as instances,
        workloads.tokens,
        instances.network_gbps,
        workloads.global_batch_tokens,
        runs.time_to_train_minutes as measured,
        'minutes to train' as unit,
        null::double as published_mfu,
        runs.source_id as benchmark_source_id,
        runs.data_as_of as benchmark_as_of,
        runs.source_ref as benchmark_ref,
        'own run: ' || coalesce(runs.run_source, runs.source_id) || ', ' || runs.chips || ' x ' || runs.accelerator_id
            || ', ' || workloads.workload_id as benchmark_label
    from runs
    inner join catalog.workloads as workloads on workloads.workload_id = runs.workload_id
    left join intermediate.int_instance_hardware as instances on instances.instance_type = runs.instance_type
    inner join peaks
        on peaks.accelerator_id = runs.accelerator_id
        and peaks.precision = coalesce(runs.precision, workloads.training_precision)
    where runs.time_to_train_minutes > 0 and runs.chips > 0 and workloads.tokens > 0
),

published_mfus as (
    -- a published figure's MFU under the 6 x N convention: implied by its tokens/s per chip where it gives them (a
    -- source's own MFU may count attention FLOPs too, as MaxText's does), else the MFU it states
    select
        runs.*,
        peaks.peak_tflops,
        coalesce(mfu_from_throughput(runs.params, runs.tokens_per_s_per_chip, peaks.peak_tflops), runs.mfu)
            as published_mfu,
        mfu_from_throughput(runs.params, runs.tokens_per_s_per_chip, peaks.peak_tflops) is not null
            as from_throughput
    from runs
    inner join peaks on peaks.accelerator_id = runs.accelerator_id and peaks.precision = runs.precision
),

published as (
    -- a published figure: minutes to train 1e9 tokens at its MFU on the run's chips
    select
        runs.source_ref as comparison_id,
        'published MFU' as measurement_basis,
        runs.source_ref as setup_key,
        runs.accelerator_id,
        runs.precision,
        runs.peak_tflops,
        runs.model_id,
        coalesce(runs.chips, runs.chips_per_instance) as chips,
        cast(greatest(1, ceil(coalesce(runs.chips, runs.chips_per_instance) / runs.chips_per_instance)) as integer)
            as instances,
        1e9 as tokens,
        training_hours(runs.params, 1e9, coalesce(runs.chips, runs.chips_per_instance), runs.peak_tflops,
                       runs.published_mfu, 1) * 60 as measured,
        'minutes to train 1e9 tokens' as unit,
        runs.published_mfu,
        runs.source_id as benchmark_source_id,
        runs.data_as_of as benchmark_as_of,
        runs.source_ref as benchmark_ref,
        case when runs.from_throughput then
            'published ' || format('{:,.0f}', round(runs.tokens_per_s_per_chip)) || ' tokens/s per chip ('
            || 'MFU ' || printf('%.3f', runs.published_mfu) || ' by 6 x N'
            || coalesce('; the source states ' || runs.mfu, '') || ') of '
        else 'published MFU ' || runs.mfu || ' of '
        end || runs.model_id || ' on ' || coalesce(runs.chips || ' x ', '')
            || runs.accelerator_id || ': ' || coalesce(runs.run_source, runs.source_id) as benchmark_label
    from published_mfus as runs
    where runs.published_mfu > 0 and runs.time_to_train_minutes is null and runs.params > 0
        and runs.chips_per_instance > 0
),

cases as (
    select
        measured.*,
        accelerators.family,
        defaults.training_mfu as default_mfu,
        scaling_factor(defaults.scaling_efficiency_per_doubling, measured.instances) as flat_scaling,
        case when measured.instances > 1 and measured.network_gbps is not null then
            comm_efficiency(
                training_flops(models.params, measured.global_batch_tokens)
                    / (measured.chips * measured.peak_tflops * 1e12 * defaults.training_mfu),
                gradient_allreduce_s(models.params, gradient_bytes(measured.precision), measured.instances,
                                     measured.network_gbps),
                defaults.allreduce_overlap)
        end as comm_scaling,
        models.params
    from (select * from mlperf union all by name select * from own_runs union all by name select * from published)
        as measured
    inner join models on models.model_id = measured.model_id
    inner join accelerators on accelerators.accelerator_id = measured.accelerator_id
    inner join defaults on defaults.family = accelerators.family
    where defaults.can_train
),

final as (
    select
        comparison_id,
        'training' as phase,
        family,
        accelerator_id,
        precision,
        null::varchar as precision_class,
        precision_source,
        model_id,
        chips,
        measurement_basis,
        unit,
        measured,
        training_hours(params, tokens, chips, peak_tflops, default_mfu, scaling) * 60 as estimated,
        training_hours(params, tokens, chips, peak_tflops, default_mfu, flat_scaling) * 60 as estimated_without_comm,
        -- above 1: the run was faster than the default MFU says (serving: measured over estimated throughput)
        training_hours(params, tokens, chips, peak_tflops, default_mfu, scaling) * 60 / measured
            as efficiency_ratio,
        setup_key,
        false as precision_doubtful,
        instances,
        tokens,
        params,
        peak_tflops,
        default_mfu,
        scaling,
        published_mfu,
        benchmark_source_id,
        benchmark_as_of,
        benchmark_ref,
        benchmark_label
    from (select *, coalesce(comm_scaling, flat_scaling) as scaling from cases)
)

select * from final
