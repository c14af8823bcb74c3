-- marts.estimate_calibration — grain: one row per run x phase x accelerator x precision class x model. The
-- efficiency factors fitted from each accelerator's measurements, which calibrated estimates use (declared defaults
-- stay in catalogs/accelerators.yaml; fitted factors live here).
with calibration as (
    select * from intermediate.int_estimate_calibration
),

final as (
    select
        getvariable('run_id') as run_id,
        cast(getvariable('as_of') as date) as as_of,
        phase,
        accelerator_id,
        precision_class,
        model_id,
        factor,
        cast(measurements as integer) as measurements,
        cast(setups as integer) as setups,
        measured_by,
        measured_precisions,
        cast(loo_comparisons as integer) as loo_comparisons,
        min_ratio,
        max_ratio,
        exceeds_peak,
        array_to_string(measurement_refs, '; ') as measurement_refs
    from calibration
)

select * from final
