"""The cost macros in sql/macros.sql, each checked against arithmetic done by hand."""

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
    # FACTS worked check: 24.69 min / 60 x 1 instance x 63.296 USD/h = 26.0463 USD
    assert value(fresh_db, "completed_run_usd(24.69, 1, 63.296)") == pytest.approx(26.0463, abs=1e-4)


def test_completed_run_usd_gpt3_on_512_tpu_v5p(fresh_db):
    # 114.79 / 60 x 128 instances x (4 chips x 4.20) = 1.91317 x 2150.4 = 4114.07 USD
    assert value(fresh_db, "completed_run_usd(114.79, 128, 16.8)") == pytest.approx(4114.07, abs=0.01)


def test_usd_per_million_tokens_llama2_70b_on_p5(fresh_db):
    # FACTS worked check: 55.04 / (24,528 x 3600) x 1e6 = 55.04 / 88,300,800 x 1e6 = 0.62332 USD
    assert value(fresh_db, "usd_per_million_tokens(55.04, 24528)") == pytest.approx(0.62332, abs=1e-5)


def test_replicas_of_a_small_system_share_an_instance(fresh_db):
    # a 1-chip result on an 8-chip instance: 8 replicas on one instance; an 8-chip one on 8 chips: 1
    assert value(fresh_db, "replicas_per_instance(1, 8)") == 8
    assert value(fresh_db, "replica_instances(1, 8)") == 1
    assert value(fresh_db, "replicas_per_instance(8, 8)") == 1


def test_a_large_replica_spans_whole_instances(fresh_db):
    # a 16-chip system on 8-chip instances spans 2 instances and is 1 replica; on 12-chip ones, ceil(16/12) = 2
    assert value(fresh_db, "replica_instances(16, 8)") == 2
    assert value(fresh_db, "replicas_per_instance(16, 8)") == 1
    assert value(fresh_db, "replica_instances(16, 12)") == 2


def test_effective_usd_per_hour_amortises_upfront_fee(fresh_db):
    # 1-yr partial upfront: 10.00 USD/h + 43,800 USD / 8760 h = 10 + 5 = 15.00 USD/h
    assert value(fresh_db, "effective_usd_per_hour(10.0, 43800, 8760)") == pytest.approx(15.0)
    # no upfront fee: the hourly rate as is
    assert value(fresh_db, "effective_usd_per_hour(10.0, null, 8760)") == pytest.approx(10.0)
