"""The workload pages' charts: valid PNGs that plot exactly what the marts hold, the pick and the cheapest chip-hour
marked, and a history chart once a warehouse has two runs."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import math
import gc
import os
import re
from pathlib import Path

import duckdb
import matplotlib.text
import polars as pl
import pytest
from builders import worker_outlives_its_killed_run
from conftest import AS_OF
from polars.testing import assert_frame_equal
from test_changes import DAY_2, run_day_two

from flows import cache, chart_images, chart_kit, chart_workers, charts
from flows.formatting import usd

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
LORA = "llama2-70b-lora-finetune"


@pytest.fixture(scope="module")
def day_one(flow_run):
    """The session's run on the embedded snapshot, read-only."""
    con = duckdb.connect(str(flow_run.warehouse), read_only=True)
    yield con
    con.close()


@pytest.fixture(scope="module")
def day_one_charts(day_one) -> dict[str, list[chart_kit.Chart]]:
    """Every workload's charts as of the session's run."""
    workloads = [w for (w,) in day_one.execute("select workload_id from catalog.workloads order by 1").fetchall()]
    return {w: charts.workload_charts(day_one, AS_OF, w) for w in workloads}


@pytest.fixture(scope="module")
def two_runs(flow_run, prefect_server, tmp_path_factory):
    """The session's run copied, then day 2 of tests/test_changes.py on top (the lora pick changes)."""
    warehouse = run_day_two(flow_run, tmp_path_factory.mktemp("charts-two-runs")).warehouse
    con = duckdb.connect(str(warehouse), read_only=True)
    yield con
    con.close()


def offer(row: dict) -> str:
    return f"{row['cloud']} {row['instance_type']} ({row['pricing_term']})"


def query(con, sql: str, params: list):
    return con.execute(sql, params).fetchall()


def test_every_workload_has_two_charts_of_valid_png(day_one_charts):
    from PIL import Image

    assert len(day_one_charts) == 9
    for workload_id, found in day_one_charts.items():
        # no cost-against-interactivity chart: llama2-70b-chat's load points are MLPerf Server results, all at the
        # scenario's floor of 5 tokens/s per user (the MI300X has two rounds' at that one speed): no frontier
        assert [c.file_name for c in found] == [f"charts/{workload_id}-outcome-vs-chip-hour.png",
                                                f"charts/{workload_id}-top-candidates.png"]
        for chart in found:
            assert chart.image.startswith(PNG_SIGNATURE) and len(chart.image) > 5_000, chart.file_name
            with Image.open(io.BytesIO(chart.image)) as image:
                image.load()
                assert (image.format, image.size) == ("PNG", (700, 400))
                assert "Software" not in image.info
            assert chart.title.startswith(f"{workload_id}: ") and "\n" not in chart.caption


def test_a_chart_is_its_figure_drawn_the_same_every_time(day_one_charts):
    chart = day_one_charts["gpt3-175b-pretrain"][0]
    figure = charts.outcome_vs_chip_hour_figure(chart.data, chart.title)
    assert chart_images.png_bytes(figure) == chart.image


@pytest.fixture
def one_worker(monkeypatch, tmp_path):
    """One chart worker of this test's own (stopped after it), an empty chart cache, no chart drawn before here."""
    chart_workers.shutdown()
    monkeypatch.setenv(chart_workers.WORKERS_ENV, "1")
    monkeypatch.setenv("HWEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(chart_images, "_drawn", type(chart_images._drawn)())
    yield tmp_path / "cache" / "charts"
    chart_workers.shutdown()


def test_a_chart_a_worker_draws_is_the_png_drawn_here_and_is_cached(day_one_charts, one_worker):
    first, second = day_one_charts["gpt3-175b-pretrain"][:2]
    third = day_one_charts["llama2-70b-chat"][0]
    by_worker = chart_kit.make_chart("a.png", first.title, "", first.data, charts.outcome_vs_chip_hour_figure)
    queued = chart_kit.make_chart("b.png", second.title, "", second.data, charts.top_candidates_figure)
    # the one worker has two charts (CHARTS_PER_WORKER: the one it draws, the next waiting; it is still starting):
    # the third is drawn in this process meanwhile
    here = chart_kit.make_chart("c.png", third.title, "", third.data, charts.outcome_vs_chip_hour_figure)
    assert isinstance(by_worker.drawing, chart_images.Drawing) and isinstance(queued.drawing, chart_images.Drawing)
    assert isinstance(here.drawing, bytes)
    assert len(list(one_worker.glob("*.png"))) == 1  # the one drawn here; the worker's once this process has them
    # another process, the same bytes: the same code, fonts and Matplotlib
    assert by_worker.image == chart_images.png_bytes(charts.outcome_vs_chip_hour_figure(first.data, first.title))
    assert queued.image == second.image and here.image == third.image
    assert len(list(one_worker.glob("*.png"))) == 3
    again = chart_kit.make_chart("a.png", first.title, "", first.data, charts.outcome_vs_chip_hour_figure)
    assert again.image == by_worker.image


def figure_of_another_module(frame, title):
    """A module-level drawing function that is not hweval's: a chart worker would have to import this test module."""
    return charts.outcome_vs_chip_hour_figure(frame, title)


def test_only_hwevals_own_drawing_functions_go_to_a_chart_worker(day_one_charts, one_worker):
    """A worker imports the drawing function by its module and name: hweval's (flows.*) it can; another module's
    function is drawn in this process, though the one worker is free."""
    chart = day_one_charts["gpt3-175b-pretrain"][0]
    other = chart_images.image(figure_of_another_module, chart.data, "not hweval's", "code")
    assert isinstance(other, bytes)
    ours = chart_images.image(charts.outcome_vs_chip_hour_figure, chart.data, "hweval's", "code")
    assert isinstance(ours, chart_images.Drawing)
    assert ours.result() == chart_images.png_bytes(charts.outcome_vs_chip_hour_figure(chart.data, "hweval's"))


def test_when_the_chart_workers_die_this_process_does_their_work(one_worker, caplog):
    future = chart_workers.submit(os._exit, 1)  # the worker process dies before it answers
    assert chart_workers.result(future, lambda: b"drawn here") == b"drawn here"
    assert "the chart workers stopped" in caplog.text
    assert chart_workers.submit(os.getpid) is None  # none left: callers draw their charts themselves


def test_a_chart_worker_leaves_a_ctrl_c_to_the_run(one_worker):
    """A Ctrl-C at the terminal reaches the run's whole process group: a worker ignores it (it printed its own
    traceback, and died under the run, which stops its workers itself) and draws on."""
    import signal
    import time

    worker = chart_workers.submit(os.getpid).result(timeout=120)
    os.kill(worker, signal.SIGINT)
    time.sleep(0.2)  # a worker that took it would be gone by now (a KeyboardInterrupt as it waits for work)
    assert chart_workers.submit(os.getpid).result(timeout=120) == worker
    # spawned with SIGINT blocked (a Ctrl-C during its own start was a fatal error), it let it through once ignored
    assert signal.SIGINT not in chart_workers.submit(signal.pthread_sigmask, signal.SIG_BLOCK, []).result(timeout=120)


def test_a_pool_spawns_its_workers_with_sigint_blocked_and_this_thread_gets_it_back(monkeypatch):
    """What a worker is spawned with: SIGINT blocked in the submitting thread while the pool may spawn (the mask
    passes through fork and exec), and this thread's mask as it was once the block ends."""
    import signal

    masks = []

    def submit(self, fn, *args):
        masks.append(signal.pthread_sigmask(signal.SIG_BLOCK, []))
        raise RuntimeError("shut down")  # as a pool shut down at exit answers: nothing is spawned

    monkeypatch.setattr(chart_workers.ProcessPoolExecutor, "submit", submit)
    monkeypatch.setenv(chart_workers.WORKERS_ENV, "1")
    chart_workers.shutdown()
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    try:
        assert chart_workers.submit(os.getpid) is None
    finally:
        chart_workers.shutdown()
    assert signal.SIGINT in masks[0] and signal.pthread_sigmask(signal.SIG_BLOCK, []) == before


def test_a_chart_worker_freezes_its_modules_after_its_warm_up(one_worker):
    """A worker's Matplotlib lives as long as it does: frozen (gc.freeze) after the warm-up, its collections and its
    exit at the run's end skip it (the run waits for its workers to exit)."""
    # Matplotlib's Figure class, which the warm-up imports, is frozen: gc.get_objects() lists the generations the
    # collector walks, not the frozen one (eval: a builtin, which the worker can be handed by name)
    future = chart_workers.submit(eval, "not any(o is __import__('matplotlib.figure').figure.Figure "
                                        "for o in __import__('gc').get_objects())")
    assert future is not None
    assert future.result(timeout=120) is True
    # its imports were made with fewer garbage collections (flows/startup_gc.py); from then on it collects at Python's
    # thresholds, this process's
    imported_with = chart_workers.submit(eval, "__import__('flows.startup_gc').startup_gc.imported_with")
    assert imported_with.result(timeout=120) == (10_000, 10, 10)
    assert chart_workers.submit(gc.get_threshold).result(timeout=120) == gc.get_threshold()


@pytest.mark.slow  # a worker pool shut down mid-draw (1.7 s): make test-slow and CI
def test_a_pool_shut_down_while_busy_leaves_the_next_ones_count_alone(one_worker):
    import time

    chart_workers.submit(time.sleep, 0.5)
    chart_workers.shutdown()  # waits for the sleep: its end must not count against the next pool
    assert chart_workers.submit(os.getpid) is not None  # a new pool, its one worker starting
    assert chart_workers.submit(os.getpid) is not None  # the next, waiting for it
    assert chart_workers.submit(os.getpid) is None  # full: exactly two in flight (CHARTS_PER_WORKER), not one


def test_a_chart_worker_exits_when_the_run_that_started_it_is_killed():
    program = ("import os, time\n"
               "os.environ['HWEVAL_CHART_WORKERS'] = '1'\n"
               "from flows import chart_workers\n"
               "print(chart_workers.submit(os.getpid).result(), flush=True)\n"
               "time.sleep(120)\n")
    assert not worker_outlives_its_killed_run(program)


def test_the_chart_workers_setting_is_a_bounded_count(monkeypatch):
    assert chart_workers.configured_workers({"HWEVAL_CHART_WORKERS": "0"}) == 0
    assert chart_workers.configured_workers({"HWEVAL_CHART_WORKERS": " 3 "}) == 3
    cores = len(os.sched_getaffinity(0))
    assert chart_workers.configured_workers({}) == min(chart_workers.DEFAULT_MAX_WORKERS, cores - 1)
    for bad in ("-1", "two", "1.5", str(chart_workers.MAX_WORKERS + 1)):
        with pytest.raises(chart_workers.ChartWorkersError, match=f"HWEVAL_CHART_WORKERS='{re.escape(bad)}'"):
            chart_workers.configured_workers({"HWEVAL_CHART_WORKERS": bad})
    chart_workers.shutdown()
    monkeypatch.setenv("HWEVAL_CHART_WORKERS", "0")
    assert chart_workers.submit(os.getpid) is None  # no worker: the caller draws


def test_a_chart_drawn_before_in_this_process_is_reused_and_new_data_is_drawn(day_one_charts):
    chart = day_one_charts["gpt3-175b-pretrain"][0]
    calls = []

    def draw(frame, title):
        calls.append(title)
        return charts.outcome_vs_chip_hour_figure(frame, title)

    first = chart_kit.make_chart("a.png", "reuse test", "", chart.data, draw)
    again = chart_kit.make_chart("a.png", "reuse test", "", chart.data, draw)
    assert calls == ["reuse test"] and again.image == first.image
    cheaper = chart.data.with_columns(chart.data["outcome_value"] * 0.5)  # every outcome halved: another chart
    assert chart_kit.make_chart("a.png", "reuse test", "", cheaper, draw).image != first.image and len(calls) == 2


def test_a_chart_an_earlier_run_drew_is_read_from_the_cache_folder_which_is_bounded(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    folder = tmp_path / "cache" / "charts"
    monkeypatch.setenv("HWEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "CACHE_KEPT", 2)
    calls = []

    def draw(frame, title):
        calls.append(title)
        figure = Figure(figsize=(2, 2))
        figure.add_subplot().plot(frame["x"].to_list())
        return figure

    data = pl.DataFrame({"x": [1.0, 2.0, 4.0]})
    first = chart_kit.make_chart("a.png", "cache test", "", data, draw)
    monkeypatch.setattr(chart_images, "_drawn", type(chart_images._drawn)())  # a new process: only the folder remembers
    again = chart_kit.make_chart("a.png", "cache test", "", data, draw)
    assert calls == ["cache test"] and again.image == first.image and again.image.startswith(PNG_SIGNATURE)
    for n in (2, 3):  # two more charts: the folder keeps the two used last
        chart_kit.make_chart("a.png", f"cache test {n}", "", data, draw)
    assert len(list(folder.glob("*.png"))) == 2
    monkeypatch.setenv("HWEVAL_CACHE", "")  # empty: no folder at all
    assert cache.cache_root() is None


def test_every_module_that_makes_a_chart_is_in_the_drawing_code_that_keys_its_png():
    """A chart's PNG is cached under a key that holds the drawing code: the bytes of chart_kit.DRAWING_MODULES. A
    module that makes charts but is left out of it would keep handing out the PNGs cached before its drawing changed."""
    flows_dir = Path(chart_kit.__file__).parent
    making = {path.name for path in flows_dir.glob("*.py")
              if re.search(r"\bmake_chart\(", path.read_text(encoding="utf-8"))}
    assert {"charts.py", "frontier_chart.py", "backtest_chart.py"} <= making  # the search finds the three that do
    assert making | {"formatting.py"} <= set(chart_kit.DRAWING_MODULES)
    key = chart_kit.DRAWING_CODE
    assert key == hashlib.sha256(b"".join((flows_dir / name).read_bytes() for name in chart_kit.DRAWING_MODULES)
                                 ).hexdigest()


def test_captions_say_what_to_read(day_one_charts):
    # gpt3-175b-pretrain: the pick tpu-v6e-8 spot at 4.35 / 8 USD per chip-hour, 531.15 USD per run (64 instances
    # reclaimed 64 x 0.2 / 730 an hour, each redoing 0.75 h: 1.315% rework); trn1.32xlarge spot is the cheapest
    # chip-hour (0.151875) at 804.60 USD per run (its all-reduce hides behind compute), 804.60 / 531.15 = 1.51x as
    # much, but its likely range reaches down to 804.60 x 0.582533 = 468.71, below the pick's high end 848.08: it
    # may be cheaper (marts.decisions chip_hour_pick_may_cost_less); number 10 of the bars costs 1,550.47,
    # 1,550.47 / 531.15 = 2.92x; 52 candidates: 27 gpu + 9 tpu + 7 trainium + 9 cpu
    scatter, bars = day_one_charts["gpt3-175b-pretrain"]
    assert scatter.title == "gpt3-175b-pretrain: USD per completed run against USD per chip-hour, 52 candidates"
    assert scatter.caption == (
        "Lower is better on both axes; the pick, gcp tpu-v6e-8 (spot), sits at 0.544 USD per chip-hour; the "
        "cheapest chip-hour, aws trn1.32xlarge (spot), costs 1.51x as much per completed run (too close to call: "
        "it may be cheaper).")
    assert bars.title == "gpt3-175b-pretrain: the 10 cheapest candidates by USD per completed run"
    assert bars.caption == (
        "Shorter is better; of 52 candidates the pick, gcp tpu-v6e-8 (spot), costs 531.15 USD per completed run "
        "and number 10 1,550.47, 2.92x as much; the fill tells a measured cost from one scaled "
        "from a benchmark, calibrated on measurements of the chip, or estimated from specs alone.")
    # lora's pick is its cheapest chip-hour of those ranked; 18 spot offers cheaper per chip-hour are excluded (no
    # MLPerf llama2_70b_lora result for them, no token count to estimate from), as its Decision says; lora ranks
    # p5.48xlarge spot in two regions, so the pick is named with its region
    assert day_one_charts[LORA][0].caption == (
        "Lower is better on both axes; the pick, aws p5.48xlarge (us-east-1, spot), sits at 1.280 USD per chip-hour "
        "and is also the cheapest chip-hour among the ranked candidates; 18 offers cheaper per chip-hour are "
        "excluded.")


def test_the_cheapest_chip_hour_is_of_the_ranked_candidates_where_cheaper_ones_were_excluded(day_one_charts):
    # llama31-8b-pretrain-1t: tpu-v5litepod-8 spot (0.245 USD per chip-hour) is the cheapest it ranks, at 43,193.04
    # USD per run against the pick's 21,095.44: 2.05x; trn1.32xlarge (0.152) and trn1n.32xlarge (0.169) spot miss
    # the 720 h deadline, excluded: the Decision says "among the ranked candidates" and so does the caption; its
    # likely range reaches down to 43,193.03 x 0.582533 = 25,161.39, below the pick's high end 33,683.07
    assert day_one_charts["llama31-8b-pretrain-1t"][0].caption == (
        "Lower is better on both axes; the pick, gcp tpu-v6e-8 (spot), sits at 0.544 USD per chip-hour; the cheapest "
        "chip-hour among the ranked candidates, gcp tpu-v5litepod-8 (spot), costs 2.05x as much per completed run "
        "(too close to call: it may be cheaper); 2 offers cheaper per chip-hour are excluded.")
    # one excluded offer: said in the singular; none (gpt3-175b-pretrain, above): no qualifier
    one = pl.DataFrame([candidate("a", 1, 2.0, 100.0, chip_hour_rank=1)])
    assert charts.outcome_vs_chip_hour_caption(one, 1) == (
        "Lower is better on both axes; the pick, aws p5.48xlarge (spot), sits at 2.000 USD per chip-hour and is also "
        "the cheapest chip-hour among the ranked candidates; 1 offer cheaper per chip-hour is excluded.")
    assert charts.outcome_vs_chip_hour_caption(one).endswith("and is also the cheapest chip-hour.")


def test_the_scatter_plots_every_ranked_candidate_of_the_mart(day_one, day_one_charts):
    for workload_id, (chart, _, *_) in day_one_charts.items():
        expected = day_one.sql(
            "select candidate_id, offer_id, cloud, region, instance_type, pricing_term, precision, chips, family, "
            "basis, usd_per_chip_hour, chip_hour_rank, outcome_metric, outcome_value, outcome_rank, "
            "count(distinct region) over (partition by cloud, instance_type, pricing_term) as offer_regions "
            "from marts.rankings where as_of = ? and workload_id = ? order by outcome_rank, usd_per_chip_hour, "
            "candidate_id", params=[AS_OF, workload_id]).pl()
        assert_frame_equal(chart.data, expected)
        figure = charts.outcome_vs_chip_hour_figure(chart.data, chart.title)
        ax = figure.axes[0]
        plotted = {c.get_label(): sorted(map(tuple, c.get_offsets().tolist())) for c in ax.collections}
        by_family: dict[str, list] = {}
        for family, x, y in query(day_one, "select family, usd_per_chip_hour, outcome_value from marts.rankings "
                                  "where as_of = ? and workload_id = ?", [AS_OF, workload_id]):
            by_family.setdefault(family, []).append((x, y))
        assert plotted == {family: sorted(points) for family, points in by_family.items()}, workload_id
        [unit] = {chart_kit.OUTCOME_UNITS[m] for m in chart.data["outcome_metric"]}
        assert ax.get_xlabel().startswith("USD per chip-hour") and ax.get_ylabel().startswith(unit)
        # 38 gpt3 candidates cost 488.63 to 13,589.97 USD per run (28x): a log scale; lora's 5.53 to 46.15 (8.3x) not
        assert ax.get_yscale() == ("log" if chart_kit.wide_span(chart.data["outcome_value"]) else "linear")
    gpt3 = day_one_charts["gpt3-175b-pretrain"][0]
    assert charts.outcome_vs_chip_hour_figure(gpt3.data, "").axes[0].get_yscale() == "log"
    assert charts.outcome_vs_chip_hour_figure(day_one_charts[LORA][0].data, "").axes[0].get_yscale() == "linear"


def test_a_label_is_placed_off_the_plotted_points_where_its_places_allow(day_one_charts):
    """gpt3's "pick: gcp tpu-v6e-8 (spot)" sat on a3-highgpu-8g's point (2.2 USD, 1,000 USD a run); placed clear of
    the points, no label covers more than one (the old placement covered up to 8: inf2.xlarge's label on the 8B chat's
    trainium and inferentia points), and gpt3's pick label none."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    covered = {}
    for workload_id, (chart, *_) in day_one_charts.items():
        figure = charts.outcome_vs_chip_hour_figure(chart.data, chart.title)
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        ax = figure.axes[0]
        points = ax.transData.transform(list(zip(chart.data["usd_per_chip_hour"], chart.data["outcome_value"],
                                                 strict=True)))
        for text in ax.texts:  # the label's text alone, not its leader line (Annotation's extent holds both)
            box = matplotlib.text.Text.get_window_extent(text, canvas.get_renderer())
            covered[workload_id, text.get_text().split(":")[0]] = sum(
                box.x0 <= x <= box.x1 and box.y0 <= y <= box.y1 for x, y in points)
    assert covered["gpt3-175b-pretrain", "pick"] == 0
    assert max(covered.values()) <= 1, covered


def test_the_pick_and_the_cheapest_chip_hour_are_marked_and_labelled(day_one, day_one_charts):
    for workload_id, (chart, _, *_) in day_one_charts.items():
        [pick] = day_one.sql("select * from marts.rank_history where as_of = ? and workload_id = ? and is_pick",
                             params=[AS_OF, workload_id]).pl().to_dicts()
        cheapest = day_one.sql("select * from marts.rankings where as_of = ? and workload_id = ? "
                               "and chip_hour_rank = 1 order by outcome_rank, candidate_id limit 1",
                               params=[AS_OF, workload_id]).pl().row(0, named=True)
        ax = charts.outcome_vs_chip_hour_figure(chart.data, chart.title).axes[0]
        labels = {t.get_text(): t.xy for t in ax.texts}
        marks = {line.get_label(): (line.get_xdata()[0], line.get_ydata()[0]) for line in ax.lines}
        at_pick = (pick["usd_per_chip_hour"], pick["outcome_value"])
        at_cheapest = (cheapest["usd_per_chip_hour"], cheapest["outcome_value"])
        if cheapest["candidate_id"] == pick["candidate_id"]:
            assert labels == {f"pick and cheapest chip-hour: {offer(pick)}": at_pick}, workload_id
            assert marks == {"pick": at_pick}
        else:
            assert labels == {f"pick: {offer(pick)}": at_pick,
                              f"cheapest chip-hour: {offer(cheapest)}": at_cheapest}, workload_id
            assert marks == {"pick": at_pick, "cheapest chip-hour": at_cheapest}
    # the snapshot has both cases
    assert "is also the cheapest chip-hour" in day_one_charts[LORA][0].caption
    assert "the cheapest chip-hour, aws trn1.32xlarge" in day_one_charts["gpt3-175b-pretrain"][0].caption


def test_the_bars_are_the_ten_best_outcomes_with_their_values_and_basis(day_one, day_one_charts):
    for workload_id, (_, chart, *_) in day_one_charts.items():
        expected = day_one.sql(
            "select candidate_id, offer_id, cloud, region, instance_type, pricing_term, precision, chips, basis, "
            "outcome_metric, outcome_value, outcome_rank, "
            "count(distinct region) over (partition by cloud, instance_type, pricing_term) as offer_regions "
            "from marts.rankings where as_of = ? and workload_id = ? "
            "order by outcome_rank, usd_per_chip_hour, candidate_id limit 10", params=[AS_OF, workload_id]).pl()
        assert_frame_equal(chart.data, expected)
        figure = charts.top_candidates_figure(chart.data, chart.title)
        ax = figure.axes[0]
        assert [bar.get_width() for bar in ax.patches] == expected["outcome_value"].to_list(), workload_id
        assert [t.get_text() for t in ax.texts] == [usd(v) for v in expected["outcome_value"]]
        assert [bar.get_hatch() or "" for bar in ax.patches] == [charts.BASIS_STYLES[b][1] for b in expected["basis"]]
        assert [t.get_text() for t in figure.legends[0].get_texts()] == [
            b for b in charts.BASIS_STYLES if b in expected["basis"].to_list()]
        ticks = [t.get_text() for t in ax.get_yticklabels()]
        assert len(set(ticks)) == len(ticks) == expected.height
        assert all(t.startswith(offer(r)) for t, r in zip(ticks, expected.to_dicts(), strict=True))
    # gpt3: p5.48xlarge spot is offered in two regions, told apart by the region; its MLPerf result trained at fp8
    # (models.yaml trained_at), which the label gives as a ranked inference row's precision
    ticks = [t.get_text() for t in charts.top_candidates_figure(day_one_charts["gpt3-175b-pretrain"][1].data, "")
             .axes[0].get_yticklabels()]
    assert ticks[1] == "aws p5.48xlarge (spot), fp8, us-east-1"
    assert ticks[9] == "aws p5.48xlarge (spot), fp8, eu-north-1"


def test_no_candidate_no_charts(day_one):
    assert charts.workload_charts(day_one, AS_OF, "no-such-workload") == []
    assert charts.workload_charts(day_one, DAY_2, LORA) == []  # no run on that date


@pytest.mark.slow  # a second whole run (the day-two fixture): make test-slow and CI
def test_history_needs_two_runs_up_to_the_as_of(day_one_charts, two_runs):
    assert not any(c.file_name.endswith("-history.png") for found in day_one_charts.values() for c in found)
    # the day-1 page drawn again after day 2 ran: day 2 is later than its as-of, so still one run
    assert [c.file_name for c in charts.workload_charts(two_runs, AS_OF, LORA)] == [
        f"charts/{LORA}-outcome-vs-chip-hour.png", f"charts/{LORA}-top-candidates.png"]


@pytest.mark.slow  # a second whole run (the day-two fixture): make test-slow and CI
def test_history_plots_the_pick_of_each_run_and_the_current_offer_price(two_runs):
    found = charts.workload_charts(two_runs, DAY_2, LORA)
    assert [c.file_name for c in found] == [f"charts/{LORA}-outcome-vs-chip-hour.png",
                                            f"charts/{LORA}-top-candidates.png", f"charts/{LORA}-history.png"]
    history = found[2]
    picks = query(two_runs, "select as_of, offer_id, outcome_value from marts.rank_history "
                  "where workload_id = ? and is_pick order by as_of", [LORA])
    # test_changes: the pick moves from p5.48xlarge spot (4.807 USD per run) to p5en.48xlarge spot (6.815)
    assert [(d, o) for d, o, _ in picks] == [(AS_OF, "aws:us-east-1:p5.48xlarge:spot"),
                                             (DAY_2, "aws:us-east-1:p5en.48xlarge:spot")]
    prices = query(two_runs, "select as_of, usd_per_hour from marts.price_history "
                   "where offer_id = 'aws:us-east-1:p5en.48xlarge:spot' order by as_of", [])
    assert history.data["as_of"].to_list() == [AS_OF, DAY_2]
    assert history.data["outcome_value"].to_list() == [v for _, _, v in picks]
    assert history.data["current_offer_usd_per_hour"].to_list() == [p for _, p in prices]
    outcome_ax, price_ax = charts.history_figure(history.data, history.title).axes
    [outcome_line], [price_line] = outcome_ax.lines, price_ax.lines
    assert list(outcome_line.get_xdata()) == [AS_OF, DAY_2] == list(price_line.get_xdata())
    assert list(outcome_line.get_ydata()) == [v for _, _, v in picks]
    assert list(price_line.get_ydata()) == [p for _, p in prices]
    assert outcome_ax.get_ylabel() == "USD per\ncompleted run" and price_ax.get_ylabel() == "USD per hour"
    assert history.title == f"{LORA}: the best USD per completed run in each of the last 2 runs"
    assert history.caption == (
        "The best USD per completed run went from 4.807 on 2026-11-30 to 6.815 on 2026-12-02 (1.42x), the pick "
        "changing once; the current pick, aws p5en.48xlarge (spot), costs 16.56 USD per hour, as on 2026-11-30.")


@pytest.mark.slow  # a second whole run (the day-two fixture): make test-slow and CI
def test_history_looks_back_over_history_runs_at_most(two_runs, monkeypatch):
    monkeypatch.setattr(charts, "HISTORY_RUNS", 1)
    assert not any(c.file_name.endswith("-history.png") for c in charts.workload_charts(two_runs, DAY_2, LORA))


def test_families_and_bases_the_spec_does_not_know_get_the_fallback_style():
    from matplotlib.colors import to_hex

    frame = pl.DataFrame({
        "candidate_id": ["w|a|8", "w|b|8", "w|c|8"], "cloud": ["aws", "gcp", "on_prem"],
        "instance_type": ["p5.48xlarge", "tpu-v6e-8", "rack-1"], "pricing_term": ["spot", "on_demand", "owned"],
        "region": ["us-east-1", "us-central1", "lab"], "precision": [None, "bf16", "fp8"], "chips": [8, 8, 8],
        "family": ["gpu", "tpu", "npu"], "basis": ["measured", "estimated", "vendor claim"],
        "usd_per_chip_hour": [10.0, 0.1, 2.0], "chip_hour_rank": [3, 1, 2],
        "outcome_metric": ["usd_per_million_tokens"] * 3, "outcome_value": [1.0, 5.0, 2.0], "outcome_rank": [1, 3, 2],
    })
    ax = charts.outcome_vs_chip_hour_figure(frame, "t").axes[0]
    assert {c.get_label(): to_hex(c.get_facecolor()[0]) for c in ax.collections} == {
        "gpu": chart_kit.FAMILY_COLOURS["gpu"].lower(), "tpu": chart_kit.FAMILY_COLOURS["tpu"].lower(),
        "npu": chart_kit.OTHER_FAMILY_COLOUR.lower()}
    # chip-hour prices span 100x, outcomes 5x
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "linear")
    assert ax.get_ylabel() == "USD per million output tokens" and ax.get_xlabel() == "USD per chip-hour (log scale)"
    figure = charts.top_candidates_figure(frame.sort("outcome_rank"), "t")
    assert [bar.get_hatch() or "" for bar in figure.axes[0].patches] == ["", "xx", ".."]
    assert [t.get_text() for t in figure.legends[0].get_texts()] == ["measured", "estimated", "vendor claim"]
    assert chart_images.png_bytes(figure).startswith(PNG_SIGNATURE)


def test_a_long_history_with_a_gap_in_the_price():
    days = [AS_OF + dt.timedelta(days=i) for i in range(30)]
    frame = pl.DataFrame({
        "as_of": days,
        "pick_offer_id": ["aws:us-east-1:p5.48xlarge:spot"] * 10 + ["gcp:us-central1:tpu-v6e-8:spot"] * 20,
        "outcome_metric": ["completed_run_usd"] * 30, "outcome_value": [100.0 - i for i in range(30)],
        "current_offer_id": ["gcp:us-central1:tpu-v6e-8:spot"] * 30, "current_cloud": ["gcp"] * 30,
        "current_instance_type": ["tpu-v6e-8"] * 30, "current_pricing_term": ["spot"] * 30,
        "current_offer_usd_per_hour": [None] * 10 + [4.35] * 20, "window_runs": [30] * 30,
        "current_price_stale_source": [None] * 30, "current_price_stale_since": [None] * 30,
    })
    assert charts.history_caption(frame) == (
        "The best USD per completed run went from 100.00 on 2026-11-30 to 71.00 on 2026-12-29 (0.710x), the pick "
        "changing once; the current pick, gcp tpu-v6e-8 (spot), costs 4.350 USD per hour and was not priced on "
        "2026-11-30.")
    figure = charts.history_figure(frame, charts.history_title("w", frame))
    price_line = figure.axes[1].lines[0]
    assert [math.isnan(y) for y in price_line.get_ydata()] == [True] * 10 + [False] * 20  # no price, no point
    assert len(figure.axes[1].get_xticks()) <= charts.HISTORY_DATE_TICKS + 2
    assert chart_images.png_bytes(figure).startswith(PNG_SIGNATURE)


def test_history_query_looks_back_over_the_last_runs_not_the_last_picks():
    """HISTORY_SQL on a hand-made warehouse of four runs: 11-30, 12-01 (no pick for the workload: it had no
    candidate), 12-02, 12-03. With a limit of 3 runs the window is 12-01..12-03, so the chart shows the two picks in it
    (12-02, 12-03), not 11-30's; the prices are the current pick's (offer b) on those dates."""
    con = duckdb.connect()
    con.execute("create schema ops; create schema marts")
    con.execute("create table ops.runs (run_id varchar, as_of date)")
    con.execute("create table marts.rank_history (as_of date, workload_id varchar, offer_id varchar, cloud varchar, "
                "instance_type varchar, pricing_term varchar, outcome_metric varchar, outcome_value double, "
                "is_pick boolean)")
    con.execute("create table marts.price_history (as_of date, offer_id varchar, usd_per_hour double, "
                "price_source_id varchar)")
    con.execute("create table ops.source_loads (as_of date, source_id varchar, status varchar, stale_since date)")
    days = [AS_OF + dt.timedelta(days=i) for i in range(4)]
    con.executemany("insert into ops.runs values (?, ?)", [[f"r{i}", day] for i, day in enumerate(days)])
    picks = [(days[0], "a", 30.0), (days[2], "b", 20.0), (days[3], "b", 10.0)]
    con.executemany("insert into marts.rank_history values (?, 'w', ?, 'aws', ?, 'on_demand', 'completed_run_usd', ?, "
                    "true)", [[day, offer, f"type-{offer}", value] for day, offer, value in picks])
    con.execute("insert into marts.rank_history values (?, 'w', 'c', 'aws', 'type-c', 'on_demand', "
                "'completed_run_usd', 99.0, false)", [days[3]])  # not a pick: not in the history
    con.executemany("insert into marts.price_history values (?, ?, ?, ?)",
                    [[day, offer, price, f"src-{offer}"] for day in days
                     for offer, price in (("a", 1.0), ("b", 2.0 + day.day))])
    con.executemany("insert into ops.source_loads values (?, ?, 'loaded', null)",
                    [[day, f"src-{offer}"] for day in days for offer in "ab"])
    rows = con.execute(charts.HISTORY_SQL, {"workload_id": "w", "as_of": days[3], "limit": 3}).fetchall()
    # (as_of, pick, metric, value, current offer, cloud, type, term, its price that day: 2 + day of month, runs
    # looked back over, the current price's source when this run could not refresh it and since when: fresh here)
    assert rows == [
        (days[2], "b", "completed_run_usd", 20.0, "b", "aws", "type-b", "on_demand", 2.0 + 2, 3, None, None),
        (days[3], "b", "completed_run_usd", 10.0, "b", "aws", "type-b", "on_demand", 2.0 + 3, 3, None, None),
    ]
    history = con.sql(charts.HISTORY_SQL, params={"workload_id": "w", "as_of": days[3], "limit": 3}).pl()
    assert charts.history_title("w", history) == "w: the best USD per completed run in 2 of the last 3 runs"
    # four runs back: 11-30's pick is in the window too, priced at the current pick's price that day (2 + 30)
    rows = con.execute(charts.HISTORY_SQL, {"workload_id": "w", "as_of": days[3], "limit": 4}).fetchall()
    assert [(r[0], r[1], r[8], r[9]) for r in rows] == [(days[0], "a", 32.0, 4), (days[2], "b", 4.0, 4),
                                                        (days[3], "b", 5.0, 4)]
    # 12-03 could not refresh the current pick's price source (its last good load was by the run of 12-01): every
    # row says so, and the caption; another source stale that day (src-a: not the current pick's) is not named
    con.execute("update ops.source_loads set status = 'stale', stale_since = ? where as_of = ?", [days[1], days[3]])
    history = con.sql(charts.HISTORY_SQL, params={"workload_id": "w", "as_of": days[3], "limit": 3}).pl()
    assert history["current_price_stale_source"].to_list() == ["src-b", "src-b"]
    assert history["current_price_stale_since"].to_list() == [days[1], days[1]]
    assert charts.history_caption(history) == (
        "The best USD per completed run went from 20.00 on 2026-12-02 to 10.00 on 2026-12-03 (0.500x), with the same "
        "pick; the current pick, aws type-b (on_demand), costs 5.000 USD per hour against 4.000 on 2026-12-02. That "
        "price is not fresh: this run could not refresh src-b, so it is from its last good load, by the run of "
        "2026-12-01.")
    # a stale source on another day is no matter: the price the page's run used was fresh
    history = con.sql(charts.HISTORY_SQL, params={"workload_id": "w", "as_of": days[2], "limit": 3}).pl()
    assert history["current_price_stale_source"].to_list() == [None, None]  # the picks of 11-30 and 12-02
    assert "not fresh" not in charts.history_caption(history)
    # nor an earlier run's: src-b stale on 12-01, loaded on 11-30 and 12-02, so the price of 12-02 was fresh
    con.execute("update ops.source_loads set status = 'stale', stale_since = ? where as_of = ? and source_id = 'src-b'",
                [days[0], days[1]])
    history = con.sql(charts.HISTORY_SQL, params={"workload_id": "w", "as_of": days[2], "limit": 3}).pl()
    assert history["current_price_stale_source"].to_list() == [None, None]
    assert history["current_price_stale_since"].to_list() == [None, None]
    assert "not fresh" not in charts.history_caption(history)
    # as of 12-02 (a page of that date): the window ends there, the current pick is 12-02's
    rows = con.execute(charts.HISTORY_SQL, {"workload_id": "w", "as_of": days[2], "limit": 2}).fetchall()
    assert [(r[0], r[1], r[4]) for r in rows] == [(days[2], "b", "b")]
    # the workload is ranked by energy from 12-04: its history starts again there, in kWh, never beside USD
    con.execute("insert into ops.runs values ('r4', ?)", [days[3] + dt.timedelta(days=1)])
    con.execute("insert into marts.rank_history values (?, 'w', 'b', 'aws', 'type-b', 'on_demand', "
                "'kwh_per_completed_run', 363.62, true)", [days[3] + dt.timedelta(days=1)])
    rows = con.execute(charts.HISTORY_SQL, {"workload_id": "w", "as_of": days[3] + dt.timedelta(days=1),
                                            "limit": 5}).fetchall()
    assert [(r[0], r[2], r[3]) for r in rows] == [(days[3] + dt.timedelta(days=1), "kwh_per_completed_run", 363.62)]


def test_a_dollar_sign_in_a_label_from_data_is_drawn_as_written_not_read_as_math():
    # a price sheet's name (an on-prem offer's instance_type) with a `$...$` pair Matplotlib's math cannot parse:
    # read as math, drawing the chart raised "Unknown symbol: \bad" and failed the whole run
    frame = pl.DataFrame({
        "candidate_id": ["w|a|8", "w|b|8"], "cloud": ["on_prem", "aws"],
        "instance_type": ["dgx $\\bad$ rack", "p5.48xlarge"], "pricing_term": ["owned", "spot"],
        "region": ["lab $x^2$", "us-east-1"], "precision": ["bf16", "fp8"], "chips": [8, 8],
        "family": ["gpu", "gpu"], "basis": ["estimated", "measured"],
        "usd_per_chip_hour": [2.0, 10.0], "chip_hour_rank": [1, 2],
        "outcome_metric": ["usd_per_million_tokens"] * 2, "outcome_value": [1.0, 5.0], "outcome_rank": [1, 2],
    })
    scatter = charts.outcome_vs_chip_hour_figure(frame, "cost of $\\bad$ offers")
    bars = charts.top_candidates_figure(frame, "top $x^2$")
    # what Matplotlib draws of each text, and whether as math
    drawn = [t._preprocess_math(t.get_text()) for f in (scatter, bars) for t in f.findobj(matplotlib.text.Text)]
    assert not any(as_math for _, as_math in drawn)
    written = {text for text, _ in drawn}
    assert "pick and cheapest chip-hour: on_prem dgx $\\bad$ rack (owned)" in written  # the scatter's annotation
    assert "on_prem dgx $\\bad$ rack (owned), bf16" in written  # the bar's label
    assert "cost of $\\bad$ offers" in written and "top $x^2$" in written  # the titles
    for figure in (scatter, bars):
        assert chart_images.png_bytes(figure).startswith(PNG_SIGNATURE)


def backtest_row(comparison_id: str, phase: str, family: str, measured: float, loo_ratio: float,
                 loo_measurements: int = 2, precision_doubtful: bool = False) -> dict:
    """A row of marts.estimate_backtest as the back-test chart reads it."""
    return {"as_of": AS_OF, "comparison_id": comparison_id, "phase": phase, "family": family,
            "accelerator_id": f"{family}-chip", "precision": "fp8", "model_id": "llama-2-70b", "chips": 8,
            "measurement_basis": "MLPerf Inference", "unit": "output tokens/s per chip" if phase == "serving"
            else "minutes to train", "measured": measured, "estimated": measured * 1.3,
            "loo_estimated": measured * loo_ratio, "loo_measurements": loo_measurements, "loo_ratio": loo_ratio,
            "precision_doubtful": precision_doubtful, "benchmark_label": comparison_id}


def backtest_chart_of(tmp_path, rows: list[dict]):
    """The back-test chart of a warehouse whose marts.estimate_backtest holds `rows` (backtest_row)."""
    from flows import backtest_chart

    con = duckdb.connect(str(tmp_path / "backtest.duckdb"))
    con.execute("create schema marts")
    con.register("_rows", pl.DataFrame(rows, schema_overrides={"as_of": pl.Date}).to_arrow())
    con.execute("create table marts.estimate_backtest as select * from _rows")
    try:
        return backtest_chart.backtest_chart(con, AS_OF)
    finally:
        con.close()


def test_the_backtest_chart_counts_a_precision_doubtful_result_in_no_figure_and_marks_it(tmp_path):
    from flows import backtest_chart

    rows = [backtest_row("s-h100", "serving", "gpu", 3000.0, 1.10),
            backtest_row("s-h200", "serving", "gpu", 4000.0, 0.98), backtest_row("s-v6e", "serving", "tpu", 800.0, 0.80),
            backtest_row("s-inf2", "serving", "inferentia", 150.0, 1.50, loo_measurements=0),
            backtest_row("s-b200", "serving", "gpu", 5000.0, 2.00, precision_doubtful=True),
            backtest_row("t-h100", "training", "gpu", 50.0, 0.85)]
    chart = backtest_chart_of(tmp_path, rows)
    # serving, calibrated and not doubtful: |1.10 - 1|, |0.98 - 1|, |0.80 - 1| = 0.10, 0.02, 0.20: median 10%, over
    # 3 (the estimates page's figure); uncalibrated: |1.50 - 1| = 50% over 1; the doubtful b200 (|2.00 - 1| = 100%)
    # in neither; training |0.85 - 1| = 15% over 1
    assert chart.caption == (
        "6 comparisons, on the line where the estimate is right; leave-one-out median absolute error: serving 10% over "
        "the 3 calibrated (goal ±15%), 50% over the 1 with no other measurement to calibrate it; training 15% over the "
        "1 calibrated (goal ±20%); hollow points had no other measurement to calibrate them; a cross marks the result whose declared precision "
        "the MLPerf cross-check doubts, in no median.")
    figure = backtest_chart.backtest_figure(chart.data, chart.title)
    serving = figure.axes[0]
    # the b200 drawn on its own, as a cross (measured 5,000, estimated 5,000 x 2.00), and in no other collection
    [doubtful] = [c for c in serving.collections if c.get_label() == "precision doubtful"]
    assert doubtful.get_offsets().tolist() == [[5000.0, 10000.0]]
    others = [[round(v, 6) for v in point] for c in serving.collections if c is not doubtful
              for point in c.get_offsets().tolist()]
    assert sorted(others) == [[150.0, 225.0], [800.0, 640.0], [3000.0, 3300.0], [4000.0, 3920.0]]
    assert "precision doubtful" in [t.get_text() for t in figure.legends[0].get_texts()]


def test_a_backtest_panel_names_every_unit_its_points_are_counted_in(tmp_path):
    from flows import backtest_chart

    # an MLPerf Training result is minutes to train a whole run, a published throughput minutes to train 1e9 tokens:
    # the training panel names both, in the order of its rows (t-a, t-b), their shared words once, not t-a's alone
    rows = [backtest_row("s-h100", "serving", "gpu", 3000.0, 1.10),
            backtest_row("t-a", "training", "gpu", 50.0, 0.85),
            backtest_row("t-b", "training", "tpu", 20.0, 1.05) | {"unit": "minutes to train 1e9 tokens"}]
    chart = backtest_chart_of(tmp_path, rows)
    figure = backtest_chart.backtest_figure(chart.data, chart.title)
    assert [ax.get_title(loc="left") for ax in figure.axes] == [
        "serving: output tokens/s per chip", "training: minutes to train a whole run or 1e9 tokens"]


def candidate(candidate_id: str, outcome_rank: int, usd_per_chip_hour: float, outcome_value: float, **row) -> dict:
    """A row of marts.rankings as the scatter and the bars read it: one aws p5.48xlarge spot offer unless told."""
    return {"candidate_id": candidate_id, "offer_id": f"aws:us-east-1:p5.48xlarge:spot:{candidate_id}",
            "cloud": "aws", "region": "us-east-1", "instance_type": "p5.48xlarge", "pricing_term": "spot",
            "precision": "bf16", "chips": 8, "family": "gpu", "basis": "measured",
            "usd_per_chip_hour": usd_per_chip_hour, "chip_hour_rank": 1, "outcome_metric": "completed_run_usd",
            "outcome_value": outcome_value, "outcome_rank": outcome_rank, "offer_regions": 1} | row


def test_of_equal_outcomes_the_pick_is_the_cheaper_chip_hour_as_in_rank_history():
    # a and b tie on the outcome (rank 1): rank_history picks the lower chip-hour price, b at 2.0, not a by its id
    candidates = pl.DataFrame([candidate("a", 1, 5.0, 100.0, chip_hour_rank=2),
                               candidate("b", 1, 2.0, 100.0, chip_hour_rank=1)])
    assert charts.pick_row(candidates)["candidate_id"] == "b"


def test_two_bars_caption_order_and_labels():
    # two bars of measured and estimated costs (no calibrated one): 100.00 and 250.00 USD per run, 250 / 100 = 2.50x
    top = pl.DataFrame([candidate("a", 1, 2.0, 100.0),
                        candidate("b", 2, 1.0, 250.0, cloud="gcp", instance_type="a3-highgpu-8g", basis="estimated")])
    assert charts.top_candidates_caption(top, 7) == (
        "Shorter is better; of 7 candidates the pick, aws p5.48xlarge (spot), costs 100.00 USD per completed run and "
        "number 2 250.00, 2.50x as much; the fill tells a measured cost from one scaled from a benchmark or estimated "
        "from specs.")
    ax = charts.top_candidates_figure(top, "t").axes[0]
    assert ax.get_ylim() == (1.5, -0.5)  # bar 0, the pick, on top
    assert [t.get_text() for t in ax.get_yticklabels()] == ["aws p5.48xlarge (spot), bf16",
                                                             "gcp a3-highgpu-8g (spot), bf16"]


def test_a_caption_names_the_region_of_an_offer_the_workload_ranks_in_two(day_one_charts):
    # llama2-70b-lora-finetune ranks p5.48xlarge spot in us-east-1 (the pick, 4.807 USD per run) and in eu-north-1
    # (rank 5, 13.30): both captions name the pick's region; its number 10 is p5.48xlarge on demand in eu-north-1 at
    # 27.64, 27.64 / 4.807 = 5.75x
    scatter, bars, *_ = day_one_charts[LORA]
    assert scatter.caption.startswith(
        "Lower is better on both axes; the pick, aws p5.48xlarge (us-east-1, spot), sits at 1.280 USD per chip-hour")
    assert bars.caption.startswith(
        "Shorter is better; of 13 candidates the pick, aws p5.48xlarge (us-east-1, spot), costs 4.807 USD per "
        "completed run and number 10 27.64, 5.75x as much;")
    # gpt3-175b-pretrain's pick, tpu-v6e-8 spot, is ranked in us-central1 only: no region (its captions, above).
    # The regions are counted as the workload ranks the type, not as the bars show it: a type ranked in two regions,
    # one of them past the bars, is still named with its region; b, cheapest per chip-hour: 250 / 100 = 2.50x
    two = pl.DataFrame([candidate("a", 1, 2.0, 100.0, offer_regions=2, chip_hour_rank=2),
                        candidate("b", 2, 1.0, 250.0, cloud="gcp", instance_type="a3-highgpu-8g")])
    assert charts.top_candidates_caption(two, 7).startswith(
        "Shorter is better; of 7 candidates the pick, aws p5.48xlarge (us-east-1, spot), costs 100.00 USD")
    assert charts.outcome_vs_chip_hour_caption(two) == (
        "Lower is better on both axes; the pick, aws p5.48xlarge (us-east-1, spot), sits at 2.000 USD per chip-hour; "
        "the cheapest chip-hour, gcp a3-highgpu-8g (spot), costs 2.50x as much per completed run.")


def test_bar_labels_tell_alike_offers_apart_by_the_chips_and_are_cut_when_long():
    # the same offer and region at 8 and 16 chips: the region leaves them alike, the chips tell them apart
    top = pl.DataFrame([candidate("a", 1, 2.0, 100.0), candidate("b", 2, 2.0, 120.0, chips=16)])
    assert charts.bar_labels(top) == ["aws p5.48xlarge (spot), bf16, us-east-1, 8 chips",
                                      "aws p5.48xlarge (spot), bf16, us-east-1, 16 chips"]
    # a 70-character instance type: the label is cut to BAR_LABEL_CHARS (56), the last one the ellipsis
    long = pl.DataFrame([candidate("a", 1, 2.0, 100.0, instance_type="x" * 70)])
    [label] = charts.bar_labels(long)
    assert label == "aws " + "x" * 51 + "…" and len(label) == charts.BAR_LABEL_CHARS


def history_frame(values: list[float], picks: list[str], days: list[int] | None = None,
                  stale_source: str | None = None, stale_since: dt.date | None = None) -> pl.DataFrame:
    """What HISTORY_SQL gives: a run per value, its pick, the current pick (b) priced at 4.0 USD per hour."""
    days = days if days is not None else list(range(len(values)))
    n = len(values)
    return pl.DataFrame({
        "as_of": [AS_OF + dt.timedelta(days=d) for d in days], "pick_offer_id": picks,
        "outcome_metric": ["completed_run_usd"] * n, "outcome_value": values, "current_offer_id": ["b"] * n,
        "current_cloud": ["aws"] * n, "current_instance_type": ["type-b"] * n, "current_pricing_term": ["spot"] * n,
        "current_offer_usd_per_hour": [4.0] * n, "window_runs": [n] * n,
        "current_price_stale_source": [stale_source] * n, "current_price_stale_since": [stale_since] * n,
    }, schema_overrides={"current_price_stale_since": pl.Date})


def test_history_caption_wording():
    # the same best outcome both runs, the same pick: "stayed at"
    assert charts.history_caption(history_frame([10.0, 10.0], ["b", "b"])) == (
        "The best USD per completed run stayed at 10.00 from 2026-11-30 to 2026-12-01, with the same pick; the current "
        "pick, aws type-b (spot), costs 4.000 USD per hour, as on 2026-11-30.")
    # picks b, a, b: two changes (b -> a, a -> b), though only two offers
    assert charts.history_caption(history_frame([30.0, 20.0, 15.0], ["b", "a", "b"])) == (
        "The best USD per completed run went from 30.00 on 2026-11-30 to 15.00 on 2026-12-02 (0.500x), the pick "
        "changing 2 times; the current pick, aws type-b (spot), costs 4.000 USD per hour, as on 2026-11-30.")
    # a stale source no run has loaded well: no date of a last good load to give
    assert charts.history_caption(history_frame([10.0, 10.0], ["b", "b"], stale_source="src-b")).endswith(
        "That price is not fresh: this run could not refresh src-b, so it is one no run has refreshed.")


def test_a_short_history_ticks_each_runs_date():
    # three runs, on 11-30, 12-01 and 12-05: a tick at each, written in full (not a locator's evenly spaced dates)
    from matplotlib.dates import num2date

    frame = history_frame([30.0, 20.0, 15.0], ["b", "b", "b"], days=[0, 1, 5])
    price_ax = charts.history_figure(frame, "t").axes[1]
    assert [num2date(t).date() for t in price_ax.get_xticks()] == frame["as_of"].to_list()
    price_ax.figure.canvas.draw()
    assert [t.get_text() for t in price_ax.get_xticklabels()] == ["2026-11-30", "2026-12-01", "2026-12-05"]


def test_plain_number_ticks():
    plain = chart_kit.plain_number_formatter()
    assert [plain(v, 0) for v in (2.5e7, 1e6, -3e6, 2500.0, 250.0, 0.5)] == ["25M", "1M", "-3M", "2,500", "250", "0.5"]


def load_point(candidate_id: str, load_point_: str, usd_: float, selected: bool, **row) -> dict:
    """A row of marts.serving_load_points as the frontier chart reads it, of workload w on AS_OF."""
    return {"as_of": AS_OF, "workload_id": "w", "candidate_id": candidate_id, "offer_id": candidate_id,
            "cloud": "aws", "region": "us-east-1", "instance_type": f"type-{candidate_id}", "pricing_term": "on_demand",
            "precision": "bf16", "precision_class": "bf16", "load_point": load_point_,
            "tokens_per_s_per_user": 10.0 if load_point_ == "fast" else 5.0,
            "tokens_per_s_per_user_basis": "median TPOT", "usd_per_million_tokens": usd_, "meets_slo": True,
            "is_selected": selected} | row


def frontier_of(rows: list[dict], limit: int | None = None) -> pl.DataFrame:
    """What frontier_chart.FRONTIER_SQL selects of these load points (workload `w`, served online), at most `limit`
    lines (default: the chart's own)."""
    from flows import frontier_chart

    con = duckdb.connect()
    try:
        con.execute("create schema marts; create schema catalog")
        con.execute("create table catalog.workloads as select 'w' as workload_id, false as is_offline")
        con.register("_rows", pl.DataFrame(rows, schema_overrides={"as_of": pl.Date}).to_arrow())
        con.execute("create table marts.serving_load_points as select * from _rows")
        return con.sql(frontier_chart.FRONTIER_SQL, params={
            "as_of": AS_OF, "workload_id": "w", "limit": limit or frontier_chart.FRONTIER_LINES,
            "min_points": frontier_chart.FRONTIER_MIN_POINTS}).pl()
    finally:
        con.close()


def test_the_frontier_draws_the_six_cheapest_offers_with_a_frontier():
    """c1..c7 have two load points each, c1 the cheapest at its selected point (1 USD) to c7 (7): FRONTIER_LINES
    (6) of them are drawn, c1 to c6 in that order; c0 is cheaper (0.5) but has one point, no frontier; cN has two
    points but none selected (its cheapest 0.1): after every offer with a selected point."""
    from flows import frontier_chart

    rows = [load_point("c0", "slow", 0.5, True), load_point("cN", "slow", 0.1, False),
            load_point("cN", "fast", 0.2, False)]
    for i in range(1, 8):
        rows += [load_point(f"c{i}", "slow", float(i), True), load_point(f"c{i}", "fast", 10.0 + i, False)]
    frontier = frontier_of(rows)
    lines = frontier.select("line_rank", "candidate_id").unique(maintain_order=True).rows()
    assert lines == [(i, f"c{i}") for i in range(1, 7)]
    ax = frontier_chart.frontier_figure(frontier, "t").axes[0]
    assert [line.get_label() for line in ax.lines if not line.get_label().startswith("_")] == [
        f"aws type-c{i} (on_demand)" for i in range(1, 7)]


def test_frontier_lines_of_one_offer_are_told_apart_by_the_precision():
    from flows import frontier_chart

    # one offer at bf16 and at fp8, in one region: the precision tells the two lines apart
    frontier = pl.DataFrame([load_point("c1", "slow", 1.0, True, line_rank=1, offer_regions=1),
                             load_point("c2", "slow", 2.0, True, line_rank=2, instance_type="type-c1",
                                        precision="fp8", precision_class="fp8", offer_regions=1)])
    assert frontier_chart.frontier_line_labels(frontier) == ["aws type-c1 (on_demand), bf16",
                                                             "aws type-c1 (on_demand), fp8"]


def test_the_frontier_counts_offers_not_lines_and_names_the_region_of_a_type_sold_in_two():
    """p5 in us-east-1 drawn at fp16 (its class bf16) and at fp8 is two lines of one offer; p5 is also sold in
    eu-north-1 (3.0 USD, past the 3 lines drawn), so its lines name their region; type-c3 is sold in one region."""
    from flows import frontier_chart

    p5 = {"instance_type": "p5", "offer_id": "aws:us-east-1:p5:on_demand"}
    rows = [load_point("p5-bf16", "slow", 1.0, True, precision="fp16", **p5),
            load_point("p5-bf16", "fast", 1.5, False, precision="fp16", **p5),
            load_point("p5-fp8", "slow", 2.0, True, precision="fp8", precision_class="fp8", **p5),
            load_point("p5-fp8", "fast", 2.5, False, precision="fp8", precision_class="fp8", **p5),
            load_point("c3", "slow", 2.2, True), load_point("c3", "fast", 2.7, False),
            load_point("p5-eu", "slow", 3.0, True, region="eu-north-1", instance_type="p5",
                       offer_id="aws:eu-north-1:p5:on_demand"),
            load_point("p5-eu", "fast", 3.5, False, region="eu-north-1", instance_type="p5",
                       offer_id="aws:eu-north-1:p5:on_demand")]
    frontier = frontier_of(rows, limit=3)
    # lines by selected cost: p5-bf16 (1.0), p5-fp8 (2.0), c3 (2.2); p5-eu (3.0) is the 4th, not drawn
    assert frontier.select("candidate_id").unique(maintain_order=True).to_series().to_list() == [
        "p5-bf16", "p5-fp8", "c3"]
    # 3 candidates drawn, 2 distinct offers (aws:us-east-1:p5:on_demand twice, type c3 once)
    assert frontier_chart.frontier_title("w", frontier) == (
        "w: USD per million output tokens against output tokens/s per user, 3 lines of 2 offers")
    assert frontier_chart.frontier_caption(frontier).startswith(
        "Each line is one offer at one precision at the load points measured;")
    # the precision as the ranking gives it (fp16), not its class (bf16)
    assert frontier_chart.frontier_line_labels(frontier) == ["aws p5 (us-east-1, on_demand), fp16",
                                                             "aws p5 (us-east-1, on_demand), fp8",
                                                             "aws type-c3 (on_demand)"]


def test_the_backtest_chart_has_a_panel_per_phase_and_counts_only_positive_results(tmp_path):
    from flows import backtest_chart

    rows = [backtest_row("s-h100", "serving", "gpu", 3000.0, 1.10),
            backtest_row("s-b200", "serving", "gpu", 5000.0, 2.00, loo_measurements=0, precision_doubtful=True),
            backtest_row("s-zero", "serving", "gpu", 100.0, 0.0),  # estimated 0 tokens/s: no ratio to plot
            backtest_row("t-h100", "training", "gpu", 50.0, 0.85),
            backtest_row("f-h100", "finetune", "gpu", 20.0, 1.20)]
    chart = backtest_chart_of(tmp_path, rows)
    # s-zero not counted: 4 results. serving: only s-h100 (|1.10 - 1| = 10%); the b200 is uncalibrated but doubtful,
    # so in no median and no hollow point; training |0.85 - 1| = 15%; finetune, a phase without a goal, |1.20 - 1|
    # = 20%, its own panel after the two known phases
    assert chart.title == "Estimated against measured: 4 results, each estimate calibrated without it"
    assert chart.caption == (
        "4 comparisons, on the line where the estimate is right; leave-one-out median absolute error: serving 10% over "
        "the 1 calibrated (goal ±15%); training 15% over the 1 calibrated (goal ±20%); finetune 20% over the 1 "
        "calibrated; a cross marks the result whose declared precision the MLPerf cross-check doubts, in no median.")
    figure = backtest_chart.backtest_figure(chart.data, chart.title)
    assert [ax.get_title(loc="left").split(":")[0] for ax in figure.axes] == ["serving", "training", "finetune"]
