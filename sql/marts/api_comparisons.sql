-- marts.api_comparisons — grain: one row per run x serving workload x hosted API offer (cloud, region, API model).
-- The API's cost for the workload's traffic (input and output tokens priced apart) beside the workload's best
-- self-hosted candidate (the pick of marts.rankings, as marts.decisions picks it), and the break-even traffic.
--
-- Break-even. A self-hosted deployment unit costs U USD an hour whatever its traffic, up to its capacity C requests/s;
-- the pipeline sizes units for the peak, so one unit carries a mean traffic of m = C / peak_factor. The API costs c
-- USD a request, 3600 x c x r USD an hour at a mean of r requests/s. One unit beats the API from
--     r = k = U / (3600 x c)                 (3600 x c x k = U)
-- and n units cost n x U against 3600 x c x r <= 3600 x c x n x m, so self-hosting is cheaper at some traffic only
-- when k < m, i.e. when the self-hosted cost per request at full load, U x peak_factor / (3600 x C), is below c; at
-- k = m a unit's bill only ties the API's, at the most traffic it carries; otherwise, or then, it is never cheaper
-- (break_even_requests_per_s is null, no range). Past k, right after each added unit (traffic just above n x m) the
-- API can be cheaper again until r reaches (n + 1) x k; those bands close as n grows.
-- A pick on reclaimable capacity carries s = 1 spare unit (marts.inference_costs.spare_deployments): n units serving
-- cost (n + s) x U, so self-hosting is first cheaper just above r = (n* + s) x k, n* the fewest units that carry more
-- than that traffic, (n* + s) x k < n* x m (at equality they only tie at their capacity): n* = floor(s x k / (m - k))
-- + 1, when k < m (s = 0: n* = 1, r = k).
-- Ranges. The self-hosted cost is a step function (whole units), so past r one break-even is not the whole story:
-- n serving units carry ((n - 1) x m, n x m], and there self-hosting is cheaper only above (n + s) x k. That edge is
-- inside the interval (the API is cheaper again just past (n - 1) x m) while (n + s) x k > (n - 1) x m, i.e. while
-- n < N = (m + s x k) / (m - k). With N' = ceil(N), self-hosting is cheaper on ((n + s) x k, n x m] for each
-- n = 1 .. N' - 2 where that is not empty, and on ((N' - 1 + s) x k, infinity): past it, at any traffic.
with api as (
    select * from intermediate.int_api_costs_computed
),

rankings as (
    select * from marts.rankings
    where as_of = cast(getvariable('as_of') as date) and workload_kind = 'inference'
),

costs as (
    select * from marts.inference_costs
    where as_of = cast(getvariable('as_of') as date)
),

picks as (
    -- rank 1, with the tie-break of marts.decisions and rank_history.is_pick
    select rankings.candidate_id, rankings.workload_id, rankings.basis, rankings.outcome_low, rankings.outcome_high,
        -- the caveats the Decision gives its pick, of the offer compared here: a price sources.yaml marks unverified,
        -- a split whose communication the estimate does not charge (and its chips, which the page names)
        rankings.price_unverified, rankings.split_uncharged, rankings.chips
    from rankings
    qualify row_number() over (partition by workload_id
                               order by outcome_key(outcome_value), usd_per_chip_hour, candidate_id) = 1
),

self_hosted as (
    select
        picks.workload_id,
        costs.candidate_id,
        costs.offer_id,
        costs.cloud,
        costs.region,
        costs.instance_type,
        costs.pricing_term,
        costs.accelerator_id,
        costs.precision,
        picks.basis,
        picks.outcome_low,
        picks.outcome_high,
        picks.price_unverified,
        picks.split_uncharged,
        picks.chips,
        costs.deployments,
        coalesce(costs.spare_deployments, 0) as spare_deployments,
        costs.deployment_usd_per_hour,
        costs.deployment_requests_per_s,
        costs.monthly_usd,
        costs.usd_per_million_successful_requests,
        costs.usd_per_million_input_tokens,
        costs.usd_per_million_output_tokens
    from picks
    inner join costs using (candidate_id)
),

compared as (
    select
        api.*,
        self_hosted.candidate_id as self_hosted_candidate_id,
        self_hosted.offer_id as self_hosted_offer_id,
        self_hosted.cloud as self_hosted_cloud,
        self_hosted.region as self_hosted_region,
        self_hosted.instance_type as self_hosted_instance_type,
        self_hosted.pricing_term as self_hosted_pricing_term,
        self_hosted.accelerator_id as self_hosted_accelerator_id,
        self_hosted.precision as self_hosted_precision,
        self_hosted.basis as self_hosted_basis,
        self_hosted.price_unverified as self_hosted_price_unverified,
        self_hosted.split_uncharged as self_hosted_split_uncharged,
        self_hosted.chips as self_hosted_chips,
        self_hosted.deployments as self_hosted_deployments,
        self_hosted.deployment_usd_per_hour as self_hosted_deployment_usd_per_hour,
        self_hosted.deployment_requests_per_s as self_hosted_deployment_requests_per_s,
        self_hosted.monthly_usd / 730 as self_hosted_usd_per_hour,
        self_hosted.monthly_usd as self_hosted_monthly_usd,
        self_hosted.usd_per_million_successful_requests as self_hosted_usd_per_million_successful_requests,
        self_hosted.outcome_low as self_hosted_usd_per_million_successful_requests_low,
        self_hosted.outcome_high as self_hosted_usd_per_million_successful_requests_high,
        self_hosted.usd_per_million_input_tokens as self_hosted_usd_per_million_input_tokens,
        self_hosted.usd_per_million_output_tokens as self_hosted_usd_per_million_output_tokens,
        -- U x peak_factor / (3600 x C): a unit's hour over the requests it serves when the peak fills it
        self_hosted.deployment_usd_per_hour * api.peak_factor / (3600 * self_hosted.deployment_requests_per_s)
            as self_hosted_usd_per_request_at_full_load,
        self_hosted.spare_deployments,
        -- k = U / (3600 x c); m = C / peak_factor
        self_hosted.deployment_usd_per_hour / (3600 * api.api_usd_per_request) as one_unit_break_even_requests_per_s,
        self_hosted.deployment_requests_per_s / api.peak_factor as one_unit_mean_requests_per_s
    from api
    left join self_hosted using (workload_id)
),

broken_even as (
    select
        *,
        -- n*: the fewest serving units whose bill, with the spare, the API's passes while they still carry its traffic
        case when one_unit_break_even_requests_per_s < one_unit_mean_requests_per_s
             then cast(floor(spare_deployments * one_unit_break_even_requests_per_s
                             / (one_unit_mean_requests_per_s - one_unit_break_even_requests_per_s)) as bigint) + 1
        end as break_even_units,
        -- N': the fewest serving units past whose range's start self-hosting is cheaper throughout (k < m)
        case when one_unit_break_even_requests_per_s < one_unit_mean_requests_per_s
             then cast(ceil((one_unit_mean_requests_per_s + spare_deployments * one_unit_break_even_requests_per_s)
                            / (one_unit_mean_requests_per_s - one_unit_break_even_requests_per_s)) as bigint)
        end as cheaper_throughout_units
    from compared
),

ranged as (
    select
        *,
        -- ((n + s) x k, n x m] for n = 1 .. N' - 2 where not empty, then ((N' - 1 + s) x k, null: no end)
        list_append(
            list_filter(
                list_transform(range(1, cheaper_throughout_units - 1), lambda n: {
                    'from_requests_per_s': (n + spare_deployments) * one_unit_break_even_requests_per_s,
                    'to_requests_per_s': n * one_unit_mean_requests_per_s}),
                lambda r: r.from_requests_per_s < r.to_requests_per_s),
            {'from_requests_per_s': (cheaper_throughout_units - 1 + spare_deployments)
                                    * one_unit_break_even_requests_per_s,
             'to_requests_per_s': null::double}) as cheaper_ranges
    from broken_even
),

final as (
    select
        getvariable('run_id') as run_id,
        cast(getvariable('as_of') as date) as as_of,
        workload_id,
        cloud,
        region,
        api_model,
        model_id,
        cloud || ':' || region || ':' || api_model as api_offer_id,
        usd_per_million_input_tokens,
        usd_per_million_output_tokens,
        api_usd_per_request,
        api_usd_per_hour,
        api_monthly_usd,
        api_usd_per_million_successful_requests,
        months * api_monthly_usd as api_lifetime_usd,
        price_source_id,
        price_as_of,
        price_ref,
        self_hosted_candidate_id,
        self_hosted_offer_id,
        self_hosted_cloud,
        self_hosted_region,
        self_hosted_instance_type,
        self_hosted_pricing_term,
        self_hosted_accelerator_id,
        self_hosted_precision,
        self_hosted_basis,
        self_hosted_price_unverified,
        self_hosted_split_uncharged,
        self_hosted_chips,
        self_hosted_deployments,
        self_hosted_deployment_usd_per_hour,
        self_hosted_deployment_requests_per_s,
        one_unit_mean_requests_per_s as self_hosted_deployment_mean_requests_per_s,
        self_hosted_usd_per_hour,
        self_hosted_monthly_usd,
        self_hosted_usd_per_million_successful_requests,
        self_hosted_usd_per_million_successful_requests_low,
        self_hosted_usd_per_million_successful_requests_high,
        months * self_hosted_monthly_usd as self_hosted_lifetime_usd,
        self_hosted_usd_per_million_input_tokens,
        self_hosted_usd_per_million_output_tokens,
        self_hosted_usd_per_request_at_full_load,
        self_hosted_usd_per_hour < api_usd_per_hour as is_self_hosted_cheaper,
        -- the comparison at this traffic is not settled when the pick's likely range has the API's cost inside it
        self_hosted_usd_per_million_successful_requests_low < api_usd_per_million_successful_requests
            and api_usd_per_million_successful_requests < self_hosted_usd_per_million_successful_requests_high
            as is_api_within_likely_range,
        -- (n* + s) x k when k < m = C / peak_factor, else never (null)
        (break_even_units + spare_deployments) * one_unit_break_even_requests_per_s as break_even_requests_per_s,
        break_even_units as break_even_deployments,
        spare_deployments as self_hosted_spare_deployments,
        case when cheaper_throughout_units is not null then cheaper_ranges end as self_hosted_cheaper_ranges,
        (cheaper_throughout_units - 1 + spare_deployments) * one_unit_break_even_requests_per_s
            as self_hosted_cheaper_throughout_from_requests_per_s,
        -- k >= m: with the ranges and the break-even, by the same comparison
        one_unit_break_even_requests_per_s >= one_unit_mean_requests_per_s as is_self_hosting_never_cheaper
    from ranged
)

select * from final
