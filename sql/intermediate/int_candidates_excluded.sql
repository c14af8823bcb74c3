-- Grain: one row per workload x offer x precision (inference) or chip count (training) that cannot run the
-- workload, with the reason. Nothing is dropped silently: the reports list these beside the rankings.
with training as (
    select * from intermediate.int_training_estimates_computed where exclusion_reason is not null
),

inference as (
    select * from intermediate.int_inference_estimates_computed where exclusion_reason is not null
),

measured_inference as (
    -- an estimate excluded where a measured result runs it is not an exclusion
    select workload_id, offer_id, precision_class from intermediate.int_inference_measured
),

final as (
    select workload_id, offer_id, cloud, region, instance_type, pricing_term, accelerator_id, accelerator_count,
           precision, chips, exclusion_reason
    from training
    union all by name
    select inference.workload_id, inference.offer_id, inference.cloud, inference.region, inference.instance_type,
           inference.pricing_term, inference.accelerator_id, inference.accelerator_count, inference.precision,
           inference.replica_chips as chips, inference.exclusion_reason
    from inference
    anti join measured_inference using (workload_id, offer_id, precision_class)
)

select * from final
