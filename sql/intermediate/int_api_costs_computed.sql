-- Grain: one row per serving workload x hosted API offer (cloud, region, API model) whose model the workload
-- serves and which lists both an input and an output token price. The API bills tokens: input and output priced
-- apart, whatever the traffic, so its cost per request is flat and its hourly cost grows with the traffic.
with workloads as (
    select * from catalog.workloads
    where kind = 'inference' and not is_offline and mean_requests_per_s is not null
),

prices as (
    select * from staging.stg_model_api_prices__tokens
    where model_id is not null
),

offers as (
    select
        cloud,
        region,
        api_model,
        model_id,
        max(usd_per_million_tokens) filter (where direction = 'input') as usd_per_million_input_tokens,
        max(usd_per_million_tokens) filter (where direction = 'output') as usd_per_million_output_tokens,
        min(source_id) as price_source_id,
        min(data_as_of) as price_as_of,
        string_agg(source_ref, '; ' order by direction) as price_ref
    from prices
    group by cloud, region, api_model, model_id
    having count(*) filter (where direction = 'input') > 0 and count(*) filter (where direction = 'output') > 0
),

per_request as (
    select
        workloads.workload_id,
        workloads.input_tokens,
        workloads.output_tokens,
        workloads.mean_requests_per_s,
        workloads.peak_factor,
        workloads.success_rate,
        workloads.months,
        offers.*,
        (workloads.input_tokens * offers.usd_per_million_input_tokens
         + workloads.output_tokens * offers.usd_per_million_output_tokens) / 1e6 as api_usd_per_request
    from workloads
    inner join offers using (model_id)
),

final as (
    select
        *,
        -- mean_requests_per_s x (input_tokens x in_price + output_tokens x out_price) / 1e6 x 3600
        mean_requests_per_s * api_usd_per_request * 3600 as api_usd_per_hour,
        monthly_usd(1, mean_requests_per_s * api_usd_per_request * 3600) as api_monthly_usd,
        usd_per_million_successful_requests(monthly_usd(1, mean_requests_per_s * api_usd_per_request * 3600),
                                            mean_requests_per_s, success_rate) as api_usd_per_million_successful_requests
    from per_request
)

select * from final
