"""The cost macros in sql/macros.sql, each checked against arithmetic done by hand."""

import math
import re

import pytest


def value(con, expr):
    return con.execute(f"select {expr}").fetchall()[0][0]


def test_usd_per_chip_hour(fresh_db):
    # p5.48xlarge: 55.04 USD/h for 8 H100 -> 55.04 / 8 = 6.88
    assert value(fresh_db, "usd_per_chip_hour(55.04, 8)") == pytest.approx(6.88)


def test_instances_needed_rounds_up_to_whole_instances(fresh_db):
    # 512 chips on 8-chip instances = 64; 9 chips need 2 instances; 512 TPU v5p chips on tpu-v5p-8 (4 chips) = 128
    assert value(fresh_db, "instances_needed(512, 8)") == 64
    assert value(fresh_db, "instances_needed(9, 8)") == 2
    assert value(fresh_db, "instances_needed(512, 4)") == 128


def test_completed_run_usd_llama2_lora_on_p5en(fresh_db):
    # FACTS worked check: 24.69 min / 60 = 0.4115 h x 1 instance x 63.296 USD/h x (1 + 0 on demand) = 26.0463 USD
    usd = value(fresh_db, "completed_run_usd_with_overhead(24.69 / 60, 1, 63.296, 0)")
    assert usd == pytest.approx(26.0463, abs=1e-4)


def test_completed_run_usd_gpt3_on_512_tpu_v5p(fresh_db):
    # 114.79 min / 60 = 1.91317 h x 128 instances x (4 chips x 4.20 = 16.80 USD/h) = 1.91317 x 2150.4 = 4114.07 USD
    usd = value(fresh_db, "completed_run_usd_with_overhead(114.79 / 60, 128, 16.8, 0)")
    assert usd == pytest.approx(4114.07, abs=0.01)


def test_usd_per_million_tokens_llama2_70b_on_p5(fresh_db):
    # FACTS worked check: 55.04 / (24,528 x 3600) x 1e6 = 55.04 / 88,300,800 x 1e6 = 0.62332 USD
    assert value(fresh_db, "usd_per_million_tokens(55.04, 24528)") == pytest.approx(0.62332, abs=1e-5)


def test_replicas_of_a_small_system_share_an_instance(fresh_db):
    # a 1-chip result on an 8-chip instance: 8 replicas on one instance; an 8-chip one on 8 chips: 1
    assert value(fresh_db, "replicas_per_instance(1, 8)") == 8
    assert value(fresh_db, "replica_instances(1, 8)") == 1
    assert value(fresh_db, "replicas_per_instance(8, 8)") == 1
    # a 3-chip replica on an 8-chip instance: floor(8 / 3) = 2 replicas (6 chips), 2 chips idle
    assert value(fresh_db, "replicas_per_instance(3, 8)") == 2


def test_a_large_replica_spans_whole_instances(fresh_db):
    # a 16-chip system on 8-chip instances spans 2 instances and is 1 replica; on 12-chip ones, ceil(16/12) = 2
    assert value(fresh_db, "replica_instances(16, 8)") == 2
    assert value(fresh_db, "replicas_per_instance(16, 8)") == 1
    assert value(fresh_db, "replica_instances(16, 12)") == 2


def test_effective_usd_per_hour_amortises_upfront_fee(fresh_db):
    # 1-yr partial upfront: 10.00 USD/h + 43,800 USD / 8760 h = 10 + 5 = 15.00 USD/h
    assert value(fresh_db, "effective_usd_per_hour(10.0, 43800, 8760)") == pytest.approx(15.0)
    # 3-yr all upfront: 0 USD/h + 262,800 USD / 26,280 h = 10.00 USD/h
    assert value(fresh_db, "effective_usd_per_hour(0.0, 262800, 26280)") == pytest.approx(10.0)
    # no upfront fee: the hourly rate as is
    assert value(fresh_db, "effective_usd_per_hour(10.0, null, 8760)") == pytest.approx(10.0)


def test_term_hours_counts_730_hours_a_month(fresh_db):
    # 12 x 730 = 8,760 h (1 year); 36 x 730 = 26,280 h (3 years); 60 x 730 = 43,800 h (a 5-year hardware life)
    assert [value(fresh_db, f"term_hours({months})") for months in (12, 36, 60)] == [8760, 26280, 43800]


def test_on_prem_usd_per_hour_capex_power_and_opex(fresh_db):
    # 300,000 USD over 60 months: 300,000 / (60 x 730 = 43,800 h) = 6.849315 USD/h
    # 10.2 kW x PUE 1.3 x 0.12 USD/kWh = 1.591200 USD/h; 1,460 USD a month / 730 h = 2.000000 USD/h
    # 6.849315 + 1.591200 + 2.000000 = 10.440515 USD/h
    usd = value(fresh_db, "on_prem_usd_per_hour(300000, 60, 10.2, 1.3, 0.12, 1460)")
    assert usd == pytest.approx(10.440515, abs=1e-6)
    # no operating cost: 0 -> 6.849315 + 10.2 kW x PUE 1.0 x 0.12 = 6.849315 + 1.224 = 8.073315
    usd = value(fresh_db, "on_prem_usd_per_hour(300000, 60, 10.2, 1.0, 0.12, null)")
    assert usd == pytest.approx(8.073315, abs=1e-6)
    # no PUE: no price (it was taken as 1.0, the 8.073315 above); the price sheet requires it (on_prem_pue_present)
    assert value(fresh_db, "on_prem_usd_per_hour(300000, 60, 10.2, null, 0.12, null)") is None


def test_offer_term_accepted_lists_the_term_and_fits_the_service(fresh_db):
    def accepted(pricing_term, term_months, workload_months):
        return value(fresh_db, f"offer_term_accepted(['on_demand', 'reserved'], '{pricing_term}', {term_months}, "
                               f"{workload_months})")

    assert accepted("on_demand", "null", 12) is True     # no term length: always fits
    assert accepted("spot", "null", 12) is False         # not a term the workload lists
    assert accepted("reserved", 12, 12) is True          # a 1-year term for a 12-month service: 12 <= 12
    assert accepted("reserved", 36, 12) is False         # a 3-year term outlasts it: 36 > 12
    assert accepted("reserved", 12, "null") is False     # training (no months): 12 > 0, no term with a length


# ---------------------------------------------------------------- memory
def test_kv_cache_bytes_per_token_llama2_70b_bf16(fresh_db):
    # 2 (K and V) x 80 layers x 8 KV heads x 128 head dim x 2 bytes = 327,680 bytes
    assert value(fresh_db, "kv_cache_bytes_per_token(80, 8, 128, 'bf16')") == 327_680
    # a 4,096-token sequence: 4,096 x 327,680 = 1,342,177,280 bytes, ~1.34 GB
    assert value(fresh_db, "4096 * kv_cache_bytes_per_token(80, 8, 128, 'bf16') / 1e9") == pytest.approx(1.342, abs=1e-3)


def test_llama2_70b_bf16_weights_do_not_fit_one_h200_and_need_two_h100(fresh_db):
    # 69e9 parameters x 2 bytes = 138 GB; one H200 at 90%: 141 x 0.9 = 126.9 GB < 138
    assert value(fresh_db, "weights_gb(69e9, 'bf16')") == pytest.approx(138.0)
    assert value(fresh_db, "fits_in_memory(138.0, 327680, 0, 0, 1, 141, 0.9)") is False
    # H100: 80 x 0.9 = 72 GB a chip; 138 / 72 = 1.92 -> 2 chips (144 GB)
    assert value(fresh_db, "chips_to_hold(138.0, 80, 0.9)") == 2
    assert value(fresh_db, "fits_in_memory(138.0, 327680, 0, 0, 2, 80, 0.9)") is True


def test_llama2_70b_fp8_fits_one_h100_with_about_9000_tokens_of_kv_cache(fresh_db):
    # 69e9 x 1 byte = 69 GB; 72 - 69 = 3 GB left; 3e9 / 327,680 = 9,155 tokens
    assert value(fresh_db, "weights_gb(69e9, 'fp8')") == pytest.approx(69.0)
    assert value(fresh_db, "kv_tokens_that_fit(69.0, 327680, 1, 80, 0.9)") == pytest.approx(9155.27, abs=0.01)
    assert value(fresh_db, "fits_in_memory(69.0, 327680, 2, 4096, 1, 80, 0.9)") is True   # 2 x 4,096 = 8,192 tokens
    assert value(fresh_db, "fits_in_memory(69.0, 327680, 3, 4096, 1, 80, 0.9)") is False  # 12,288 tokens > 9,155


def test_a_sequence_that_exactly_fills_usable_memory_fits(fresh_db):
    # 1 chip x 80 GB x 0.75 = 60 GB usable; 59 GB of weights + 1 x 1,000 tokens x 1e6 B = 1 GB of KV: 60 <= 60
    assert value(fresh_db, "usable_memory_gb(1, 80, 0.75)") == 60.0
    assert value(fresh_db, "fits_in_memory(59.0, 1e6, 1, 1000, 1, 80, 0.75)") is True
    assert value(fresh_db, "fits_in_memory(59.0, 1e6, 1, 1001, 1, 80, 0.75)") is False  # 60.001 > 60


def test_a_cpu_socket_holds_its_share_of_host_memory(fresh_db):
    # c8i.96xlarge: 768 GiB x 1.073741824 = 824.63 GB over 2 sockets = 412.32 GB a socket; an HBM chip keeps its own
    assert value(fresh_db, "memory_gb_per_chip('cpu', null, 768, 2)") == pytest.approx(412.316860416)
    assert value(fresh_db, "memory_gb_per_chip('gpu', 80, 2048, 8)") == 80.0
    assert value(fresh_db, "memory_gb_per_chip('cpu', 256, null, 1)") == 256.0  # no instance figure: the part's


def test_bytes_per_value_by_precision(fresh_db):
    # fp32/tf32 4 bytes, bf16/fp16 2, fp8/int8 1, fp4/int4 half a byte; case does not matter
    got = {p: value(fresh_db, f"bytes_per_value('{p}')") for p in ("fp32", "tf32", "BF16", "fp16", "fp8", "int8",
                                                                   "fp4", "int4", "fp6")}
    assert got == {"fp32": 4, "tf32": 4, "BF16": 2, "fp16": 2, "fp8": 1, "int8": 1, "fp4": 0.5, "int4": 0.5,
                   "fp6": None}


def test_precision_class_makes_fp16_and_bf16_one_class(fresh_db):
    # fp16 and bf16 are compared as one 16-bit class; every other precision is its own class
    got = {p: value(fresh_db, f"precision_class('{p}')") for p in ("fp16", "bf16", "fp8", "int8", "fp4", "fp32")}
    assert got == {"fp16": "bf16", "bf16": "bf16", "fp8": "fp8", "int8": "int8", "fp4": "fp4", "fp32": "fp32"}


def test_gradient_bytes_are_16_bits_at_least(fresh_db):
    # fp8 training reduces its gradients in bf16: 2 bytes; fp32 keeps its 4
    got = {p: value(fresh_db, f"gradient_bytes('{p}')") for p in ("fp8", "bf16", "fp16", "fp32")}
    assert got == {"fp8": 2, "bf16": 2, "fp16": 2, "fp32": 4}


def test_tensor_parallel_groups_tile_an_instance_or_span_whole_instances(fresh_db):
    # on a 12-chip inf2.48xlarge: 1, 2, 3, 4, 6, 12 chips tile it, 24 spans two instances; 8 and 16 do neither
    assert [n for n in range(1, 25) if value(fresh_db, f"tiles_instances({n}, 12)")] == [1, 2, 3, 4, 6, 12, 24]


# ---------------------------------------------------------------- training
def test_training_flops_of_a_dense_transformer(fresh_db):
    # 6 x 8e9 parameters x 1e12 tokens = 4.8e22 FLOPs
    assert value(fresh_db, "training_flops(8e9, 1e12)") == pytest.approx(4.8e22)


def test_training_hours_and_scaling_loss(fresh_db):
    # Llama-3.1-8B on 1T tokens: 6 x 8e9 x 1e12 = 4.8e22 FLOPs; 64 H100 x 989.4e12 x 0.40 MFU = 2.533e16 FLOP/s
    # 8 instances: 0.95 ^ log2(8) = 0.95^3 = 0.857375; 4.8e22 / (2.533e16 x 0.857375) / 3600 = 614.0 hours
    assert value(fresh_db, "scaling_factor(0.95, 8)") == pytest.approx(0.857375)
    assert value(fresh_db, "scaling_factor(0.95, 1)") == pytest.approx(1.0)  # one instance: log2(1) = 0 doublings
    assert value(fresh_db, "training_hours(8e9, 1e12, 64, 989.4, 0.40, 0.857375)") == pytest.approx(613.98, abs=0.01)


def test_completed_run_cost_with_interruption_overhead(fresh_db):
    # 100 h on 8 spot instances at 20 USD/h, 10% of the work redone after interruptions: 100 x 8 x 20 x 1.10 = 17,600
    assert value(fresh_db, "completed_run_usd_with_overhead(100, 8, 20.0, 0.10)") == pytest.approx(17_600)
    assert value(fresh_db, "completed_run_usd_with_overhead(100, 8, 20.0, 0.0)") == pytest.approx(16_000)


def test_mfu_derived_from_an_mlperf_detailed_row(fresh_db):
    # MLPerf Training v4.0, NVIDIA Eos_n64: gpt3 (175e9 parameters), 512 H100, 50.72797 minutes,
    # samples_to_converge 1,193,803,776 (tokens for gpt3). FLOPs: 6 x 175e9 x 1.193803776e9 = 1.25349e21;
    # per chip-second: 1.25349e21 / (50.72797 x 60 x 512) = 8.0437e14 = 804.4 TFLOP/s; at FP8 1,978.9 peak: 40.6%
    mfu = value(fresh_db, "mfu_achieved(175e9, 1193803776, 50.72796666666667, 512, 1978.9)")
    assert mfu == pytest.approx(0.4065, abs=1e-4)


def test_mfu_implied_by_a_published_throughput(fresh_db):
    # MaxText on 256 TPU v6e, Llama-3.1-8B (catalog params 8.0e9): 7,207 tokens/s per chip at the bf16 peak of 918
    # TFLOP/s: 6 x 8.0e9 x 7207 / 918e12 = 3.45936e17 / 9.18e14 = 0.376837 (MaxText states 0.455: it counts attention)
    assert value(fresh_db, "mfu_from_throughput(8.0e9, 7207, 918)") == pytest.approx(0.376837, abs=1e-6)
    # TPU v5p x 512, Llama-2-70B (69e9): 692 tokens/s per chip at 459 TFLOP/s: 6 x 69e9 x 692 / 459e12 = 0.624157
    assert value(fresh_db, "mfu_from_throughput(69e9, 692, 459)") == pytest.approx(0.624157, abs=1e-6)
    # the same figure as a run of one chip for one second: mfu_achieved over 1/60 minute
    assert value(fresh_db, "mfu_from_throughput(69e9, 692, 459)") == pytest.approx(
        value(fresh_db, "mfu_achieved(69e9, 692, 1 / 60, 1, 459)"))


def test_energy_from_tdp(fresh_db):
    # 10 h x 8 H100 x 0.700 kW x PUE 1.2 = 67.2 kWh
    assert value(fresh_db, "energy_kwh(10, 8, 700, 1.2)") == pytest.approx(67.2)


# ---------------------------------------------------------------- inference
def test_roofline_step_llama2_70b_on_8_h100_matches_the_calibration(fresh_db):
    # FACTS: per GPU, weights 17.25 GB + batch x 48.1 MB of KV (1,174 tokens x 327,680 B / 8); batch 512:
    # memory: (138 + 512 x 0.3847) GB / (8 x 3.35e12 x 0.7) = 334.97e9 / 1.876e13 = 17.86 ms
    # compute: 2 x 69e9 x 512 / (8 x 989.4e12 x 0.5) = 7.0656e13 / 3.9576e15 = 17.85 ms -> ~28,700 tokens/s
    kv_gb = 1174 * 327680 / 1e9
    step = value(fresh_db, f"decode_step_s(138.0, {kv_gb}, 512, 69e9, 989.4, 8, 3.35, 0.7, 0.5, 0)")
    assert step == pytest.approx(0.01786, abs=5e-5)
    assert 512 / step == pytest.approx(28_670, rel=0.01)


# The roofline of one replica: Llama-2-70B-like, 70e9 parameters, 140 GB of bf16 weights, 327,680 B of KV cache a
# token, 1,024 prompt + 300 output tokens, on 8 chips of 80 GB (90% usable), 3.35 TB/s at 0.7 and 1,000 TFLOP/s at 0.5.
ROOFLINE = "140, 327680, 1024, 300, 70e9, 1000"


def test_prefill_of_one_prompt(fresh_db):
    # 2 x 70e9 x 1,024 / (8 x 1,000e12 x 0.5) = 1.4336e14 / 4e15 = 0.03584 s
    assert value(fresh_db, "prefill_s(70e9, 1024, 8, 1000, 0.5, 0)") == pytest.approx(0.03584)


def test_batch_memory_holds(fresh_db):
    # (8 x 80 x 0.9 - 140) GB = 436 GB of KV cache / 327,680 B = 1,330,566 tokens / 1,324 a sequence = 1,004.96 -> 1,004
    assert value(fresh_db, "batch_memory(140, 327680, 1324, 8, 80, 0.9)") == 1004


def test_batch_a_tpot_objective_allows(fresh_db):
    # bandwidth 8 x 3.35e12 x 0.7 = 1.876e13 B/s; mean context (1,024 + 150) x 327,680 B = 0.384696 GB a sequence
    # memory side: (0.200 - 140e9 / 1.876e13) / (0.384696e9 / 1.876e13 + 0.03584 / 300) = 0.192537 / 1.39978e-4
    #   = 1,375.5 -> 1,375
    # compute side: 0.200 / (2 x 70e9 / 4e15 + 0.03584 / 300) = 0.200 / 1.54467e-4 = 1,294.8 -> 1,294: the smaller
    args = "140, 0.38469632, 70e9, 1000, 8, 3.35, 0.7, 0.5, 0.03584, 300, 0"
    assert value(fresh_db, f"batch_for_tpot(200, {args})") == 1294
    assert value(fresh_db, f"batch_for_tpot(null, {args})") == 4096  # no objective: offline work


def test_replica_tokens_per_s_decodes_and_prefills(fresh_db):
    # a batch of 100 decodes 300 steps of 20 ms and prefills 100 prompts of 35 ms: 100 x 300 / (6 + 3.5) s
    assert value(fresh_db, "replica_tokens_per_s(100, 300, 0.02, 0.035)") == pytest.approx(3157.894737)


def test_serving_batch_and_tokens_per_s(fresh_db):
    # the batch: least(4,096, memory 1,004, TPOT 1,294) = 1,004; a given concurrency of 64 is kept
    batch = f"serving_batch(null, {ROOFLINE}, 80, 0.9, 3.35, 0.7, 0.5, 8, 200, 0)"
    assert value(fresh_db, batch) == 1004
    assert value(fresh_db, f"serving_batch(64, {ROOFLINE}, 80, 0.9, 3.35, 0.7, 0.5, 8, 200, 0)") == 64
    # batch 1,004: step = max((140 + 1,004 x 0.384696) GB / 1.876e13, 2 x 70e9 x 1,004 / 4e15) = max(28.05, 35.14) ms
    # = 35.14 ms; tokens/s = 1,004 x 300 / (300 x 0.03514 + 1,004 x 0.03584) = 301,200 / 46.525 = 6,473.89
    tokens = f"serving_tokens_per_s({batch}, {ROOFLINE}, 3.35, 0.7, 0.5, 8, 2000, 0)"
    assert value(fresh_db, tokens) == pytest.approx(6473.889, abs=1e-3)
    # a TTFT objective the prefill alone breaks (35.84 ms > 30 ms), or an empty batch: no estimate
    assert value(fresh_db, f"serving_tokens_per_s({batch}, {ROOFLINE}, 3.35, 0.7, 0.5, 8, 30, 0)") is None
    assert value(fresh_db, f"serving_tokens_per_s(0, {ROOFLINE}, 3.35, 0.7, 0.5, 8, null, 0)") is None


def test_shape_gap_between_a_measurement_and_a_workload(fresh_db):
    # 8,192 / 1,024 - 1 = 7; 1,024 / 256 - 1 = 3: the larger, 7. 1,100 / 1,024 - 1 = 0.0742 beside 256 / 256 - 1 = 0
    assert value(fresh_db, "shape_gap(8192, 1024, 1024, 256)") == pytest.approx(7.0)
    assert value(fresh_db, "shape_gap(1100, 256, 1024, 256)") == pytest.approx(0.074219, abs=1e-6)
    # an unknown length is no match of any size (greatest() alone would skip it and say 0)
    assert value(fresh_db, "shape_gap(null, 256, 1024, 256)") is None


def test_utilization_from_traffic_on_whole_instances(fresh_db):
    # 2 requests/s mean, peak 3x = 6 requests/s; an instance serves 40 requests/s: 1 instance, 2 / 40 = 5% used
    assert value(fresh_db, "instances_for_peak(2, 3, 40)") == 1
    assert value(fresh_db, "utilization(2, 1, 40)") == pytest.approx(0.05)
    # 2,000 requests/s mean, peak 1.5x = 3,000: ceil(3000 / 40) = 75 instances; 2,000 / (75 x 40) = 66.7%
    assert value(fresh_db, "instances_for_peak(2000, 1.5, 40)") == 75
    # a million requests/s, x100 at the peak, on instances that serve 0.001 each: 1e8 / 1e-3 = 1e11 instances, past
    # a 32-bit integer (an absurd fleet, but an error in the SQL build would fail the whole run instead of ranking it)
    assert value(fresh_db, "instances_for_peak(1e6, 100, 0.001)") == 100_000_000_000
    assert value(fresh_db, "utilization(2000, 75, 40)") == pytest.approx(0.6667, abs=1e-4)


def test_cost_per_million_successful_requests(fresh_db):
    # one instance at 6.88 USD/h: 6.88 x 730 = 5,022.40 USD a month
    assert value(fresh_db, "monthly_usd(1, 6.88)") == pytest.approx(5022.40)
    # 2 requests/s x 3600 x 730 = 5,256,000 requests a month, 99% succeed: 5,203,440;
    # 5,022.40 / 5,203,440 x 1e6 = 965.21 USD per million successful requests
    assert value(fresh_db, "usd_per_million_successful_requests(5022.40, 2, 0.99)") == pytest.approx(965.21, abs=0.01)


def test_lifetime_cost_and_inference_share(fresh_db):
    # training 100,000 USD + 12 months x 50,000 USD = 700,000 USD; inference share 600,000 / 700,000 = 85.7%
    assert value(fresh_db, "lifetime_usd(100000, 12, 50000)") == pytest.approx(700_000)
    assert value(fresh_db, "inference_share(100000, 12, 50000)") == pytest.approx(0.857142, abs=1e-6)


def test_bands_overlap_where_the_leaders_high_end_reaches_the_others_low_end(fresh_db):
    """The decisions' one rule for "too close to call" and for a cheapest chip-hour that may cost less than the pick
    (bands_overlap(lead value, lead high, other value, other low))."""
    cases = {
        # the review's gpt3-175b-pretrain (stop 54's figures): the pick's 531.15 (high end 676.34) against trn1's
        # 804.60, whose band reaches down to 359.31: 676.34 >= 359.31, overlap
        "531.15, 676.34, 804.60, 359.31": True,
        # a measured pick (no band, 0.116) against an estimate reaching down to 0.075: 0.116 >= 0.075
        "0.116, null, 0.338, 0.075": True,
        # a band that stops short: 676.34 < 700
        "531.15, 676.34, 804.60, 700.0": False,
        # an estimated pick whose high end 600 reaches a measured 561.37 (no band: its value)
        "531.15, 600.0, 561.37, null": True,
        # two measured figures are told apart, however close
        "531.15, null, 531.16, null": False,
        # no other candidate
        "531.15, 676.34, null, null": False,
    }
    got = {args: value(fresh_db, f"bands_overlap({args})") for args in cases}
    assert got == cases


PAIRWISE_REVERSALS = """
select better.workload_id, better.candidate_id, count(worse.candidate_id) as reversals
from cands as better
left join cands as worse
    on worse.workload_id = better.workload_id
    and worse.outcome_value > better.outcome_value
    and worse.usd_per_chip_hour < better.usd_per_chip_hour
group by better.workload_id, better.candidate_id
order by 1, 2
"""


def test_reversal_counts_by_hand(fresh_db):
    """Workload w: a (outcome 10, 4 USD/chip-h), b (20, 2), c (30, 1), d (15, 3), e (20, 2: b's twin), f (5, null).
    a beats b, c, d, e: outcome higher, price lower -> 4. d beats b, c, e (20 > 15 and 2 < 3; 30 > 15 and 1 < 3) -> 3.
    b beats c (30 > 20, 1 < 2), not e (a tie on both) -> 1; e likewise -> 1. c beats none (nothing dearer in outcome).
    f has no price: it beats none, and nobody beats it on price -> 0. Workload v: g alone -> 0. h (10, 4) and i
    (20, 2) have no workload: in one, h would beat i; in none, each beats nothing -> 0 (as null = null is not true)."""
    fresh_db.execute("create temp table cands (workload_id varchar, candidate_id varchar, outcome_value double, "
                     "usd_per_chip_hour double)")
    fresh_db.execute("insert into cands values ('w','a',10,4), ('w','b',20,2), ('w','c',30,1), ('w','d',15,3), "
                     "('w','e',20,2), ('w','f',5,null), ('v','g',1,1), (null,'h',10,4), (null,'i',20,2)")
    got = fresh_db.execute("select workload_id, candidate_id, reversals from reversal_counts('cands') "
                           "order by 1, 2").fetchall()
    assert got == [("v", "g", 0), ("w", "a", 4), ("w", "b", 1), ("w", "c", 0), ("w", "d", 3), ("w", "e", 1),
                   ("w", "f", 0), (None, "h", 0), (None, "i", 0)]
    assert got == fresh_db.execute(PAIRWISE_REVERSALS).fetchall()
    # a count, typed as one (a sum is a HUGEINT, which pandas reads as float64)
    [(kind,)] = fresh_db.execute("select typeof(reversals) from reversal_counts('cands') limit 1").fetchall()
    assert kind == "BIGINT"


def test_outcome_key_ties_a_figure_computed_in_two_orders_and_keeps_zero_negatives_and_extremes(fresh_db):
    """outcome_key: the value to 12 significant digits. 24.0 / 60 x 20.02 = 8.008000000000001 and 20.02 / 60 x 24.0 =
    8.008 (both 8.008 by hand: 480.48 / 60) get one key; 0.8496571235686385 and ...389 (llama2-70b-batch's inf2.48xlarge
    at fp8 and bf16) both 0.849657123569; a difference in the 12th digit is kept (1.00000000001 > 1.0)."""
    def key(x):
        return value(fresh_db, f"outcome_key({x})")

    assert key("24.0 / 60 * 20.02") == key("20.02 / 60 * 24.0") == 8.008
    assert key(0.8496571235686385) == key(0.8496571235686389) == 0.849657123569
    assert key(1.00000000001) > key(1.0)
    # 0 and -0 are 0; a negative figure keeps its sign and 12 digits: -3.14159265358979 -> -3.14159265359
    assert key(0.0) == key("-0.0") == 0.0
    assert key(-3.14159265358979) == -3.14159265359
    # no overflow at the ends of a double, and null stays null
    assert (key("1e-300"), key("1.7e308"), key("'inf'::double"), key("null")) == (1e-300, 1.7e308, math.inf, None)


def test_reversal_counts_take_outcomes_equal_but_for_the_last_bits_as_a_tie(fresh_db):
    """x (8.008000000000001, 2.5025 USD/chip-h) and y (8.008, 3.0): the same 8.008 computed in two orders. Compared as
    doubles y beats x (a lower outcome though dearer); on outcome_key they tie and neither beats the other; z (9.0,
    1.0) is beaten by both (9 > 8.008, 1.0 < 2.5025 and < 3.0) -> x 1, y 1, z 0."""
    fresh_db.execute("create temp table cands as select * from (values ('w', 'x', 8.008000000000001, 2.5025), "
                     "('w', 'y', 8.008, 3.0), ('w', 'z', 9.0, 1.0)) "
                     "as t(workload_id, candidate_id, outcome_value, usd_per_chip_hour)")
    assert fresh_db.execute("select candidate_id, reversals from reversal_counts('cands') order by 1").fetchall() == [
        ("x", 1), ("y", 1), ("z", 0)]


def test_reversal_counts_give_one_row_per_candidate_even_if_it_comes_twice(fresh_db):
    """A candidate listed twice (a bug upstream, which the SQL tests report) gets one row, so that joining the counts
    back does not multiply rows: x (1, 5) twice and y (2, 1); y beats neither, each x row beats y -> x counts 2."""
    fresh_db.execute("create temp table cands as select * from (values ('w', 'x', 1.0, 5.0), ('w', 'x', 1.0, 5.0), "
                     "('w', 'y', 2.0, 1.0)) as t(workload_id, candidate_id, outcome_value, usd_per_chip_hour)")
    assert fresh_db.execute("select candidate_id, reversals from reversal_counts('cands') order by 1").fetchall() == [
        ("x", 2), ("y", 0)]


@pytest.mark.parametrize("seed", range(6))
def test_reversal_counts_equal_the_pairwise_definition(fresh_db, seed):
    """Random workloads of 1 to 700 candidates (a block size past 2^9; past 64 rows DuckDB's as-of join is its own
    operator, not a loop), with tied outcomes and prices, some null prices and some null outcomes: the Fenwick-style
    count equals the quadratic one, row for row."""
    fresh_db.execute("select setseed(?)", [seed / 10])
    fresh_db.execute("""
        create temp table cands as
        select 'w' || (i % 4) as workload_id, 'c' || i as candidate_id,
               case when random() < 0.05 then null else round(random() * 40) end as outcome_value,
               case when random() < 0.05 then null else round(random() * 30) / 2 end as usd_per_chip_hour
        from range(?) as r(i)""", [[1, 60, 700, 1500, 2800, 333][seed]])
    got = fresh_db.execute("select workload_id, candidate_id, reversals from reversal_counts('cands') "
                           "order by 1, 2").fetchall()
    want = fresh_db.execute(PAIRWISE_REVERSALS).fetchall()
    assert got == want
    assert sum(r[2] for r in want) > 0 or len(want) < 3


def test_hours_text_writes_hours_as_the_pages_do(fresh_db):
    """A deadline's reason quotes the hours a run needs as the Full ranking writes a time to train: three significant
    figures at least (flows/formatting.py hours)."""
    from flows.formatting import hours

    # 6,480.4 h: whole hours, thousands separated (past a bigint too); 57.92 h: one decimal (not 58); 9.996 h rounds
    # to 10.0 at three figures: one decimal, as 10 h and over are written (not "10.00", four figures)
    cases = {6480.4: "6,480", 783.2: "783", 100.0: "100", 99.54: "99.5", 57.92: "57.9", 10.2796: "10.3",
             9.996: "10.0", 1.5e19: "15,000,000,000,000,000,000"}
    for h, text in cases.items():
        assert value(fresh_db, f"hours_text({h!r})") == text == hours(h), h


def test_figures_text_writes_a_measure_as_the_pages_do(fresh_db):
    """Three significant figures at least at every magnitude, as flows/formatting.py figures writes them: whole from
    100, one decimal from 10, two from 1, and below 1 as many decimals as three figures take."""
    from flows.formatting import figures

    # 3.1549 kWh: 3.15; 0.0099644: floor(log10) = -3, 2 + 3 = 5 decimals, 0.00996; 0.128313: 3 decimals, 0.128;
    # 0.015: 4 decimals, 0.0150; 0 and -0.5 as 0.00 and -0.500. Just below a power of ten, written as the three
    # figures it rounds to (figures_size), not four: 0.9996 -> 1.00 (not 1.000), 9.996 -> 10.0, 99.96 -> 100,
    # 0.0099951 -> 0.0100 (not 0.01000); 99.94 stays 99.9
    # 0.09995 is 0.09994999999999999606... in binary: "0.0999" at four decimals, so written 0.0999 (a review found
    # figures_size's round() made it 0.100 while the pages wrote 0.0999)
    cases = {3.1548798: "3.15", 0.00996442: "0.00996", 0.128313: "0.128", 0.015: "0.0150", 0.9996: "1.00",
             9.996: "10.0", 99.96: "100", 0.0099951: "0.0100", 99.94: "99.9", -9.996: "-10.0",
             0.0: "0.00", -0.5: "-0.500", 1322.86: "1,323", 10.2796: "10.3", 0.09995: "0.0999"}
    for x, text in cases.items():
        assert value(fresh_db, f"figures_text({x!r})") == text == figures(x), x
    # and every value of four and five decimals from 0 to 200 the same way in both (the review's sweep)
    xs = [n / 10_000 for n in range(1, 2_000_001, 7)] + [n / 100_000 for n in range(1, 20_000_001, 997)]
    sql = fresh_db.execute("select x, figures_text(x) from unnest(?::double[]) t(x)", [xs]).fetchall()
    assert [x for x, text in sql if text != figures(x)] == []
    # the size that decides it: 9.996 rounded to three figures (2 - floor(log10 9.996) = 2 decimals) is 10.0
    assert [value(fresh_db, f"figures_size({x!r})") for x in (9.996, -0.9996, 0.0, 1322.86)] == [10.0, 1.0, 0.0, 1320.0]


def test_chips_text_counts_a_cpus_chips_as_sockets(fresh_db):
    """The reasons and labels count chips as the CPU baseline's column does: a CPU's chip is a socket ("need 3 chips of
    412.32 GB" stood beside "2 x xeon-6975p-c" under "sockets"), thousands separated, one without an s."""
    cases = {(1, "gpu"): "1 chip", (8, "gpu"): "8 chips", (4096, "tpu"): "4,096 chips", (1, "cpu"): "1 socket",
             (4096, "cpu"): "4,096 sockets", (3, "cpu"): "3 sockets"}
    assert {k: value(fresh_db, f"chips_text({k[0]}, '{k[1]}')") for k in cases} == cases


def test_usd_text_writes_money_as_the_pages_do(fresh_db):
    """marts.changes writes the prices of a move as the pages' `usd` does: 0.758 was "0.76" beside a 3-figure
    multiple; two decimals from 10 USD, three below, thousands separated."""
    from flows.formatting import usd

    # sized by what it rounds to: 9.9996 rounds to 10.000 at three decimals, so it is written as 10 and more, 10.00
    # 9.9995 is 9.99949999999999938893... in binary: written "9.999" at three decimals, so "9.999" (a review found
    # usd_text's round() made it 10.00 while the pages wrote 9.999)
    cases = {0.758: "0.758", 4.096: "4.096", 9.9994: "9.999", 10.0: "10.00", 25.6: "25.60", 2978.214: "2,978.21",
             0.0: "0.000", -12.5: "-12.50", 9.9996: "10.00", -9.9996: "-10.00", 9.9995: "9.999"}
    for x, text in cases.items():
        assert value(fresh_db, f"usd_text({x!r})") == text == usd(x), x
    # and every value of four and five decimals from 0 to 200 the same way in both (the review's sweep)
    xs = [n / 10_000 for n in range(0, 2_000_001, 7)] + [n / 100_000 for n in range(0, 20_000_001, 997)]
    sql = fresh_db.execute("select x, usd_text(x) from unnest(?::double[]) t(x)", [xs]).fetchall()
    assert [x for x, text in sql if text != usd(x)] == []


def test_declared_text_writes_a_declared_figure_thousands_separated_and_unrounded(fresh_db):
    # an SLO of 2,000 ms, a link of 3,200 Gbit/s, 412.32 GB a socket, 12.5: as declared, no ".0"
    cases = {2000.0: "2,000", 3200: "3,200", 412.32: "412.32", 12.5: "12.5", 1649.27: "1,649.27"}
    assert {x: value(fresh_db, f"declared_text({x!r})") for x in cases} == cases


def test_a_deadline_is_written_as_declared_and_the_hours_past_it_always_more(fresh_db):
    """A deadline's reason writes "needs X h ... the deadline is Y h": Y as declared, thousands separated; X as
    hours_text writes it unless that is not more than Y, then with a decimal more, two, or three rounded up."""
    deadlines = {2160.0: "2,160", 132.5: "132.5", 2632.05: "2,632.05", 876000.0: "876,000", 50.0: "50"}
    for h, text in deadlines.items():
        assert value(fresh_db, f"deadline_text({h!r})") == text, h
    cases = {
        (6480.4, 2160.0): "6,480",  # as hours_text: whole hours from 100
        (65.8017, 50.0): "65.8",
        (132.4686, 132.0): "132.5",  # 132 is the deadline's figure: one decimal
        (2632.0666, 2632.05): "2,632.1",
        (2160.04, 2160.0): "2,160.04",  # 2,160.0 still reads as the deadline: two decimals
        (50.004, 50.0): "50.004",  # 50.00 too; then three decimals, rounded up (50.0040 -> 50.004)
        (2160.0001, 2160.0): "2,160.001",  # 2,160.000 too: rounded up to the thousandth, 2,160.001
        (9.0004, 9.0): "9.001",  # below 10, hours_text's two decimals say 9.00: three, rounded up
        (9.996, 9.99): "10.0",  # hours_text's 10.0 is past 9.99
    }
    for (h, deadline), text in cases.items():
        assert value(fresh_db, f"hours_needed_text({h!r}, {deadline!r})") == text, (h, deadline)


def test_calibrated_as_of_names_the_newest_measurements_date_and_says_so_where_there_were_several(fresh_db):
    assert value(fresh_db, "calibrated_as_of(date '2026-11-01', 3)") == " as of 2026-11-01 (newest)"
    assert value(fresh_db, "calibrated_as_of(date '2024-06-12', 1)") == " as of 2024-06-12"  # one: no "newest"
    assert value(fresh_db, "calibrated_as_of(null::date, 2)") == ""  # no measurement dated: nothing said


def test_every_macro_has_a_test_here(fresh_db):
    """The README promises a unit test per macro: each one in sql/macros.sql is called in this module, or (the
    communication and interruption macros) in test_communication.py."""
    from pathlib import Path

    from flows.paths import SQL_DIR

    macros = re.findall(r"^create or replace macro (\w+)\(", (SQL_DIR / "macros.sql").read_text(), re.M)
    tested = Path(__file__).read_text().split("def test_every_macro_has_a_test_here", 1)[0]
    tested += (Path(__file__).parent / "test_communication.py").read_text()
    assert "usd_per_chip_hour" in macros and len(macros) == len(set(macros))
    assert [m for m in macros if f"{m}(" not in tested] == []


def test_the_hours_needed_are_compared_as_written_not_as_rounded_by_duckdb(fresh_db):
    """format() rounds the binary value half to even, round() half away from zero: 132.5 h is written "132" by
    hours_text, which round() had called 133 > 132; 10.25 is written 10.2 likewise (0.015, below 1, to three figures:
    0.0150). The hours needed are compared with the deadline as written: "needs 132.5 h; the deadline is 132 h"."""
    cases = [(132.5, 132, "132.5"), (10.25, 10.2, "10.25"), (0.015, 0.01, "0.0150"), (2632.07, 2632, "2,632.1")]
    written = [value(fresh_db, f"hours_needed_text({h}, {deadline})") for h, deadline, _ in cases]
    assert written == [text for *_, text in cases]
