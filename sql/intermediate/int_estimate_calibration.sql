-- Grain: one row per phase x accelerator x precision class x model (serving; training: '*' for both) that has
-- measurements: the efficiency factor fitted from them, which a `calibrated` estimate multiplies the
-- family's declared efficiencies by (serving: memory-bandwidth and compute efficiency; training: the MFU). The
-- factor is the geometric mean of the measurements' efficiency ratios (int_serving_backtest, int_training_backtest:
-- how many times more efficient the measurement was than the family default); the user's own runs first: where an
-- accelerator has any, MLPerf and published figures do not count. Training fits one factor per accelerator (an MFU
-- is a share of the peak at the precision it ran, and the back-test finds it carries across models); serving fits one
-- per precision class and model and lends it to no other (the factor absorbs the request shape as much as the chip:
-- the back-test found 3.7 for Llama-2-70B at bf16 and 0.55 for Llama-3.1-8B at fp8 on the same H100). Declared defaults stay in the catalogs; fitted factors live here.
-- `loo_comparisons`: how many of the accelerator's comparisons (serving: at that precision class and model) the
-- leave-one-out back-test predicted from another setup (int_estimate_backtest): none where the factor comes from one
-- setup, so its calibrated rows' error band (the family's leave-one-out spread) was never tested on this chip.
-- `measured_precisions`: the precisions the measurements declared (fp16 results fit the bf16 class's factor).
-- `measurements_as_of`: the newest of the measurements' as-of dates, the date a calibrated row names.
with comparisons as (
    -- a result whose declared precision is doubtful calibrates nothing
    select phase, accelerator_id, precision, precision_class, model_id, efficiency_ratio, measurement_basis,
        setup_key, benchmark_as_of, benchmark_ref, benchmark_label
    from intermediate.int_serving_backtest
    where not precision_doubtful
    union all by name
    select phase, accelerator_id, precision, '*' as precision_class, '*' as model_id, efficiency_ratio,
        measurement_basis, setup_key, benchmark_as_of, benchmark_ref, benchmark_label
    from intermediate.int_training_backtest
),

loo_tested as (
    -- the comparisons a calibration fitted on other setups predicted, as the calibrated error band counts them
    -- (sql/intermediate/int_estimate_bands.sql)
    select
        phase,
        accelerator_id,
        case phase when 'training' then '*' else precision_class(precision) end as precision_class,
        case phase when 'training' then '*' else model_id end as model_id,
        count(*) as loo_comparisons
    from intermediate.int_estimate_backtest
    where loo_measurements > 0 and not precision_doubtful
    group by all
),

tiered as (
    -- own runs first
    select *
    from comparisons
    qualify dense_rank() over (
        partition by phase, accelerator_id, precision_class, model_id
        order by case measurement_basis when 'own run' then 1 else 2 end
    ) = 1
),

fitted as (
    select
        phase,
        accelerator_id,
        precision_class,
        model_id,
        -- the mean taken in one fixed order: a parallel avg() may round the last bit differently run to run
        exp(list_avg(list(ln(efficiency_ratio) order by benchmark_ref, efficiency_ratio))) as factor,
        count(*) as measurements,
        count(distinct setup_key) as setups,
        string_agg(distinct measurement_basis, ', ' order by measurement_basis) as measured_by,
        string_agg(distinct precision, ', ' order by precision) as measured_precisions,
        list(benchmark_ref order by benchmark_ref) as measurement_refs,
        -- a calibrated row's as-of date: its newest measurement's (the labels say "(newest)")
        max(benchmark_as_of) as measurements_as_of,
        min(efficiency_ratio) as min_ratio,
        max(efficiency_ratio) as max_ratio
    from tiered
    where efficiency_ratio > 0
    group by phase, accelerator_id, precision_class, model_id
),

final as (
    -- a factor that takes an efficiency past 1 (more than the chip's peak bandwidth or FLOP/s) is kept, and said:
    -- the measurements' precision or request shape, or the chip's specs, are not what the estimate assumed
    select
        fitted.*,
        coalesce(loo_tested.loo_comparisons, 0) as loo_comparisons,
        case fitted.phase
            when 'serving' then greatest(defaults.bandwidth_efficiency, defaults.compute_efficiency) * fitted.factor
            else defaults.training_mfu * fitted.factor
        end > 1 as exceeds_peak
    from fitted
    left join loo_tested using (phase, accelerator_id, precision_class, model_id)
    inner join catalog.accelerators as accelerators using (accelerator_id)
    inner join catalog.family_defaults as defaults on defaults.family = accelerators.family
)

select * from final
