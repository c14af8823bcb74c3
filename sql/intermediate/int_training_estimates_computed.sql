-- Grain: one row per model + tokens training workload x offer (eligible or excluded, with the reason).
-- Chips: the workload's chip count, at least the fewest that hold the training state (params x
-- state_bytes_per_param), rounded up to whole instances. Time: 6 x params x tokens over the chips' effective
-- FLOP/s. Basis `scaled` where this accelerator has a published training MFU of this very model (a benchmark_runs
-- training row of the workload's precision; its tokens/s per chip as an MFU by 6 x N where it gives them), measured
-- at its own scale, so only instances beyond it pay the scaling loss. Basis `calibrated`
-- where the accelerator has training measurements of any model (own runs first, then MLPerf and published MFUs):
-- the family default MFU times the factor they fit (int_estimate_calibration), with the scaling loss between
-- instances. Basis `estimated` with the workload's declared MFU, or the family default (uncalibrated).
-- Between instances: each optimizer step (global_batch_tokens) all-reduces the gradients over the instances'
-- network (2 x (n-1)/n x params x bytes), hidden behind the step's compute up to the family's allreduce_overlap;
-- the rest adds to the step. Without a network figure (and for a published MFU, measured at its own scale, beyond
-- that scale) the flat declared loss per doubling of instances stays, labelled. Interruptions are priced in
-- int_training_costs_computed.
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

hosts as (
    -- host memory per instance (listed or declared): what a CPU (family cpu) holds the training state in
    select cloud, instance_type, memory_gib, network_gbps from intermediate.int_instance_hardware
),

peaks as (
    select * from intermediate.int_accelerator_precisions_listed
),

calibration as (
    select * from intermediate.int_estimate_calibration where phase = 'training'
),

published_figures as (
    -- published training figures landed as benchmark_runs rows (kind training). Where a row gives its tokens/s per
    -- chip, the MFU is the one that throughput implies under our 6 x N convention at the row's precision peak: a
    -- source's own MFU may count more FLOPs (MaxText's adds attention) and would train 8-21% too fast in 6 x N x D.
    -- The row's own `mfu` stands only where no throughput is given.
    select
        runs.model_id,
        runs.accelerator_id as accelerator,
        runs.precision,
        runs.chips,
        coalesce(mfu_from_throughput(models.params, runs.tokens_per_s_per_chip, peaks.peak_tflops), runs.mfu) as mfu,
        runs.mfu as stated_mfu,
        case when mfu_from_throughput(models.params, runs.tokens_per_s_per_chip, peaks.peak_tflops) is not null
             then runs.tokens_per_s_per_chip end as tokens_per_s_per_chip,
        runs.source_id,
        runs.data_as_of,
        runs.source_ref,
        coalesce(runs.run_source, runs.source_id) as source
    from staging.stg_benchmark_runs__results as runs
    inner join models on models.model_id = runs.model_id
    left join peaks on peaks.accelerator_id = runs.accelerator_id and peaks.precision = runs.precision
    where runs.kind = 'training'
),

published as (
    -- one figure per model, accelerator and precision: a figure of another precision is a share of another peak and
    -- never makes a workload's row `scaled` (it still calibrates the chip through the back-test, at its own peak)
    select *
    from published_figures
    where mfu > 0 and precision is not null
    qualify row_number() over (partition by model_id, accelerator, precision order by mfu desc, source_ref) = 1
),

sized as (
    select
        workloads.workload_id,
        workloads.tokens,
        workloads.training_precision as precision,
        workloads.deadline_hours,
        workloads.global_batch_tokens,
        workloads.mfu as workload_mfu,
        workloads.model_id,
        models.params,
        offers.*,
        accelerators.family,
        memory_gb_per_chip(accelerators.family, accelerators.memory_gb, hosts.memory_gib, offers.accelerator_count)
            as memory_gb,
        defaults.training_mfu as default_mfu,
        defaults.usable_memory_fraction,
        defaults.scaling_efficiency_per_doubling,
        defaults.allreduce_overlap,
        hosts.network_gbps,
        defaults.can_train,
        defaults.source as defaults_source,
        peaks.peak_tflops,
        chips_to_hold(models.params * workloads.state_bytes_per_param / 1e9,
                      memory_gb_per_chip(accelerators.family, accelerators.memory_gb, hosts.memory_gib,
                                         offers.accelerator_count),
                      defaults.usable_memory_fraction) as state_chips,
        instances_needed(
            greatest(coalesce(workloads.training_chips, 0),
                     chips_to_hold(models.params * workloads.state_bytes_per_param / 1e9,
                                   memory_gb_per_chip(accelerators.family, accelerators.memory_gb, hosts.memory_gib,
                                                      offers.accelerator_count),
                                   defaults.usable_memory_fraction)),
            offers.accelerator_count
        ) as instances
    from workloads
    inner join models on models.model_id = workloads.model_id
    inner join offers on offer_term_accepted(workloads.pricing_terms, offers.pricing_term, offers.term_months, workloads.months)
    inner join accelerators on accelerators.accelerator_id = offers.accelerator_id
    inner join defaults on defaults.family = accelerators.family
    left join hosts on hosts.cloud = offers.cloud and hosts.instance_type = offers.instance_type
    left join peaks
        on peaks.accelerator_id = offers.accelerator_id and peaks.precision = workloads.training_precision
),

sourced as (
    select
        sized.*,
        sized.instances * sized.accelerator_count as chips,
        same_model.mfu as same_model_mfu,
        same_model.stated_mfu as same_model_stated_mfu,
        same_model.tokens_per_s_per_chip as same_model_tokens_per_s_per_chip,
        same_model.source as same_model_source,
        same_model.source_id as same_model_source_id,
        same_model.data_as_of as same_model_as_of,
        same_model.source_ref as same_model_ref,
        same_model.chips as same_model_chips,
        calibration.factor as calibration_factor,
        calibration.measurements as calibration_measurements,
        calibration.measured_by as calibration_measured_by,
        calibration.exceeds_peak as calibration_exceeds_peak,
        calibration.measurement_refs as calibration_refs,
        calibration.measurements_as_of as calibration_as_of
    from sized
    left join published as same_model
        on same_model.model_id = sized.model_id and same_model.accelerator = sized.accelerator_id
        and same_model.precision = sized.precision
    left join calibration on calibration.accelerator_id = sized.accelerator_id
),

based as (
    select
        *,
        case
            when workload_mfu is not null then 'workload'
            when same_model_mfu is not null then 'same_model'
            when calibration_factor is not null then 'calibrated'
            else 'default'
        end as mfu_from
    from sourced
),

timed as (
    select
        *,
        case mfu_from when 'same_model' then 'scaled' when 'calibrated' then 'calibrated' else 'estimated' end
            as basis,
        case mfu_from
            when 'workload' then workload_mfu
            when 'same_model' then same_model_mfu
            -- the factor was fitted against estimates that pay the scaling loss: it is a scale-free efficiency
            when 'calibrated' then default_mfu * calibration_factor
            else default_mfu
        end as mfu,
        -- a published figure of this model was measured at its own scale: only the instances beyond it lose more
        -- (a figure without a chip count is taken as measured on one instance)
        pow(scaling_efficiency_per_doubling, greatest(0, log2(instances) - log2(
            case mfu_from
                when 'same_model' then greatest(1, ceil(coalesce(same_model_chips, 1) / accelerator_count))
                else 1
            end))) as flat_scaling
    from based
),

communicated as (
    select
        *,
        -- one step's compute at this MFU, and its gradient all-reduce between the instances (null: no figure)
        training_flops(params, global_batch_tokens) / (chips * peak_tflops * 1e12 * mfu) as step_compute_s,
        case when instances = 1 then 0.0
             else gradient_allreduce_s(params, gradient_bytes(precision), instances, network_gbps) end
            as step_comm_s,
        instances = 1 or (network_gbps is not null and mfu_from <> 'same_model') as comm_modelled
    from timed
),

scaled as (
    select
        *,
        case when comm_modelled then comm_efficiency(step_compute_s, step_comm_s, allreduce_overlap)
             else flat_scaling end as scaling
    from communicated
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
        -- the share of the run's time spent communicating between instances and not hidden behind compute; null where
        -- the flat declared loss stands in for it (the label says so)
        case when comm_modelled then 1 - scaling end as comm_share,
        comm_modelled,
        step_comm_s,
        training_hours(params, tokens, chips, peak_tflops, mfu, scaling) as run_hours,
        training_hours(params, tokens, chips, peak_tflops, mfu, scaling) * 60 as time_to_train_minutes,
        basis,
        case mfu_from
            when 'workload' then 'MFU ' || mfu || ' declared by the workload'
            when 'same_model' then
                case when same_model_tokens_per_s_per_chip is not null then
                    'published ' || format('{:,.0f}', round(same_model_tokens_per_s_per_chip))
                    || ' tokens/s per chip of this model on ' || accelerator_id || ' at ' || precision || ', MFU '
                    || printf('%.3f', mfu) || ' by 6 x N'
                    || coalesce(' (the source states MFU ' || same_model_stated_mfu
                                || case when same_model_stated_mfu > mfu
                                        then ': it counts FLOPs beyond 6 x N, e.g. attention' else '' end || ')', '')
                else 'published MFU ' || mfu || ' of this model on ' || accelerator_id || ' at ' || precision
                end || ': ' || same_model_source
            when 'calibrated' then 'calibrated MFU ' || printf('%.3f', mfu) || ' (family default ' || default_mfu
                || ' x ' || figures_text(calibration_factor) || ' fitted from ' || calibration_measurements || ' '
                || calibration_measured_by || ' result' || case when calibration_measurements > 1 then 's' else '' end
                || ' of ' || accelerator_id
                -- the date the row carries (benchmark_as_of): its newest measurement's
                || calibrated_as_of(calibration_as_of, calibration_measurements) || ')'
                -- the factor was fitted net of the scaling loss, so the MFU alone reads high: what it comes to at
                -- this row's instances where they lose any (mfu x scaling, the efficiency training_hours divides by)
                || case when scaling < 1 then
                        ', ' || printf('%.3f', mfu * scaling) || ' effective at ' || format('{:,}', instances)
                        || ' instances'
                   else '' end
                || case when calibration_exceeds_peak then '; the factor takes the MFU past 1: the measurements are not '
                        || 'the setup the estimate assumes' else '' end
            else 'family default MFU ' || mfu || ' (declared assumption; uncalibrated: no training measurement of '
                || accelerator_id || ')'
        end
        || case
            when instances = 1 then ''
            when comm_modelled then
                '; gradient all-reduce ' || printf('%.2f', step_comm_s) || ' s a step of '
                || printf('%.2f', step_compute_s) || ' s over ' || declared_text(network_gbps) || ' Gbit/s, '
                || printf('%.1f', (1 - scaling) * 100) || '% of the time exposed'
            when mfu_from = 'same_model' then
                '; flat ' || scaling_efficiency_per_doubling || ' per doubling of instances beyond the measured scale'
            else '; no network figure for ' || instance_type || ': flat ' || scaling_efficiency_per_doubling
                || ' per doubling of ' || format('{:,}', instances) || ' instances (declared)'
        end as benchmark_label,
        case mfu_from
            when 'workload' then 'workloads.yaml'
            when 'same_model' then same_model_source_id
            when 'calibrated' then 'marts.estimate_backtest'
            else defaults_source
        end as benchmark_source_id,
        case mfu_from
            when 'same_model' then same_model_as_of
            when 'calibrated' then calibration_as_of  -- the newest of the measurements the factor was fitted from
        end as benchmark_as_of,
        case mfu_from
            when 'workload' then 'catalogs/workloads.yaml: workloads.' || workload_id || '.mfu'
            when 'same_model' then same_model_ref
            -- the first 5 measurements by name (all of them: marts.estimate_calibration)
            when 'calibrated' then 'fitted from ' || array_to_string(list_slice(calibration_refs, 1, 5), '; ')
                || case when len(calibration_refs) > 5 then
                        '; and ' || (len(calibration_refs) - 5) || ' more (marts.estimate_calibration)'
                   else '' end
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
                -- numbers as the pages write them (thousands separated, hours as the Full ranking writes them,
                -- with a decimal more where that would not read as past the deadline), since the reason is shown
                -- as it is; formatted from the double, as a cast to an integer type fails the build past its range
                'needs ' || hours_needed_text(training_hours(params, tokens, chips, peak_tflops, mfu, scaling),
                                              deadline_hours)
                || ' h on ' || chips_text(chips, family) || '; the deadline is '
                || deadline_text(deadline_hours) || ' h'
        end as exclusion_reason
    from scaled
)

select * from final
