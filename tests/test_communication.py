"""What a split costs (issue 17): the tensor-parallel all-reduce of a serving replica, the gradient all-reduce of a
training run across instances, and interruptions as a rate, each worked by hand."""

import datetime as dt

import pytest
from builders import aws_page, aws_product, land

from flows import transform, warehouse
from flows.sources import aws_pricing, aws_spot
from flows.warehouse import fetch_dicts

AS_OF = dt.date(2026, 11, 30)
RUN = "run-communication"


def value(con, expr):
    return con.execute(f"select {expr}").fetchall()[0][0]


# ---------------------------------------------------------------- the macros
def test_a_ring_all_reduce_moves_twice_the_data_less_one_share(fresh_db):
    # 2 x (4 - 1) / 4 x 10 GB / 5 GB/s = 15 / 5 = 3 s; one member communicates with nobody
    assert value(fresh_db, "allreduce_s(10, 4, 5)") == pytest.approx(3.0)
    assert value(fresh_db, "allreduce_s(10, 1, 5)") == 0.0


def test_tensor_parallel_all_reduce_per_token_llama2_70b(fresh_db):
    # Llama-2-70B: 80 layers, hidden 8,192; a token's activations are 8,192 x 2 B = 16,384 B = 1.6384e-5 GB, reduced
    # twice a layer (160 all-reduces). H100 NVLink4: 900 GB/s published (both directions) -> 450 GB/s each way.
    # TP 2: 160 x 2 x 1/2 x 1.6384e-5 / 450 = 160 x 3.64089e-8 = 5.82542e-6 s
    # TP 4: 160 x 2 x 3/4 x 1.6384e-5 / 450 = 160 x 5.46133e-8 = 8.73813e-6 s
    # TP 8: 160 x 2 x 7/8 x 1.6384e-5 / 450 = 160 x 6.37156e-8 = 1.019449e-5 s
    # L40S over PCIe Gen4 x16: 64 GB/s published -> 32 each way; TP 4: 160 x 1.5 x 1.6384e-5 / 32 = 1.2288e-4 s
    assert value(fresh_db, "tp_comm_s_per_token(80, 8192, 1, 450)") == 0.0
    assert value(fresh_db, "tp_comm_s_per_token(80, 8192, 2, 450)") == pytest.approx(5.825422e-6, rel=1e-6)
    assert value(fresh_db, "tp_comm_s_per_token(80, 8192, 4, 450)") == pytest.approx(8.738133e-6, rel=1e-6)
    assert value(fresh_db, "tp_comm_s_per_token(80, 8192, 8, 450)") == pytest.approx(1.0194489e-5, rel=1e-6)
    assert value(fresh_db, "tp_comm_s_per_token(80, 8192, 4, 32)") == pytest.approx(1.2288e-4, rel=1e-9)
    # no link figure: no figure (the model falls back and says so)
    assert value(fresh_db, "tp_comm_s_per_token(80, 8192, 4, null)") is None


def test_the_link_a_group_talks_over(fresh_db):
    # inside an 8-chip instance: half of NVLink's 900 = 450 GB/s each way
    assert value(fresh_db, "tp_link_gb_per_s(900, 8, 8, 3200)") == 450
    # 16 chips over two p5.48xlarge: the instance's 3,200 Gbit/s / 8 = 400 GB/s shared by 8 chips = 50 GB/s: slower
    assert value(fresh_db, "tp_link_gb_per_s(900, 16, 8, 3200)") == 50
    # spanning instances without a network figure: no figure
    assert value(fresh_db, "tp_link_gb_per_s(900, 16, 8, null)") is None


def test_decode_steps_of_llama2_70b_on_2_4_and_8_h100_and_4_l40s(fresh_db):
    # Llama-2-70B bf16 (138 GB), 0.38469632 GB of KV a sequence, at the batches memory holds (test below)
    # TP 2, batch 13: max(143.001 GB / (2 x 3.35e12 x 0.7) = 30.4906 ms, 2 x 69e9 x 13 / 9.894e14 = 1.8132 ms)
    #   + 13 x 5.825422e-6 = 0.0757 ms -> 30.5664 ms
    # TP 8, batch 1,009: max(526.159 GB / 1.876e13 = 28.0468 ms, 2 x 69e9 x 1,009 / 3.9576e15 = 35.1834 ms)
    #   + 1,009 x 1.019449e-5 = 10.2862 ms -> 45.4697 ms
    # 4 L40S over PCIe, batch 80: max(168.776 GB / (4 x 0.864e12 x 0.7) = 69.7651 ms, 2 x 69e9 x 80 / (4 x 362e12 x
    #   0.5) = 15.2486 ms) + 80 x 1.2288e-4 = 9.8304 ms -> 79.5955 ms
    steps = {
        "TP 2": "decode_step_s(138, 0.38469632, 13, 69e9, 989.4, 2, 3.35, 0.7, 0.5, 5.825422222e-6)",
        "TP 8": "decode_step_s(138, 0.38469632, 1009, 69e9, 989.4, 8, 3.35, 0.7, 0.5, 1.019448889e-5)",
        "L40S TP 4": "decode_step_s(138, 0.38469632, 80, 69e9, 362, 4, 0.864, 0.7, 0.5, 1.2288e-4)",
    }
    got = {name: value(fresh_db, expr) for name, expr in steps.items()}
    assert got == {"TP 2": pytest.approx(0.0305664, abs=1e-7), "TP 8": pytest.approx(0.0454697, abs=1e-7),
                   "L40S TP 4": pytest.approx(0.0795955, abs=1e-7)}


def test_a_decode_step_pays_the_all_reduce_of_each_sequence(fresh_db):
    # Llama-2-70B bf16 (138 GB), 0.38469632 GB of KV a sequence (1,174 tokens x 327,680 B), batch 345 on TP 4 H100:
    # memory (138 + 345 x 0.38469632) GB / (4 x 3.35e12 x 0.7) = 270.7202e9 / 9.38e12 = 28.8614 ms; compute
    # 2 x 69e9 x 345 / (4 x 989.4e12 x 0.5) = 24.0600 ms; all-reduce 345 x 8.738133e-6 = 3.01466 ms
    # -> 28.8614 + 3.0147 = 31.8761 ms
    step = value(fresh_db, "decode_step_s(138, 0.38469632, 345, 69e9, 989.4, 4, 3.35, 0.7, 0.5, 8.738133333e-6)")
    assert step == pytest.approx(0.0318761, abs=1e-7)
    # prefill of 1,024 tokens: 2 x 69e9 x 1,024 / 1.9788e15 = 71.4130 ms + 1,024 x 8.738133e-6 = 8.9478 ms = 80.3608 ms
    assert value(fresh_db, "prefill_s(69e9, 1024, 4, 989.4, 0.5, 8.738133333e-6)") == pytest.approx(0.0803608, abs=1e-7)


def test_the_gradient_all_reduce_of_a_512_chip_run(fresh_db):
    # GPT-3 175B in bf16 on 512 H100 = 64 p5.48xlarge at 3,200 Gbit/s (400 GB/s each way):
    # 2 x 63/64 x 175e9 x 2 B = 689.0625 GB / 400 GB/s = 1.72265625 s a step
    assert value(fresh_db, "gradient_allreduce_s(175e9, 2, 64, 3200)") == pytest.approx(1.72265625)
    # a step of 4,194,304 tokens: 6 x 175e9 x 4,194,304 / (512 x 989.4e12 x 0.4) = 4.404019e18 / 2.026291e17
    # = 21.7344 s of compute; with half of it able to hide the all-reduce, none shows: efficiency 1
    step_s = 6 * 175e9 * 4_194_304 / (512 * 989.4e12 * 0.4)
    assert step_s == pytest.approx(21.7344, abs=1e-4)
    assert value(fresh_db, f"comm_efficiency({step_s}, 1.72265625, 0.5)") == 1.0
    # nothing hidden: 21.73438 / (21.73438 + 1.72266) = 0.926561
    assert value(fresh_db, f"comm_efficiency({step_s}, 1.72265625, 0)") == pytest.approx(0.926561, abs=1e-6)
    # a short step: 2 s of compute hides 1 s; 1.72266 - 1 = 0.72266 s shows: 2 / 2.72266 = 0.734577
    assert value(fresh_db, "comm_efficiency(2, 1.72265625, 0.5)") == pytest.approx(0.734577, abs=1e-6)


def test_a_30_day_spot_run_with_hourly_checkpoints(fresh_db):
    # 32 instances at 0.2 reclaims per instance-month: the job is reclaimed 32 x 0.2 / 730 = 0.00876712 times an
    # hour; each reclaim redoes half the hourly checkpoint interval plus a 0.25 h restart: 0.00876712 x 0.75 =
    # 0.00657534 of the run. Over 30 days (720 h): 6.3123 reclaims, 6.3123 x 0.75 = 4.7342 h redone = 720 x 0.00657534
    share = value(fresh_db, "interruption_rework_share(32, 0.2, 1, 0.25, 720)")
    assert share == pytest.approx(0.00657534, abs=1e-8)
    # the hours redone grow with the run's length (a share of it): 720 h redo 4.73 h, a 90-day run 14.2 h
    assert 720 * share == pytest.approx(4.734247, abs=1e-6)
    assert 2160 * share == pytest.approx(14.202740, abs=1e-6)
    # checkpointing every 12 h instead: 0.00876712 x (6 + 0.25) = 0.0547945, 8.33x the rework
    assert value(fresh_db, "interruption_rework_share(32, 0.2, 12, 0.25, 720)") == pytest.approx(0.0547945, abs=1e-7)
    # twice the instances, twice as many reclaims of the job: twice the share
    assert value(fresh_db, "interruption_rework_share(64, 0.2, 1, 0.25, 720)") == pytest.approx(2 * share)
    # a run shorter than its checkpoint interval writes no checkpoint before it ends: a reclaim at a random time redoes
    # half the run, not half the interval (a review's finding on the 28-minute lora run). 1 instance, 0.469381 h:
    # 0.2 / 730 x (0.469381 / 2 + 0.25) = 0.000273973 x 0.484690 = 0.000132792 (it was x 0.75 = 0.000205479)
    assert value(fresh_db, "interruption_rework_share(1, 0.2, 1, 0.25, 0.469381)") == pytest.approx(0.000132792,
                                                                                                    abs=1e-9)
    # at exactly the interval, the two agree
    assert value(fresh_db, "interruption_rework_share(1, 0.2, 1, 0.25, 1)") == pytest.approx(0.2 / 730 * 0.75)


def test_offline_reclaim_loss_is_the_share_of_hours_spent_restarting(fresh_db):
    # offline inference on 2 instances a replica, 0.2 reclaims per instance-month, 0.25 h a restart: 2 x 0.2 / 730 x
    # 0.25 = 1.369863e-4 of every hour lost
    assert value(fresh_db, "offline_reclaim_loss(true, 2, 0.2, 0.25)") == pytest.approx(1.369863e-4, abs=1e-10)
    # a term without a declared rate loses nothing; a service carries a spare unit instead (null: no loss applies)
    assert value(fresh_db, "offline_reclaim_loss(true, 2, null, null)") == 0
    assert value(fresh_db, "offline_reclaim_loss(false, 2, 0.2, 0.25)") is None


# ---------------------------------------------------------------- the models
def land_prices(con, catalog):
    land(con, catalog, "aws_pricing", aws_pricing.rows_from_pages([("p", aws_page(
        aws_product("p5.48xlarge", "55.0400000000", sku="A000000000000001"),
        aws_product("g6e.12xlarge", "10.4926400000", sku="A000000000000002", gpu="4"),
    ))]), RUN, AS_OF)


@pytest.fixture
def priced(fresh_db, catalog):
    """The two offers, landed: a test changes the catalog, then builds."""
    land_prices(fresh_db, catalog)
    return fresh_db


@pytest.fixture(scope="module")
def built(tmp_path_factory, catalog):
    """The two offers and a p5.48xlarge spot price, built once with the catalog as shipped (read, never changed)."""
    con = warehouse.connect(tmp_path_factory.mktemp("communication") / "built.duckdb")
    warehouse.apply_ddl(con)
    warehouse.load_catalog_tables(con, catalog)
    land_prices(con, catalog)
    land(con, catalog, "aws_spot", aws_spot.rows_from_pages([("s", {"SpotPriceHistory": [{
        "AvailabilityZone": "us-east-1a", "InstanceType": "p5.48xlarge", "ProductDescription": "Linux/UNIX",
        "SpotPrice": "20.000000", "Timestamp": "2026-11-29T12:00:00+00:00"}]}, None)]), RUN, AS_OF)
    transform.build_models(con, RUN, AS_OF)
    yield con
    con.close()


def test_llama2_70b_on_h100_picks_tp4_once_the_all_reduce_is_paid(built):
    [row] = fetch_dicts(built, "select * from intermediate.int_inference_estimates_computed "
                               "where workload_id = 'llama2-70b-batch' and instance_type = 'p5.48xlarge' "
                               "and precision = 'bf16' and pricing_term = 'on_demand'")
    # offline, so the batch is what memory holds beside 138 GB of weights (1,324 tokens x 327,680 B a sequence):
    #   TP 2: (2 x 72 - 138) GB -> 13;  TP 4: (4 x 72 - 138) GB -> 345;  TP 8: (8 x 72 - 138) GB -> 1,009
    # decode steps with the all-reduce (test above for TP 4):
    #   TP 2: max(143.001 GB / 4.69e12 = 30.4906 ms, 1.8132 ms) + 13 x 5.8254e-6 = 30.5664 ms; prefill 148.791 ms
    #   TP 4: 31.8761 ms; prefill 80.3608 ms
    #   TP 8: max(28.0468, 35.1834 ms) + 1,009 x 1.019449e-5 = 35.1834 + 10.2862 = 45.4697 ms; prefill 46.1456 ms
    # tokens/s of a replica, batch x 300 / (300 x step + batch x prefill), times the replicas an instance holds:
    #   TP 2: 3,900 / (9.1699 + 1.9343) = 351.22 x 4 = 1,404.9
    #   TP 4: 103,500 / (9.5628 + 27.7245) = 2,775.74 x 2 = 5,551.5
    #   TP 8: 302,700 / (13.6407 + 46.5609) = 5,028.1 x 1
    # TP 4 serves the most per instance-hour. Without the all-reduce TP 8 won (6,498.1 against 6,216.8).
    assert (row["replica_chips"], row["replicas_per_instance"], row["batch"]) == (4, 2, 345)
    assert row["tpot_ms"] == pytest.approx(31.8761 + 345 * 80.3608 / 300, abs=1e-3)
    assert row["replica_tokens_per_s"] == pytest.approx(2775.74, abs=0.01)
    # the share of the time in all-reduces: 345 x 8.738133e-6 x (300 + 1,024) / 37.28731 s = 3.99139 / 37.28731
    assert row["comm_share"] == pytest.approx(0.107045, abs=1e-6)
    assert row["benchmark_label"].startswith(
        "roofline on h100-sxm-80gb specs: bf16, TP 4, batch 345; all-reduces 10.7% of the time at 450 GB/s each way")


def test_llama2_70b_on_four_l40s_over_pcie_spends_a_quarter_of_its_time_communicating(built):
    [row] = fetch_dicts(built, "select * from marts.inference_costs where workload_id = 'llama2-70b-batch' "
                               "and instance_type = 'g6e.12xlarge' and precision = 'bf16'")
    # 138 GB of weights need 4 chips of 48 GB (43.2 usable): (172.8 - 138) GB / 327,680 B / 1,324 -> batch 80.
    # step: max((138 + 80 x 0.38469632) GB / (4 x 0.864e12 x 0.7) = 69.7651 ms, 2 x 69e9 x 80 / 7.24e14 = 15.2486 ms)
    #   + 80 x 1.2288e-4 = 9.8304 ms -> 79.5955 ms; prefill 1.41312e14 / 7.24e14 = 195.182 ms + 1,024 x 1.2288e-4
    #   = 125.829 ms -> 321.011 ms; 80 x 300 / (300 x 0.0795955 + 80 x 0.321011) = 24,000 / 49.5595 = 484.27 tok/s
    assert (row["replica_chips"], row["batch"]) == (4, 80)
    assert row["replica_tokens_per_s"] == pytest.approx(484.266, abs=1e-3)
    # all-reduces: 80 x 1.2288e-4 x 1,324 / 49.5595 = 13.0154 / 49.5595 = 26.26% of the time (on NVLink, TP 4: 10.7%)
    assert row["comm_share"] == pytest.approx(0.262622, abs=1e-6)
    # 10.49264 USD / (484.27 x 3600) x 1e6 = 6.0186 USD per million tokens
    assert row["usd_per_million_tokens"] == pytest.approx(6.0186, abs=1e-4)


def test_a_chip_without_a_link_figure_is_split_for_free_and_says_so(priced):
    priced.execute("update catalog.accelerators set link_gb_per_s = null where accelerator_id = 'l40s-48gb'")
    transform.build_models(priced, RUN, AS_OF)
    [row] = fetch_dicts(priced, "select * from intermediate.int_inference_estimates_computed "
                                "where workload_id = 'llama2-70b-batch' and instance_type = 'g6e.12xlarge' "
                                "and precision = 'bf16'")
    # nothing modelled, so no share is claimed (null, not 0)
    assert row["comm_share"] is None and not row["comm_modelled"]
    assert "; no link figure for l40s-48gb: the split is not charged" in row["benchmark_label"]
    # the ranking carries it as a flag for the decision (TP 4 on the g6e's four L40S); the p5.48xlarge's split over
    # NVLink is charged
    flags = {(r["instance_type"], r["chips"]): r["split_uncharged"] for r in fetch_dicts(
        priced, "select instance_type, chips, split_uncharged from marts.rankings "
                "where workload_id = 'llama2-70b-batch' and precision = 'bf16' and pricing_term = 'on_demand'")}
    assert flags == {("g6e.12xlarge", 4): True, ("p5.48xlarge", 4): False}


def test_a_split_across_instances_without_figures_pays_the_flat_loss_and_is_not_flagged_uncharged(priced):
    # llama31-405b-chat at fp8 (406 GB with its KV cache) on L40S of 43.2 usable GB needs 10 chips: a group of 16, 4
    # g6e.12xlarge, once a replica may span 4 instances; with no link and no network figure the split pays the flat
    # loss per doubling of instances instead (charged, if only by a declared figure): not flagged
    priced.execute("update catalog.accelerators set link_gb_per_s = null where accelerator_id = 'l40s-48gb'")
    priced.execute("update catalog.instances set network_gbps = null where instance_type = 'g6e.12xlarge'")
    priced.execute("update catalog.workloads set max_instances_per_replica = 4 where workload_id = 'llama31-405b-chat'")
    transform.build_models(priced, RUN, AS_OF)
    rows = fetch_dicts(priced, "select replica_chips, instances_per_replica, split_uncharged, benchmark_label "
                               "from intermediate.int_inference_estimates_computed where workload_id = "
                               "'llama31-405b-chat' and instance_type = 'g6e.12xlarge' and precision = 'fp8' "
                               "and pricing_term = 'on_demand'")
    assert [(r["replica_chips"], r["instances_per_replica"], r["split_uncharged"]) for r in rows] == [(16, 4, False)]
    assert "; no link or network figure for the split across 4 instances: flat 0.95 per doubling (declared)" in (
        rows[0]["benchmark_label"])


def test_training_across_instances_pays_the_exposed_gradient_all_reduce(priced):
    # nothing hidden behind compute, to see the term: allreduce_overlap 0
    priced.execute("update catalog.family_defaults set allreduce_overlap = 0 where family = 'gpu'")
    transform.build_models(priced, RUN, AS_OF)
    [row] = fetch_dicts(priced, "select * from marts.training_costs where workload_id = 'llama31-8b-pretrain-1t' "
                                "and instance_type = 'p5.48xlarge'")
    # Llama-3.1-8B on 256 H100 = 32 p5.48xlarge, GPU default MFU 0.40 (no measurement landed):
    # step of 4,194,304 tokens: 6 x 8e9 x 4,194,304 / (256 x 989.4e12 x 0.4) = 2.013266e17 / 1.013146e17 = 1.987144 s
    # gradient all-reduce: 2 x 31/32 x 8e9 x 2 B = 31 GB / 400 GB/s = 0.0775 s; efficiency 1.987144 / 2.064644
    # = 0.962463 (the flat declared loss was 0.95^5 = 0.773781)
    assert (row["chips"], row["instances"], row["basis"]) == (256, 32, "estimated")
    assert row["comm_share"] == pytest.approx(1 - 0.962463, abs=1e-6)
    # 4.8e22 / 1.0131456e17 / 3600 = 131.60333 h at full efficiency; / 0.962463 = 136.7360 h
    assert row["run_hours"] == pytest.approx(136.7360, abs=1e-4)
    assert row["benchmark_label"].endswith(
        "; gradient all-reduce 0.08 s a step of 1.99 s over 3,200 Gbit/s, 3.8% of the time exposed")


def test_training_on_an_instance_without_a_network_figure_keeps_the_flat_loss(priced):
    priced.execute("update catalog.instances set network_gbps = null where instance_type = 'p5.48xlarge'")
    transform.build_models(priced, RUN, AS_OF)
    [row] = fetch_dicts(priced, "select * from marts.training_costs where workload_id = 'llama31-8b-pretrain-1t' "
                                "and instance_type = 'p5.48xlarge'")
    # 0.95 ^ log2(32) = 0.773781: 131.60333 h / 0.773781 = 170.0783 h; the flat loss is no measured share of time
    assert row["comm_share"] is None
    assert row["run_hours"] == pytest.approx(170.0783, abs=1e-4)
    assert row["benchmark_label"].endswith(
        "; no network figure for p5.48xlarge: flat 0.95 per doubling of 32 instances (declared)")


def test_spot_training_redoes_what_its_reclaims_cost(built):
    [row] = fetch_dicts(built, "select * from marts.training_costs where workload_id = 'llama31-8b-pretrain-1t' "
                               "and instance_type = 'p5.48xlarge' and pricing_term = 'spot'")
    # 32 instances x 0.2 reclaims per instance-month / 730 x (1 h checkpoints / 2 + 0.25 h restart) = 0.00657534
    # (the flat declared fallback was 0.15). Run: 4.8e22 / 1.0131456e17 / 3600 = 131.6033 h (the all-reduce hides)
    assert row["interruption_overhead"] == pytest.approx(0.00657534, abs=1e-8)
    assert row["run_hours"] == pytest.approx(131.6033, abs=1e-4)
    # 32 x 0.2 / 730 x 131.6033 = 1.15378 reclaims expected; cost 131.6033 x 32 x 20 x 1.00657534 = 84,779.95 USD
    assert row["expected_interruptions"] == pytest.approx(1.15378, abs=1e-5)
    assert row["completed_run_usd"] == pytest.approx(84_779.95, abs=0.01)
    assert row["interruption_basis"] == ("modelled: 0.2 reclaims per instance-month (aws-spot-instance-advisor) x 32 "
                                         "instances, checkpoint every 1 h, restart 0.25 h: 0.66% redone")


def test_a_deadline_counts_the_rework_of_a_runs_reclaims(priced, catalog):
    land(priced, catalog, "aws_spot", aws_spot.rows_from_pages([("s", {"SpotPriceHistory": [{
        "AvailabilityZone": "us-east-1a", "InstanceType": "p5.48xlarge", "ProductDescription": "Linux/UNIX",
        "SpotPrice": "20.000000", "Timestamp": "2026-11-29T12:00:00+00:00"}]}, None)]), RUN, AS_OF)
    # llama31-8b-pretrain-1t on 32 p5.48xlarge: 131.6033 h (above); on spot 0.657534% of it redone (32 x 0.2 / 730 x
    # 0.75): 131.6033 x 1.00657534 = 132.4686 h of wall clock. A 132 h deadline: on demand makes it, spot does not
    priced.execute("update catalog.workloads set deadline_hours = 132 where workload_id = 'llama31-8b-pretrain-1t'")
    transform.build_models(priced, RUN, AS_OF)
    ranked = {r["pricing_term"] for r in fetch_dicts(
        priced, "select pricing_term from marts.rankings where workload_id = 'llama31-8b-pretrain-1t' "
                "and instance_type = 'p5.48xlarge'")}
    assert ranked == {"on_demand"}
    assert fetch_dicts(priced, "select pricing_term from marts.training_costs where workload_id = "
                               "'llama31-8b-pretrain-1t' and instance_type = 'p5.48xlarge'") == [
        {"pricing_term": "on_demand"}]
    [excluded] = fetch_dicts(priced, "select chips, exclusion_reason from marts.excluded_candidates where workload_id = "
                                     "'llama31-8b-pretrain-1t' and offer_id = 'aws:us-east-1:p5.48xlarge:spot'")
    assert excluded == {"chips": 256, "exclusion_reason": "needs 132.5 h on 256 chips, 0.66% of it redone after "
                                                          "reclaims; the deadline is 132 h"}


def test_an_estimate_past_its_deadline_says_the_hours_it_needs_to_three_figures(priced):
    # llama31-8b-pretrain-1t on 32 p5.48xlarge on demand takes 131.6033 h for 1e12 tokens (above); half the tokens,
    # 5e11, take half: 65.8017 h (the step, and so the all-reduce's share, is the same). A 50 h deadline excludes it,
    # and the reason writes 65.8 h as the Full ranking would (whole hours said 66)
    priced.execute("update catalog.workloads set tokens = 5e11, deadline_hours = 50 "
                   "where workload_id = 'llama31-8b-pretrain-1t'")
    transform.build_models(priced, RUN, AS_OF)
    [excluded] = fetch_dicts(priced, "select exclusion_reason from marts.excluded_candidates where workload_id = "
                                     "'llama31-8b-pretrain-1t' and offer_id = 'aws:us-east-1:p5.48xlarge:on_demand'")
    assert excluded == {"exclusion_reason": "needs 65.8 h on 256 chips; the deadline is 50 h"}


def test_deadline_reasons_write_the_deadline_thousands_separated_and_below_the_hours_needed(priced, catalog):
    """Both reasons, the estimate's (int_training_estimates_computed) and the priced run's with its rework
    (int_training_costs_computed), write a deadline past 1,000 h as the pages write numbers, and the hours needed
    with a decimal where whole hours would write the deadline's own figure."""
    land(priced, catalog, "aws_spot", aws_spot.rows_from_pages([("s", {"SpotPriceHistory": [{
        "AvailabilityZone": "us-east-1a", "InstanceType": "p5.48xlarge", "ProductDescription": "Linux/UNIX",
        "SpotPrice": "20.000000", "Timestamp": "2026-11-29T12:00:00+00:00"}]}, None)]), RUN, AS_OF)
    # 2e13 tokens take 20 x 131.6033 = 2,632.0666 h on 32 p5.48xlarge (6 x 8e9 x 2e13 / 1.0131456e17 / 3600); on
    # spot 0.657534% more is redone: 2,632.0666 x 1.00657534 = 2,649.3733 h of wall clock
    reasons = {}
    for deadline in (2632, 2632.05, 2649):
        priced.execute("update catalog.workloads set tokens = 2e13, deadline_hours = ? "
                       "where workload_id = 'llama31-8b-pretrain-1t'", [deadline])
        transform.build_models(priced, RUN, AS_OF)
        reasons[deadline] = {r["pricing_term"]: r["exclusion_reason"] for r in fetch_dicts(
            priced, "select pricing_term, exclusion_reason from marts.excluded_candidates where workload_id = "
                    "'llama31-8b-pretrain-1t' and instance_type = 'p5.48xlarge' and region = 'us-east-1'")}
    # 2,632.0666 h against 2,632 h: whole hours would say "needs 2,632 h", the deadline's figure; one decimal more
    assert reasons[2632] == {"on_demand": "needs 2,632.1 h on 256 chips; the deadline is 2,632 h",
                             "spot": "needs 2,632.1 h on 256 chips; the deadline is 2,632 h"}
    # a deadline of 2,632.05 h is written as declared (not rounded to 2,632), and 2,632.1 is past it
    assert reasons[2632.05]["on_demand"] == "needs 2,632.1 h on 256 chips; the deadline is 2,632.05 h"
    # on demand makes 2,649 h (2,632.07 h); spot's 2,649.3733 h do not, and whole hours would say 2,649 again
    assert reasons[2649] == {"spot": "needs 2,649.4 h on 256 chips, 0.66% of it redone after reclaims; the "
                                     "deadline is 2,649 h"}


def test_a_calibrated_estimate_reproduces_the_measurement_it_was_fitted_on(priced, catalog):
    from builders import mlperf_inference_result

    from flows.sources import mlperf_inference

    # one MLPerf result of 8 H100 at 3,000 tokens/s a chip, the task's shape made the workload's (1,024 + 300)
    land(priced, catalog, "mlperf_inference", mlperf_inference.result_rows([mlperf_inference_result(
        "a", "NVIDIA H100-SXM-80GB", "llama2-70b-99", "Offline", 8 * 3000.0)], "s.json"), RUN, AS_OF)
    priced.execute("update catalog.mlperf_inference_tasks set output_tokens = 300 where task = 'llama2-70b'")
    transform.build_models(priced, RUN, AS_OF)
    [backtest] = fetch_dicts(priced, "select * from marts.estimate_backtest")
    # the back-test's estimate of that system is the TP 4 replica above, 2,775.74 / 4 = 693.94 tokens/s a chip:
    # factor 3,000 / 693.94 = 4.3232. Offline, the batch is memory's; the step, the prefill and the all-reduces all
    # shrink by the factor, so the calibrated estimate of the same setup is the measurement again: 3,000 a chip
    assert backtest["estimated"] == pytest.approx(693.935, abs=1e-3)
    [row] = fetch_dicts(priced, "select * from intermediate.int_inference_estimates_computed "
                                "where workload_id = 'llama2-70b-batch' and instance_type = 'p5.48xlarge' "
                                "and precision = 'bf16'")
    assert row["basis"] == "calibrated"
    assert row["tokens_per_s_per_chip"] == pytest.approx(3000.0, abs=1e-6)
    # without the all-reduce term the same estimate would have been 812.26 a chip (TP 8): the term is 15% of it
    assert backtest["estimated_without_comm"] == pytest.approx(812.262, abs=1e-3)


def test_fp8_training_reduces_its_gradients_in_16_bits(priced):
    # fp8 training recipes keep gradients (and their all-reduce) in bf16 or wider: the step computes at the fp8 peak,
    # the all-reduce moves 2 bytes a parameter, not fp8's 1
    priced.execute("update catalog.family_defaults set allreduce_overlap = 0 where family = 'gpu'")
    priced.execute("update catalog.workloads set training_precision = 'fp8' where workload_id = 'llama31-8b-pretrain-1t'")
    transform.build_models(priced, RUN, AS_OF)
    [row] = fetch_dicts(priced, "select * from marts.training_costs where workload_id = 'llama31-8b-pretrain-1t' "
                                "and instance_type = 'p5.48xlarge'")
    # step: 6 x 8e9 x 4,194,304 / (256 x 1,978.9e12 x 0.4) = 2.013266e17 / 2.0263936e17 = 0.993522 s; all-reduce
    # 2 x 31/32 x 8e9 x 2 B / 400 GB/s = 0.0775 s (at 1 B it would be 0.03875 s, efficiency 0.962461);
    # efficiency 0.993522 / 1.071022 = 0.927639
    assert row["comm_share"] == pytest.approx(1 - 0.927639, abs=1e-6)
    # 4.8e22 / 2.0263936e17 / 3600 = 65.79834 h at full efficiency; / 0.927639 = 70.9310 h
    assert row["run_hours"] == pytest.approx(70.9310, abs=1e-4)
