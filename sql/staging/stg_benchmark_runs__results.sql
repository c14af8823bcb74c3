-- Grain: one row per benchmark run landed this run, `kind` as given: a serving run (one concurrency level of one
-- setup) with throughput per chip, latency percentiles and the share of requests that succeeded, an offline run
-- with throughput per chip and its request shape only (latency and success rate null), an own training run of a
-- catalog workload with its time to train, or a published training figure with its MFU.
with source as (
    -- this run's rows, or a stale source's last good ones
    select * from raw.benchmark_runs
    semi join staging.stg_ops__source_runs_used using (source_id, run_id)
),

final as (
    select
        source_id,
        data_as_of,
        row_no,
        source_ref,
        kind,
        accelerator as accelerator_id,
        instance_type,
        cast(chips as integer) as chips,
        model as model_id,
        precision,
        precision_class(precision) as precision_class,
        case when kind <> 'offline' then concurrency end as concurrency,
        case when kind <> 'offline' then request_rate end as request_rate,
        input_tokens,
        output_tokens,
        request_throughput,
        -- an offline run may give its throughput per chip instead of for all its chips
        case when kind = 'offline' then coalesce(output_tokens_per_s, tokens_per_s_per_chip * chips)
             else output_tokens_per_s end as output_tokens_per_s,
        coalesce(tokens_per_s_per_chip, output_tokens_per_s / chips) as tokens_per_s_per_chip,
        mfu,
        sequence_length,
        workload as workload_id,
        time_to_train_minutes,
        -- an offline run is throughput only: latency and request counts it gives belong to no kind of its own
        case when kind <> 'offline' then ttft_p50_ms end as ttft_p50_ms,
        case when kind <> 'offline' then ttft_p99_ms end as ttft_p99_ms,
        case when kind <> 'offline' then tpot_p50_ms end as tpot_p50_ms,
        case when kind <> 'offline' then tpot_p99_ms end as tpot_p99_ms,
        case when kind <> 'offline' then completed end as completed,
        case when kind <> 'offline' then failed end as failed,
        case when kind <> 'offline' and completed + failed > 0 then completed / (completed + failed) end
            as success_rate,
        power_w,
        run_source,
        run_date
    from source
)

select * from final
