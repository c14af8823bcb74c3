-- Grain: one row per inference workload x offer x allowed precision (eligible or excluded, with the reason).
-- Basis `estimated`: the decode roofline of DESIGN.md on the chip's specs with the family's declared
-- efficiencies, plus the prefill of each request's prompt on the same chips. Memory: weights + KV cache of one
-- full sequence decide the smallest tensor-parallel group (a power of two; a model too big for an instance
-- spans instances, up to the workload's limit); larger groups are tried too and the one with the most tokens
-- per instance-hour is kept. Batching: the largest batch whose KV cache fits and whose decode step meets the
-- TPOT SLO (offline work has no SLO; batches stop at 4,096).
-- Communication: a group of several chips all-reduces every token's activations twice a layer over the chips' link
-- (half the published figure each way; a group spanning instances at most its share of the instance network), added
-- to each decode step and prefill; where a figure is missing the split is not charged inside an instance and pays
-- the family's flat loss per doubling of instances, and the label says so. A calibration factor scales the link's
-- efficiency with the others: it was fitted against estimates that pay the all-reduces, so a calibrated estimate
-- reproduces the measurements it was fitted on.
-- KV cache is kept in bf16 for 16-bit weights and in fp8 for 8- and 4-bit weights. Every lower precision a chip
-- supports is tried too, and excluded when the workload's accuracy floor does not accept it.
-- Memory: DuckDB keeps a CTE that is read more than once whole, every column of every row, until the query ends. The
-- wide ones below (`not materialized`) are computed again where they are read instead: on a market of 35,000 offers
-- this query peaked at 1.39 GB with them kept and at 0.99 GB without, in the same time (`make bench`'s market).
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

hosts as (
    -- host memory per instance (listed or declared): what a CPU (family cpu) holds the model in
    select cloud, instance_type, memory_gib, network_gbps from intermediate.int_instance_hardware
),

peaks as (
    select * from intermediate.int_accelerator_precisions_listed
),

calibration as (
    select * from intermediate.int_estimate_calibration where phase = 'serving'
),

sized as not materialized (
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
        memory_gb_per_chip(accelerators.family, accelerators.memory_gb, hosts.memory_gib, offers.accelerator_count)
            as memory_gb,
        accelerators.memory_bandwidth_tbps,
        accelerators.link_gb_per_s,
        hosts.network_gbps,
        models.layers,
        models.hidden,
        defaults.usable_memory_fraction,
        -- a calibrated estimate runs at the family's efficiencies times the factor this chip's measurements fit
        defaults.bandwidth_efficiency * coalesce(calibration.factor, 1.0) as bandwidth_efficiency,
        defaults.compute_efficiency * coalesce(calibration.factor, 1.0) as compute_efficiency,
        calibration.factor as calibration_factor,
        calibration.measurements as calibration_measurements,
        calibration.measured_by as calibration_measured_by,
        calibration.exceeds_peak as calibration_exceeds_peak,
        calibration.measured_precisions as calibration_measured_precisions,
        calibration.measurement_refs as calibration_refs,
        calibration.measurements_as_of as calibration_as_of,
        defaults.scaling_efficiency_per_doubling,
        defaults.source as defaults_source,
        accelerators.family,
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
    inner join offers on offer_term_accepted(workloads.pricing_terms, offers.pricing_term, offers.term_months, workloads.months)
    inner join accelerators on accelerators.accelerator_id = offers.accelerator_id
    inner join defaults on defaults.family = accelerators.family
    left join hosts on hosts.cloud = offers.cloud and hosts.instance_type = offers.instance_type
    left join peaks on peaks.accelerator_id = offers.accelerator_id and peaks.precision = quantizations.precision
    left join calibration
        on calibration.accelerator_id = offers.accelerator_id
        and calibration.precision_class = precision_class(quantizations.precision)
        and calibration.model_id = workloads.model_id
    -- a lower precision the chip does not have is not a candidate at all
    where allowed.precision is not null or peaks.peak_tflops is not null
),

grouped as not materialized (
    select
        *,
        weights_gb + tokens_per_sequence * kv_bytes_per_token / 1e9 as one_sequence_gb,
        chips_to_hold(weights_gb + tokens_per_sequence * kv_bytes_per_token / 1e9, memory_gb,
                      usable_memory_fraction) as needed_chips,
        -- mean context while decoding: the input plus half the output
        (input_tokens + output_tokens / 2.0) * kv_bytes_per_token / 1e9 as kv_gb_per_sequence
    from sized
),

group_sizes as (
    -- the tensor-parallel groups (at most 256 chips) that tile an instance of `accelerator_count` chips (a divisor
    -- of its chip count) or span whole instances, up to `max_instances_per_replica` of them: worked out once for
    -- each of the few shapes there are, not for every candidate (an inequality join of every candidate with 256
    -- sizes was the larger part of this model's time on a large market)
    select shapes.accelerator_count, shapes.max_instances_per_replica, groups.range as replica_chips
    from (select distinct accelerator_count, max_instances_per_replica from grouped) as shapes
    inner join range(1, 257) as groups
        on groups.range <= shapes.accelerator_count * shapes.max_instances_per_replica
        and tiles_instances(groups.range, shapes.accelerator_count)
),

options as (
    -- every such group that holds one full sequence: a larger group holds more KV cache, so larger batches, and
    -- can be cheaper per token
    select grouped.workload_id, grouped.offer_id, grouped.precision, group_sizes.replica_chips
    from grouped
    inner join group_sizes
        on group_sizes.accelerator_count = grouped.accelerator_count
        and group_sizes.max_instances_per_replica = grouped.max_instances_per_replica
        and group_sizes.replica_chips >= grouped.needed_chips
),

smallest_groups as (
    select workload_id, offer_id, precision, min(replica_chips) as smallest_group
    from options
    group by workload_id, offer_id, precision
),

checked as not materialized (
    select
        grouped.*,
        smallest_groups.smallest_group,
        case
            when not is_accurate_enough then
                precision || ' is not among the precisions the workload lists (' || accepted_precisions
                || ' in workloads.yaml)'
            when peak_tflops is null then
                'the catalog has no ' || precision || ' peak for ' || accelerator_id || ': it cannot be estimated at '
                || precision
            when memory_gb is null or memory_bandwidth_tbps is null then
                'the catalog has no memory size or bandwidth for ' || accelerator_id
            when smallest_groups.smallest_group is null then  -- no group holds one full sequence
                format('{:,}', cast(round(one_sequence_gb) as bigint)) || ' GB of ' || precision
                || ' weights + KV cache need ' || chips_text(needed_chips, family) || ' of '
                || declared_text(round(memory_gb, 2)) || ' GB (' || cast(round(usable_memory_fraction * 100) as bigint)
                || '% usable); ' || instance_type || ' has ' || format('{:,}', accelerator_count)
                || case when max_instances_per_replica > 1
                        then ' and a replica may span ' || format('{:,}', max_instances_per_replica) || ' instances'
                        else '' end
        end as precheck_reason
    from grouped
    left join smallest_groups using (workload_id, offer_id, precision)
),

batched as (
    select
        *,
        replica_instances(replica_chips, accelerator_count) as instances_per_replica,
        replicas_per_instance(replica_chips, accelerator_count) as replicas_per_instance,
        -- the largest batch whose KV cache fits beside the weights ...
        batch_memory(weights_gb, kv_bytes_per_token, tokens_per_sequence, replica_chips, memory_gb,
                     usable_memory_fraction) as batch_memory,
        -- ... and whose time between tokens meets the TPOT SLO (offline work: none)
        batch_for_tpot(case when not is_offline then slo_tpot_ms end, weights_gb, kv_gb_per_sequence,
                       params_active, peak_tflops, replica_chips, memory_bandwidth_tbps, bandwidth_efficiency,
                       compute_efficiency, prefill_s, output_tokens, comm_s_per_token) as batch_slo
    from (
        select
            *,
            prefill_s(params_active, input_tokens, replica_chips, peak_tflops, compute_efficiency, comm_s_per_token)
                as prefill_s
        from (
            select
                *,
                -- no figure: the split is not charged here (the flat loss per doubling of instances applies)
                coalesce(tp_comm_s_per_token(layers, hidden, replica_chips,
                                             link_each_way * coalesce(calibration_factor, 1.0)), 0)
                    as comm_s_per_token,
                replica_chips = 1 or link_each_way is not null as comm_modelled
            from (
                select
                    checked.* exclude (smallest_group),
                    options.replica_chips,
                    tp_link_gb_per_s(checked.link_gb_per_s, options.replica_chips, checked.accelerator_count,
                                     checked.network_gbps) as link_each_way
                from checked
                inner join options using (workload_id, offer_id, precision)
                where checked.precheck_reason is null
            )
        )
    )
),

timed as not materialized (
    select
        *,
        cast(least(batch_memory, batch_slo, 4096) as integer) as batch,
        decode_step_s(weights_gb, kv_gb_per_sequence, least(batch_memory, batch_slo, 4096), params_active,
                      peak_tflops, replica_chips, memory_bandwidth_tbps, bandwidth_efficiency, compute_efficiency,
                      comm_s_per_token) as step_s
    from batched
),

served as (
    -- each batch decodes output_tokens steps and prefills its requests' prompts on the same chips
    select
        *,
        replica_tokens_per_s(batch, output_tokens, step_s, prefill_s)
            * case when comm_modelled then 1.0
                   else scaling_factor(scaling_efficiency_per_doubling, instances_per_replica) end
            as replica_tokens_per_s,
        -- the share of a batch's time spent in all-reduces: each sequence's output tokens and prompt tokens
        batch * comm_s_per_token * (output_tokens + input_tokens) / (output_tokens * step_s + batch * prefill_s)
            as comm_share
    from timed
    where batch >= 1 and (slo_ttft_ms is null or prefill_s * 1000 <= slo_ttft_ms)
),

best as (
    select
        *,
        -- a split inside one instance whose chip publishes no link figure: its all-reduces are not charged (the label
        -- says so; a split across instances pays the flat loss instead)
        replica_chips > 1 and not comm_modelled and instances_per_replica = 1 as split_uncharged
    from served
    qualify row_number() over (
        partition by workload_id, offer_id, precision
        order by replicas_per_instance * replica_tokens_per_s / instances_per_replica desc, replica_chips
    ) = 1
),

smallest as (
    -- the smallest group's figures, to say why nothing was feasible
    select workload_id, offer_id, precision, batch, batch_slo, prefill_s, step_s
    from timed
    qualify row_number() over (partition by workload_id, offer_id, precision order by replica_chips) = 1
),

fastest as (
    -- the quickest any group serves one sequence alone (batch 1): what an objective it misses is compared with
    select
        workload_id, offer_id, precision,
        min((decode_step_s(weights_gb, kv_gb_per_sequence, 1, params_active, peak_tflops, replica_chips,
                           memory_bandwidth_tbps, bandwidth_efficiency, compute_efficiency, comm_s_per_token)
             + prefill_s / output_tokens) * 1000) as fastest_tpot_ms,
        min(prefill_s * 1000) as fastest_prefill_ms
    from batched
    group by workload_id, offer_id, precision
),

final as (
    select
        checked.workload_id,
        checked.offer_id, checked.cloud, checked.region, checked.instance_type, checked.pricing_term,
        checked.accelerator_id, checked.accelerator_count, checked.usd_per_hour, checked.usd_per_chip_hour,
        checked.price_source_id, checked.price_as_of, checked.price_ref,
        checked.precision,
        precision_class(checked.precision) as precision_class,
        checked.weights_gb,
        checked.kv_bytes_per_token,
        checked.memory_gb as memory_gb_per_chip,
        checked.one_sequence_gb,
        fastest.fastest_tpot_ms,
        fastest.fastest_prefill_ms,
        coalesce(best.replica_chips, checked.smallest_group) as replica_chips,
        best.instances_per_replica,
        best.replicas_per_instance,
        best.batch,
        (best.step_s + best.batch * best.prefill_s / checked.output_tokens) * 1000 as tpot_ms,
        best.prefill_s * 1000 as prefill_ms,
        best.replica_tokens_per_s,
        best.replica_tokens_per_s / best.replica_chips as tokens_per_s_per_chip,
        -- the share of a replica's time spent prefilling prompts (the rest decodes): a batch takes output_tokens
        -- decode steps plus batch prefills, so this splits its cost between input and output tokens
        best.batch * best.prefill_s / (checked.output_tokens * best.step_s + best.batch * best.prefill_s)
            as prefill_share,
        case when best.comm_modelled then best.comm_share end as comm_share,
        best.link_each_way as link_gb_per_s_each_way,
        best.comm_modelled,
        coalesce(best.split_uncharged, false) as split_uncharged,
        case when checked.calibration_factor is not null then 'calibrated' else 'estimated' end as basis,
        checked.calibration_factor,
        checked.calibration_measurements,
        'roofline on ' || checked.accelerator_id || ' specs: ' || checked.precision || ', TP '
            || format('{:,}', coalesce(best.replica_chips, checked.smallest_group)) || ', batch '
            || format('{:,}', coalesce(best.batch, 0))
            || case
                when best.replica_chips is null or best.replica_chips = 1 then ''
                when best.comm_modelled then
                    '; all-reduces ' || printf('%.1f', best.comm_share * 100) || '% of the time at '
                    || printf('%g', best.link_each_way) || ' GB/s each way'
                    || case when best.instances_per_replica > 1 then ' (across ' || best.instances_per_replica
                            || ' instances)' else '' end
                when best.split_uncharged then
                    '; no link figure for ' || checked.accelerator_id || ': the split is not charged'
                else '; no link or network figure for the split across ' || best.instances_per_replica
                    || ' instances: flat ' || checked.scaling_efficiency_per_doubling || ' per doubling (declared)'
               end
            || case when checked.calibration_factor is not null then
                    '; efficiencies x ' || figures_text(checked.calibration_factor) || ' fitted from '
                    || checked.calibration_measurements || ' ' || checked.calibration_measured_by || ' result'
                    || case when checked.calibration_measurements > 1 then 's' else '' end || ' of '
                    || checked.accelerator_id || ' at ' || checked.precision
                    -- as estimates.md names the factor: fp16 results fit the bf16 class's factor
                    || case when checked.calibration_measured_precisions is distinct from checked.precision
                            then ' (' || checked.calibration_measured_precisions || ' results)' else '' end
                    || ' on this model'
                    -- the date the row carries (benchmark_as_of): its newest measurement's
                    || calibrated_as_of(checked.calibration_as_of, checked.calibration_measurements)
                    || case when checked.calibration_exceeds_peak then
                            ' (past the chip''s peak: their precision or request shape is not what the estimate assumes)'
                       else '' end
                else '; uncalibrated: no measurement of this model on ' || checked.accelerator_id || ' at '
                    || checked.precision || ', family defaults'
            end as benchmark_label,
        case when checked.calibration_factor is not null then 'marts.estimate_backtest'
             else checked.defaults_source end as benchmark_source_id,
        -- a calibrated row: the newest of the measurements its factor was fitted from; an estimate has none
        case when checked.calibration_factor is not null then checked.calibration_as_of end as benchmark_as_of,
        case when checked.calibration_factor is not null then
                -- the first 5 measurements by name (all of them: marts.estimate_calibration)
                'fitted from ' || array_to_string(list_slice(checked.calibration_refs, 1, 5), '; ')
                || case when len(checked.calibration_refs) > 5 then
                        '; and ' || (len(checked.calibration_refs) - 5) || ' more (marts.estimate_calibration)'
                   else '' end
            else 'catalogs/accelerators.yaml: family_defaults.' || checked.family || ' + accelerators.'
                || checked.accelerator_id
        end as benchmark_ref,
        coalesce(
            checked.precheck_reason,
            case
                when best.batch is not null then null
                when smallest.batch is null or smallest.batch < 1 then
                    coalesce('cannot meet the TPOT SLO of ' || declared_text(checked.slo_tpot_ms)
                             || ' ms even at batch 1', 'the KV cache of one sequence does not fit beside the weights')
                when checked.slo_ttft_ms is not null and smallest.prefill_s * 1000 > checked.slo_ttft_ms then
                    'prefill of ' || format('{:,}', checked.input_tokens) || ' tokens takes '
                    || format('{:,}', cast(round(smallest.prefill_s * 1000) as bigint))
                    || ' ms, above the TTFT SLO of ' || declared_text(checked.slo_ttft_ms) || ' ms'
                else 'no tensor-parallel group meets the SLOs'
            end
        ) as exclusion_reason,
        -- the exclusion_reason's kind, for the reports' CPU baseline: precision | no_figure | memory | tpot | ttft | slo
        case
            when not checked.is_accurate_enough then 'precision'
            when checked.peak_tflops is null or checked.memory_gb is null or checked.memory_bandwidth_tbps is null
                then 'no_figure'
            when checked.precheck_reason is not null then 'memory'
            when best.batch is not null then null
            when smallest.batch is null or smallest.batch < 1 then
                case when checked.slo_tpot_ms is not null and smallest.batch_slo < 1 then 'tpot' else 'memory' end
            when checked.slo_ttft_ms is not null and smallest.prefill_s * 1000 > checked.slo_ttft_ms then 'ttft'
            else 'slo'
        end as exclusion_kind
    from checked
    left join best using (workload_id, offer_id, precision)
    left join smallest using (workload_id, offer_id, precision)
    left join fastest using (workload_id, offer_id, precision)
)

select * from final
