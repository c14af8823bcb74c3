-- The cost formulas (DESIGN.md "Cost model"), as DuckDB macros so marts and analysts call the same functions.
-- Units are in the names: usd, hours, minutes, seconds, tokens, chips, GB (1e9 bytes). Arguments are cast to
-- double first, so literals such as 69.0 (a DECIMAL in DuckDB) neither overflow nor return decimals.

-- ---------------------------------------------------------------- offers
-- An instance's hourly price shared by its accelerators.
create or replace macro usd_per_chip_hour(usd_per_hour, chips_per_instance) as
    usd_per_hour::double / chips_per_instance;

-- Reserved terms amortise their upfront fee over the term (1yr = 8760 h, 3yr = 26280 h).
create or replace macro effective_usd_per_hour(hourly_usd, upfront_usd, term_hours) as
    hourly_usd::double + coalesce(upfront_usd::double, 0) / term_hours;

-- Hours in a commitment of `months` months (730 h a month: 1yr = 8760 h, 3yr = 26280 h, as AWS counts them).
create or replace macro term_hours(months) as
    months::double * 730;

-- Hardware you own, per hour: capex over its life + power at the facility's PUE + operating cost (none: 0). No PUE,
-- no price: a missing one is not taken as 1.0 (the price sheet's suite requires it, on_prem_pue_present).
create or replace macro on_prem_usd_per_hour(capex_usd, life_months, power_kw, pue, usd_per_kwh, opex_usd_per_month) as
    capex_usd::double / term_hours(life_months)
    + power_kw::double * pue::double * usd_per_kwh::double
    + coalesce(opex_usd_per_month::double, 0) / 730;

-- Whether a workload may buy an offer's pricing term: the workload lists the term, and a reserved or committed
-- term lasts no longer than the service runs (a training workload has no months: terms with a length never count).
create or replace macro offer_term_accepted(workload_terms, pricing_term, term_months, workload_months) as
    list_contains(workload_terms, pricing_term)
    and (term_months is null or term_months <= coalesce(workload_months, 0));

-- Whole instances needed to hold `chips` accelerators at `chips_per_instance` each.
create or replace macro instances_needed(chips, chips_per_instance) as
    cast(ceil(chips::double / chips_per_instance) as integer);

-- ---------------------------------------------------------------- memory
-- Bytes one parameter (or one cached value) takes at a precision.
create or replace macro bytes_per_value(prec) as
    case lower(prec)
        when 'fp32' then 4.0::double when 'tf32' then 4.0::double
        when 'bf16' then 2.0::double when 'fp16' then 2.0::double
        when 'fp8' then 1.0::double when 'int8' then 1.0::double
        when 'fp4' then 0.5::double when 'int4' then 0.5::double
    end;

-- The class a precision is compared in: fp16 and bf16 are one 16-bit class (same bytes, same peak on every chip
-- listed), so an MLPerf fp16 result counts where a workload accepts bf16, and the reverse.
create or replace macro precision_class(prec) as
    case when prec in ('fp16', 'bf16') then 'bf16' else prec end;

-- Bytes of one gradient in the all-reduce: the training precision's, 16 bits at least (fp8 training recipes keep
-- gradients, and reduce them, in bf16 or wider).
create or replace macro gradient_bytes(prec) as
    greatest(bytes_per_value(prec), bytes_per_value('bf16'));

-- Model weights at a precision, in GB.
create or replace macro weights_gb(params, prec) as
    params::double * bytes_per_value(prec) / 1e9;

-- KV cache per token: keys and values for every layer and KV head.
create or replace macro kv_cache_bytes_per_token(layers, kv_heads, head_dim, kv_precision) as
    2.0 * layers::double * kv_heads * head_dim * bytes_per_value(kv_precision);

-- Memory a group of chips offers after the runtime's share (activations, fragmentation), in GB.
create or replace macro usable_memory_gb(chips, memory_gb_per_chip, usable_fraction) as
    chips::double * memory_gb_per_chip::double * usable_fraction::double;

-- Memory one chip holds the model in: its own (HBM, GDDR) or, for a CPU (a chip is a socket), its share of the
-- instance's host memory in GB (GiB x 1.073741824); a CPU without an instance's figure falls back to the part's.
create or replace macro memory_gb_per_chip(family, chip_memory_gb, host_memory_gib, chips_per_instance) as
    case when family = 'cpu'
         then coalesce(host_memory_gib::double * 1.073741824 / chips_per_instance, chip_memory_gb::double)
         else chip_memory_gb::double end;

-- A count of chips as the reasons and labels write it, thousands separated: a CPU's chip is a socket, as the CPU
-- baseline's column names it (2 sockets, 4,096 sockets; 1 chip, 8 chips).
create or replace macro chips_text(n, family) as
    format('{:,}', n::bigint) || case when family = 'cpu' then ' socket' else ' chip' end
    || case when n = 1 then '' else 's' end;

-- Whether weights plus `batch` sequences of `tokens_per_sequence` tokens of KV cache fit on `chips` chips.
create or replace macro fits_in_memory(weights_gb, kv_bytes_per_token, batch, tokens_per_sequence,
                                       chips, memory_gb_per_chip, usable_fraction) as
    weights_gb::double + batch::double * tokens_per_sequence::double * kv_bytes_per_token::double / 1e9
        <= usable_memory_gb(chips, memory_gb_per_chip, usable_fraction);

-- Tokens of KV cache that fit beside the weights on `chips` chips (negative: the weights alone do not fit).
create or replace macro kv_tokens_that_fit(weights_gb, kv_bytes_per_token, chips, memory_gb_per_chip,
                                           usable_fraction) as
    (usable_memory_gb(chips, memory_gb_per_chip, usable_fraction) - weights_gb::double) * 1e9
        / kv_bytes_per_token::double;

-- Fewest chips whose usable memory holds `gb`.
create or replace macro chips_to_hold(gb, memory_gb_per_chip, usable_fraction) as
    cast(ceil(gb::double / (memory_gb_per_chip::double * usable_fraction::double)) as integer);

-- A tensor-parallel group tiles an instance (its size divides the chip count) or spans whole instances.
create or replace macro tiles_instances(group_chips, chips_per_instance) as
    chips_per_instance % group_chips = 0 or group_chips % chips_per_instance = 0;

-- ---------------------------------------------------------------- training
-- completed_run_usd(minutes, ...) is gone (no model called it): drop it from warehouses built before.
drop macro if exists completed_run_usd;

-- Training FLOPs of a dense transformer: 6 x parameters x tokens.
create or replace macro training_flops(params, tokens) as
    6 * params::double * tokens::double;

-- Throughput lost to communication between instances: `efficiency_per_doubling` per doubling of instances.
create or replace macro scaling_factor(efficiency_per_doubling, instances) as
    pow(efficiency_per_doubling::double, log2(greatest(instances::double, 1)));

-- Hours to train `tokens` tokens of a `params` model on `chips` chips at a model FLOPs utilization.
create or replace macro training_hours(params, tokens, chips, peak_tflops, mfu, scaling) as
    training_flops(params, tokens)
        / (chips::double * peak_tflops::double * 1e12 * mfu::double * scaling::double) / 3600;

-- The size of x once written to three significant figures, which decides how figures_text writes it: 9.996 is
-- written as the 10.0 it rounds to, not "10.00" (four figures). Sized by that text, as flows/formatting.py figures:
-- round() and format() part at a binary value just below a half (0.09995: round made it 0.1, format writes 0.0999).
-- From 100 up, rounded (format takes no negative precision); it is 100 or more however it rounds.
create or replace macro figures_size(x) as
    case when x = 0 then 0.0
         when floor(log10(abs(x::double))) >= 2
             then abs(round(x::double, 2 - cast(floor(log10(abs(x::double))) as integer)))
         else abs(cast(format('{:.{}f}', x::double, 2 - cast(floor(log10(abs(x::double))) as integer)) as double))
    end;

-- A measure as the pages write it (flows/formatting.py `figures`), for the reasons quoted as they are: three
-- significant figures at least, thousands separated (1,323; 99.5; 3.15; 0.128; 0.00996).
create or replace macro figures_text(x) as
    case when figures_size(x) >= 100 then format('{:,.0f}', x::double)
         when figures_size(x) >= 10 then format('{:.1f}', x::double)
         when figures_size(x) >= 1 or x = 0 then format('{:.2f}', x::double)
         else format('{:.{}f}', x::double, 2 - cast(floor(log10(figures_size(x))) as integer)) end;

-- Money as the pages write it (flows/formatting.py `usd`): two decimals from 10, three below (2,978.21; 4.096; 0.758),
-- thousands separated; sized by what it is written as at three decimals (9.9996 is 10.00, not 10.000; 9.9995, just
-- below it in binary, 9.999, where round() made it 10.00 and the pages 9.999).
create or replace macro usd_text(x) as
    case when abs(cast(format('{:.3f}', x::double) as double)) >= 10 then format('{:,.2f}', x::double)
         else format('{:,.3f}', x::double) end;

-- Hours of a training run as the pages write them (flows/formatting.py `hours`): figures_text (10.3, 99.5, 1,323).
create or replace macro hours_text(h) as
    figures_text(h);

-- A figure as the catalog declares it (a deadline, an SLO, a link's Gbit/s), thousands separated and not rounded:
-- 2,160; 132.5; 3,200.
create or replace macro declared_text(x) as
    regexp_replace(format('{:,}', x::double), '\.0$', '');

-- A deadline in hours as declared (declared_text: 2,160; 132.5): its reasons write it beside the hours a run needs
-- (hours_needed_text), so it is not rounded.
create or replace macro deadline_text(h) as
    declared_text(h);

-- The hours a run past its deadline needs, as hours_text writes them unless that figure would not be more than the
-- deadline (132.47 h against 132 h: "132"); then with one decimal more, or two, and past that to three decimals
-- rounded up, so that "needs X h; the deadline is Y h" never writes X at or below Y.
-- The written figure itself is compared (format rounds the binary value half to even: 132.5 is written "132").
create or replace macro hours_needed_text(h, deadline) as
    case when replace(hours_text(h), ',', '')::double > deadline then hours_text(h)
         when abs(h) >= 100 and replace(format('{:,.1f}', h::double), ',', '')::double > deadline
            then format('{:,.1f}', h::double)
         when abs(h) >= 10 and replace(format('{:,.2f}', h::double), ',', '')::double > deadline
            then format('{:,.2f}', h::double)
         else format('{:,.3f}', ceil(h::double * 1000) / 1000) end;

-- Model FLOPs utilization a measured run achieved: its FLOPs over what the chips could do in the time.
create or replace macro mfu_achieved(params, tokens, minutes, chips, peak_tflops) as
    training_flops(params, tokens) / (minutes::double * 60 * chips::double * peak_tflops::double * 1e12);

-- Model FLOPs utilization that a throughput implies under the 6 x N convention: 6 x params x tokens/s per chip over
-- the chip's peak. A published MFU counted another way (MaxText's adds attention FLOPs) is not comparable with it.
create or replace macro mfu_from_throughput(params, tokens_per_s_per_chip, peak_tflops) as
    training_flops(params, tokens_per_s_per_chip) / (peak_tflops::double * 1e12);

-- Expected share of a training run redone after reclaims: the whole job is reclaimed `instances` x the per-instance
-- rate a month (730 h) per hour, and each reclaim redoes on average half the stretch since the last checkpoint plus
-- the restart: half a checkpoint interval, or half the run where the run is shorter than its interval (it writes no
-- checkpoint before it ends: a 28-minute run reclaimed at a random time loses 14 minutes, not half an hour).
create or replace macro interruption_rework_share(instances, per_instance_month, checkpoint_interval_hours,
                                                  restart_hours, run_hours) as
    instances::double * per_instance_month::double / 730
        * (least(checkpoint_interval_hours::double, run_hours::double) / 2 + restart_hours::double);

-- Offline inference on reclaimable capacity: the share of a deployment unit's hours lost restarting after reclaims
-- (each of its `instances` reclaimed `per_instance_month` times a month of 730 h, `restart_hours` each); 0 for a
-- service (it carries a spare unit instead) and where the term has no declared rate. Its cost per token divides by
-- 1 - this share.
create or replace macro offline_reclaim_loss(is_offline, instances, per_instance_month, restart_hours) as
    case when is_offline then
        coalesce(instances::double * per_instance_month::double / 730 * restart_hours::double, 0)
    end;

-- A completed run costs the expected rework of interruptions on top (e.g. 0.10 for spot: 10% redone).
create or replace macro completed_run_usd_with_overhead(hours, instances, usd_per_hour, interruption_overhead) as
    hours::double * instances * usd_per_hour::double * (1 + interruption_overhead::double);

-- Energy drawn by the accelerators, at their TDP, times the data centre's PUE.
create or replace macro energy_kwh(hours, chips, tdp_w, pue) as
    hours::double * chips * tdp_w::double / 1000 * pue::double;

-- ---------------------------------------------------------------- communication
-- Seconds a ring all-reduce of `gb` GB over `members` members takes at `gb_per_s` each way: every member sends (and
-- receives) 2 x (members - 1) / members of the data. 0 for one member.
create or replace macro allreduce_s(gb, members, gb_per_s) as
    case when members::double <= 1 then 0.0::double
         else 2 * (members::double - 1) / members::double * gb::double / gb_per_s::double end;

-- GB/s each way a tensor-parallel group of `chips` talks at: half the chip's published link figure (vendors give
-- both directions together) inside one instance; a group spanning instances is held to its share of the instance's
-- network (Gbit/s each way / 8 / chips per instance) where that is slower. Null: a figure is missing.
create or replace macro tp_link_gb_per_s(link_gb_per_s, chips, chips_per_instance, network_gbps) as
    case when link_gb_per_s is null then null::double
         when chips::double <= chips_per_instance::double then link_gb_per_s::double / 2
         when network_gbps is null then null::double
         else least(link_gb_per_s::double / 2, network_gbps::double / 8 / chips_per_instance::double) end;

-- Seconds of tensor-parallel all-reduce per token through a group of `chips`: two all-reduces a layer (after
-- attention, after the MLP) of the token's activations, hidden x 2 bytes (bf16). 0 on one chip; null without a
-- link figure.
create or replace macro tp_comm_s_per_token(layers, hidden, chips, link_gb_per_s) as
    case when chips::double <= 1 then 0.0::double
         else 2 * layers::double * allreduce_s(hidden::double * 2 / 1e9, chips, link_gb_per_s) end;

-- A training step's gradient all-reduce between `instances` instances over each instance's network (Gbit/s each
-- way): 2 x (n - 1) / n x params x bytes per value (inside an instance the chips reduce over their links first, then
-- the instance's network cards carry its whole gradient between instances).
create or replace macro gradient_allreduce_s(params, bytes, instances, network_gbps) as
    allreduce_s(params::double * bytes::double / 1e9, instances, network_gbps::double / 8);

-- Share of a step's time left computing once `comm_s` of communication runs beside `compute_s`, of which
-- `overlap` x compute_s hides it: compute / (compute + what is not hidden).
create or replace macro comm_efficiency(compute_s, comm_s, overlap) as
    compute_s::double / (compute_s::double + greatest(0, comm_s::double - overlap::double * compute_s::double));

-- ---------------------------------------------------------------- inference
-- A serving replica of `replica_chips` chips: instances it spans (1 when it fits in one instance).
create or replace macro replica_instances(replica_chips, chips_per_instance) as
    case when replica_chips <= chips_per_instance then 1
         else instances_needed(replica_chips, chips_per_instance) end;

-- Replicas of `replica_chips` chips that one instance holds (1 when a replica spans instances).
create or replace macro replicas_per_instance(replica_chips, chips_per_instance) as
    case when replica_chips <= chips_per_instance
         then cast(floor(chips_per_instance::double / replica_chips) as integer)
         else 1 end;

-- USD per million tokens for a deployment that costs `usd_per_hour` and produces `tokens_per_s`.
create or replace macro usd_per_million_tokens(usd_per_hour, tokens_per_s) as
    usd_per_hour::double / (tokens_per_s::double * 3600) * 1e6;

-- One decode step of `batch` sequences (roofline): the slower of reading weights + KV cache and computing.
-- Plus the group's tensor-parallel all-reduces: `comm_s_per_token` for each sequence of the batch.
create or replace macro decode_step_s(weights_gb, kv_gb_per_sequence, batch, params_active, precision_tflops,
                                      chips, bandwidth_tbps, bandwidth_efficiency, compute_efficiency,
                                      comm_s_per_token) as
    greatest(
        (weights_gb::double + batch::double * kv_gb_per_sequence::double) * 1e9
            / (chips::double * bandwidth_tbps::double * 1e12 * bandwidth_efficiency::double),
        2 * params_active::double * batch::double
            / (chips::double * precision_tflops::double * 1e12 * compute_efficiency::double)
    ) + batch::double * comm_s_per_token::double;

-- Prefill of one request's prompt on a group of chips: 2 FLOPs per active parameter and prompt token (compute side),
-- plus the all-reduces of every prompt token's activations.
create or replace macro prefill_s(params_active, input_tokens, chips, precision_tflops, compute_efficiency,
                                  comm_s_per_token) as
    2 * params_active::double * input_tokens::double
        / (chips::double * precision_tflops::double * 1e12 * compute_efficiency::double)
    + input_tokens::double * comm_s_per_token::double;

-- The largest batch whose KV cache (`tokens_per_sequence` tokens a sequence) fits beside the weights on the group.
create or replace macro batch_memory(weights_gb, kv_bytes_per_token, tokens_per_sequence, chips, memory_gb_per_chip,
                                     usable_fraction) as
    floor(kv_tokens_that_fit(weights_gb, kv_bytes_per_token, chips, memory_gb_per_chip, usable_fraction)
          / tokens_per_sequence::double);

-- The largest batch whose time between tokens meets a TPOT objective: a decode step plus the prompts prefilled in
-- between (batch x prefill / output_tokens) and the all-reduces of each sequence's token, on the memory and on the
-- compute side of the roofline. No objective (offline work): 4,096, the most a batch holds.
create or replace macro batch_for_tpot(slo_tpot_ms, weights_gb, kv_gb_per_sequence, params_active, precision_tflops,
                                       chips, bandwidth_tbps, bandwidth_efficiency, compute_efficiency, prefill_s,
                                       output_tokens, comm_s_per_token) as
    case when slo_tpot_ms is null then 4096 else least(
        floor((slo_tpot_ms::double / 1000 - weights_gb::double * 1e9
                  / (chips::double * bandwidth_tbps::double * 1e12 * bandwidth_efficiency::double))
              / (kv_gb_per_sequence::double * 1e9
                    / (chips::double * bandwidth_tbps::double * 1e12 * bandwidth_efficiency::double)
                 + prefill_s::double / output_tokens::double + comm_s_per_token::double)),
        floor(slo_tpot_ms::double / 1000
              / (2 * params_active::double / (chips::double * precision_tflops::double * 1e12
                                              * compute_efficiency::double)
                 + prefill_s::double / output_tokens::double + comm_s_per_token::double))
    ) end;

-- Output tokens per second of one replica: each batch decodes `output_tokens` steps and prefills its requests'
-- prompts on the same chips.
create or replace macro replica_tokens_per_s(batch, output_tokens, step_s, prefill_s) as
    batch::double * output_tokens::double / (output_tokens::double * step_s::double + batch::double * prefill_s::double);

-- The batch a replica of `chips` chips runs: the given one (an own run's concurrency) or 4,096, cut to what memory
-- holds and what the TPOT objective allows (the mean context while decoding: the input plus half the output).
create or replace macro serving_batch(fixed_batch, weights_gb, kv_bytes_per_token, input_tokens, output_tokens,
                                      params_active, precision_tflops, memory_gb_per_chip, usable_fraction,
                                      bandwidth_tbps, bandwidth_efficiency, compute_efficiency, chips, slo_tpot_ms,
                                      comm_s_per_token) as
    least(
        coalesce(fixed_batch, 4096),
        batch_memory(weights_gb, kv_bytes_per_token, input_tokens + output_tokens, chips, memory_gb_per_chip,
                     usable_fraction),
        batch_for_tpot(slo_tpot_ms, weights_gb, (input_tokens + output_tokens / 2.0) * kv_bytes_per_token / 1e9,
                       params_active, precision_tflops, chips, bandwidth_tbps, bandwidth_efficiency,
                       compute_efficiency,
                       prefill_s(params_active, input_tokens, chips, precision_tflops, compute_efficiency,
                                 comm_s_per_token),
                       output_tokens, comm_s_per_token)
    );

-- Output tokens per second of one replica at `batch` (the roofline estimate); null when the batch is empty or the
-- prefill alone breaks the TTFT objective.
create or replace macro serving_tokens_per_s(batch, weights_gb, kv_bytes_per_token, input_tokens, output_tokens,
                                             params_active, precision_tflops, bandwidth_tbps, bandwidth_efficiency,
                                             compute_efficiency, chips, slo_ttft_ms, comm_s_per_token) as
    case when batch >= 1 and (slo_ttft_ms is null or prefill_s(params_active, input_tokens, chips, precision_tflops,
                                                                compute_efficiency, comm_s_per_token) * 1000
                                                      <= slo_ttft_ms)
    then replica_tokens_per_s(
        batch, output_tokens,
        decode_step_s(weights_gb, (input_tokens + output_tokens / 2.0) * kv_bytes_per_token / 1e9, batch,
                      params_active, precision_tflops, chips, bandwidth_tbps, bandwidth_efficiency,
                      compute_efficiency, comm_s_per_token),
        prefill_s(params_active, input_tokens, chips, precision_tflops, compute_efficiency, comm_s_per_token))
    end;

-- How far a measured request shape is from a workload's: the larger relative gap of the input and the output lengths
-- (0.25 = one of them is 25% off).
-- Null when a length is unknown (greatest() alone would skip it).
create or replace macro shape_gap(measured_input_tokens, measured_output_tokens, input_tokens, output_tokens) as
    case when measured_input_tokens is not null and measured_output_tokens is not null
              and input_tokens is not null and output_tokens is not null
         then greatest(abs(measured_input_tokens::double / input_tokens - 1),
                       abs(measured_output_tokens::double / output_tokens - 1)) end;

-- Instances needed for the peak load, in whole instances (at least one).
create or replace macro instances_for_peak(mean_requests_per_s, peak_factor, requests_per_s_per_instance) as
    greatest(1, cast(ceil(mean_requests_per_s::double * peak_factor::double
                          / requests_per_s_per_instance::double) as bigint));

-- Share of provisioned capacity the mean load uses; the rest is paid for idle.
create or replace macro utilization(mean_requests_per_s, instances, requests_per_s_per_instance) as
    mean_requests_per_s::double / (instances::double * requests_per_s_per_instance::double);

-- Monthly cost of `instances` always-on instances (730 hours a month).
create or replace macro monthly_usd(instances, usd_per_hour) as
    instances::double * usd_per_hour::double * 730;

-- USD per million requests that succeed, at the mean load over a month.
create or replace macro usd_per_million_successful_requests(monthly_usd, mean_requests_per_s, success_rate) as
    monthly_usd::double / (mean_requests_per_s::double * 3600 * 730 * success_rate::double) * 1e6;

-- Lifetime cost: training plus months of serving; and the serving share of it.
create or replace macro lifetime_usd(training_usd, months, monthly_inference_usd) as
    coalesce(training_usd::double, 0) + months::double * monthly_inference_usd::double;
create or replace macro inference_share(training_usd, months, monthly_inference_usd) as
    months::double * monthly_inference_usd::double / lifetime_usd(training_usd, months, monthly_inference_usd);

-- ---------------------------------------------------------------- decisions
-- Whether a candidate ranked ahead on its figure (`lead_value`, band high end `lead_high`) may not be the cheaper of
-- two: its band's high end reaches the other's low end (a measured figure, with no band, counts as its value), and
-- at least one of them has a band (two measured figures are told apart). The decisions' one rule for "too close to
-- call" (the runner-up) and for a cheapest chip-hour that may cost less than the pick; false where the other is null.
create or replace macro bands_overlap(lead_value, lead_high, other_value, other_low) as
    coalesce(coalesce(lead_high, lead_value) >= coalesce(other_low, other_value)
             and (lead_high is not null or other_low is not null), false);


-- The key candidates' outcomes are compared on for rank, pick, runner-up and reversals: the value to 12 significant
-- digits, so that one cost computed in two orders (0.8496571235686385 and 0.8496571235686389 USD, which differ in
-- the last bits of a double) ties instead of splitting a rank. Relative, as the figures run from 0.1 USD to millions;
-- through the %e text so that 0, a negative figure, a tiny or huge one and inf/nan need no case (10^(11 - log10) of
-- 1e-300 would overflow a double). Two values astride a rounding edge at the 12th digit still differ: the tolerance
-- is a bound on what ties, not a promise that every pair closer than it does.
create or replace macro outcome_key(value) as
    cast(printf('%.11e', value::double) as double);


-- reversal_counts(t): each row of the relation named t (a table, or a CTE of the query; columns workload_id,
-- candidate_id unique within a workload, outcome_value, usd_per_chip_hour) with `reversals`, the rows of its
-- workload that have a higher outcome_value although a lower usd_per_chip_hour: the candidates it beats although
-- they are cheaper per chip-hour. Outcomes are compared on outcome_key (equal to 12 significant digits: a tie).
-- A null price is never lower, and its row counts none; a null outcome is never higher, and its row counts none.
-- Comparing every pair is the definition, and quadratic: a workload of 36,000 candidates has 1.3 billion pairs (50 s
-- for 169,000 candidates). Counted here as a Fenwick tree counts: in price order the rows cheaper than a row c take
-- the first m places (m = its rank by price - 1); those m places split into one block of 2^L places for each bit L
-- set in m; each block's rows are sorted by outcome, and one as-of lookup in it finds how many have a higher outcome
-- than c. About n log n lookups (1 s for those 169,000). tests/test_macros.py checks it against the pairs.
-- The blocks and lookups are keyed by integers (the workload's number, the row's place), not by the ids' text, and
-- only the blocks a lookup can reach are kept: on the bench's 169,000 candidates 0.95-1.0 s and 345 MiB against
-- 1.9-2.1 s and 660 MiB (stop 40).
create or replace macro reversal_counts(t) as table
with candidates as (
    select workload_id, candidate_id, outcome_key(outcome_value) as outcome_value, usd_per_chip_hour
    from query_table(t)
),

by_price as (  -- each row's place in its workload's price order, and how many rows are cheaper; workloads numbered
    select
        -- a row without a workload is in none (its key null: it meets no row, as workload_id = null is never true)
        case when workload_id is not null then dense_rank() over (order by workload_id) end as workload_key,
        workload_id,
        candidate_id,
        outcome_value,
        row_number() over (partition by workload_id order by usd_per_chip_hour nulls last, candidate_id) - 1
            as place,
        case when usd_per_chip_hour is not null
             then rank() over (partition by workload_id order by usd_per_chip_hour nulls last) - 1 else 0 end
            as cheaper
    from candidates
),

levels as (  -- the block sizes 2^level a workload needs: up to its largest `cheaper`
    select workload_key, unnest(range(0, cast(ceil(log2(max(cheaper) + 2)) as bigint))) as level
    from by_price
    group by workload_key
),

blocks as (  -- every row in its block at each level, with how many of the block's rows have at least its outcome
    select
        by_price.workload_key,
        levels.level,
        by_price.place >> levels.level as block,
        by_price.outcome_value,
        count(*) over (partition by by_price.workload_key, levels.level, by_price.place >> levels.level
                       order by by_price.outcome_value desc range between unbounded preceding and current row)
            as at_least
    from by_price
    inner join levels using (workload_key)
    -- only even blocks are looked up (block (cheaper >> level) - 1 where that shift is odd): the odd ones are left out
    where by_price.outcome_value is not null and (by_price.place >> levels.level) & 1 = 0
),

lookups as (  -- the blocks that make up each row's cheaper places: one per bit set in `cheaper`
    select by_price.workload_key, by_price.place, by_price.outcome_value, levels.level,
        (by_price.cheaper >> levels.level) - 1 as block
    from by_price
    inner join levels using (workload_key)
    -- a row without an outcome beats none (as-of would match a null to a block's lowest outcome)
    where (by_price.cheaper >> levels.level) & 1 = 1 and by_price.outcome_value is not null
),

counted as (  -- in each block, the rows with the smallest outcome above the row's, and all above them
    select lookups.workload_key, lookups.place, sum(coalesce(blocks.at_least, 0)) as reversals
    from lookups
    asof left join blocks
        on blocks.workload_key = lookups.workload_key
        and blocks.level = lookups.level
        and blocks.block = lookups.block
        and blocks.outcome_value > lookups.outcome_value
    group by lookups.workload_key, lookups.place
)

-- one row per candidate even if t has it twice (a bug upstream, which the SQL tests report), so that joining the
-- counts back to t does not multiply its rows: the two places' counts added
select workload_id, candidate_id, coalesce(sum(counted.reversals), 0)::bigint as reversals  -- a count (sum: hugeint)
from by_price
left join counted using (workload_key, place)
group by workload_id, candidate_id;


-- A calibrated row's date in its label: " as of <the newest of the measurements its factor was fitted from>", with
-- "(newest)" where there were several; '' where none is dated. The training and serving labels both write it.
create or replace macro calibrated_as_of(as_of, measurements) as
    coalesce(' as of ' || as_of || case when measurements > 1 then ' (newest)' else '' end, '');
