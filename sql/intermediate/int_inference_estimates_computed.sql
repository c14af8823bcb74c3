-- Grain: one row per inference workload x offer x allowed precision (eligible or excluded, with the reason).
-- Basis `estimated`: the roofline of DESIGN.md on the chip's specs with the family's declared efficiencies.
-- Memory: weights + KV cache of one full sequence decide the tensor-parallel group (a power of two; a model
-- too big for an instance spans instances, up to the workload's limit). Batching: the largest batch (1 .. 1024)
-- whose KV cache fits beside the weights and whose decode step meets the TPOT SLO; offline work has no SLO.
-- KV cache is kept in bf16 for 16-bit weights and in fp8 for 8- and 4-bit weights. Every lower precision a chip
-- supports is tried too, and excluded when the workload's accuracy floor does not accept it.
with workloads as (
    select * from catalog.workloads where kind = 'inference'
),

allowed as (
    select * from catalog.workload_precisions
),

quantizations as (
    -- every precision a candidate could run at: the workload's own, and every lower one a chip in the catalog
    -- supports (the accuracy floor excludes the latter, and the report lists them with that reason)
    select distinct workloads.workload_id, peaks.precision
    from workloads
    cross join (select distinct precision from intermediate.int_accelerator_precisions_listed
                where precision in ('fp8', 'int8', 'fp4', 'int4')) as peaks
    union
    select workload_id, precision from allowed
),

accepted as (
    select workload_id, string_agg(precision, ', ' order by precision) as accepted_precisions
    from allowed
    group by workload_id
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

peaks as (
    select * from intermediate.int_accelerator_precisions_listed
),

batches as (
    select cast(pow(2, range) as integer) as batch from range(0, 11)
),

sized as (
    select
        workloads.workload_id,
        workloads.input_tokens,
        workloads.output_tokens,
        workloads.is_offline,
        workloads.slo_tpot_ms,
        workloads.slo_ttft_ms,
        workloads.max_instances_per_replica,
        quantizations.precision,
        allowed.precision is not null as is_accurate_enough,
        accepted.accepted_precisions,
        offers.*,
        accelerators.memory_gb,
        accelerators.memory_bandwidth_tbps,
        defaults.usable_memory_fraction,
        defaults.bandwidth_efficiency,
        defaults.compute_efficiency,
        defaults.scaling_efficiency_per_doubling,
        peaks.peak_tflops,
        coalesce(models.active_params, models.params) as params_active,
        weights_gb(models.params, quantizations.precision) as weights_gb,
        kv_cache_bytes_per_token(models.layers, models.kv_heads, models.head_dim,
                                 case when bytes_per_value(quantizations.precision) >= 2 then 'bf16' else 'fp8' end)
            as kv_bytes_per_token,
        workloads.input_tokens + workloads.output_tokens as tokens_per_sequence
    from workloads
    inner join quantizations using (workload_id)
    left join allowed using (workload_id, precision)
    inner join accepted using (workload_id)
    inner join models on models.model_id = workloads.model_id
    cross join offers
    inner join accelerators on accelerators.accelerator_id = offers.accelerator_id
    inner join defaults on defaults.family = accelerators.family
    left join peaks on peaks.accelerator_id = offers.accelerator_id and peaks.precision = quantizations.precision
    -- a lower precision the chip does not have is not a candidate at all
    where allowed.precision is not null or peaks.peak_tflops is not null
),

grouped as (
    select
        *,
        weights_gb + tokens_per_sequence * kv_bytes_per_token / 1e9 as one_sequence_gb,
        tensor_parallel_group(chips_to_hold(weights_gb + tokens_per_sequence * kv_bytes_per_token / 1e9,
                                            memory_gb, usable_memory_fraction)) as replica_chips
    from sized
),

placed as (
    select
        *,
        replica_instances(replica_chips, accelerator_count) as instances_per_replica,
        replicas_per_instance(replica_chips, accelerator_count) as replicas_per_instance,
        -- mean context while decoding: the input plus half the output
        (input_tokens + output_tokens / 2.0) * kv_bytes_per_token / 1e9 as kv_gb_per_sequence,
        2 * params_active * input_tokens / (replica_chips * peak_tflops * 1e12 * compute_efficiency) as prefill_s
    from grouped
),

checked as (
    select
        *,
        case
            when not is_accurate_enough then
                precision || ' is below the workload''s accuracy floor (it accepts ' || accepted_precisions || ')'
            when peak_tflops is null then
                'no published ' || precision || ' peak for ' || accelerator_id || ': the chip cannot run the model at '
                || precision
            when memory_gb is null or memory_bandwidth_tbps is null then
                'memory size or bandwidth of ' || accelerator_id || ' not published'
            when instances_per_replica > max_instances_per_replica then
                cast(round(one_sequence_gb) as bigint) || ' GB of ' || precision || ' weights + KV cache need '
                || replica_chips || ' chips of ' || cast(memory_gb as bigint) || ' GB (' || cast(round(
                usable_memory_fraction * 100) as bigint) || '% usable); ' || instance_type || ' has '
                || accelerator_count
            when slo_ttft_ms is not null and prefill_s * 1000 > slo_ttft_ms then
                'prefill of ' || input_tokens || ' tokens takes ' || cast(round(prefill_s * 1000) as bigint)
                || ' ms, above the TTFT SLO of ' || cast(slo_ttft_ms as bigint) || ' ms'
        end as exclusion_reason
    from placed
),

swept as (
    select
        checked.workload_id,
        checked.offer_id,
        checked.precision,
        batches.batch,
        decode_step_s(checked.weights_gb, checked.kv_gb_per_sequence, batches.batch, checked.params_active,
                      checked.peak_tflops, checked.replica_chips, checked.memory_bandwidth_tbps,
                      checked.bandwidth_efficiency, checked.compute_efficiency) as step_s,
        checked.slo_tpot_ms,
        checked.is_offline
    from checked
    inner join batches
        on fits_in_memory(checked.weights_gb, checked.kv_bytes_per_token, batches.batch, checked.tokens_per_sequence,
                          checked.replica_chips, checked.memory_gb, checked.usable_memory_fraction)
    where checked.exclusion_reason is null
),

best_batch as (
    select workload_id, offer_id, precision, batch, step_s
    from swept
    where is_offline or slo_tpot_ms is null or step_s * 1000 <= slo_tpot_ms
    qualify row_number() over (partition by workload_id, offer_id, precision order by batch desc) = 1
),

batch_one as (
    select workload_id, offer_id, precision, step_s from swept where batch = 1
),

final as (
    select
        checked.workload_id,
        checked.offer_id, checked.cloud, checked.region, checked.instance_type, checked.pricing_term,
        checked.accelerator_id, checked.accelerator_count, checked.usd_per_hour, checked.usd_per_chip_hour,
        checked.price_source_id, checked.price_as_of, checked.price_ref,
        checked.precision,
        checked.precision as precision_class,
        checked.weights_gb,
        checked.kv_bytes_per_token,
        checked.replica_chips,
        checked.instances_per_replica,
        checked.replicas_per_instance,
        best_batch.batch,
        best_batch.step_s * 1000 as tpot_ms,
        best_batch.batch / best_batch.step_s
            * scaling_factor(checked.scaling_efficiency_per_doubling, checked.instances_per_replica)
            as replica_tokens_per_s,
        best_batch.batch / best_batch.step_s
            * scaling_factor(checked.scaling_efficiency_per_doubling, checked.instances_per_replica)
            / checked.replica_chips as tokens_per_s_per_chip,
        'estimated' as basis,
        'roofline on ' || checked.accelerator_id || ' specs: TP ' || checked.replica_chips || ', batch '
            || coalesce(best_batch.batch, 0) || ', ' || checked.precision as benchmark_label,
        null as benchmark_source_id,
        null::date as benchmark_as_of,
        null as benchmark_ref,
        coalesce(
            checked.exclusion_reason,
            case when best_batch.batch is null then
                'cannot meet the TPOT SLO of ' || cast(checked.slo_tpot_ms as bigint) || ' ms even at batch 1 (a step takes '
                || coalesce(cast(round(batch_one.step_s * 1000) as bigint) || ' ms)', 'the KV cache of one sequence does not fit)')
            end
        ) as exclusion_reason
    from checked
    left join best_batch using (workload_id, offer_id, precision)
    left join batch_one using (workload_id, offer_id, precision)
)

select * from final
