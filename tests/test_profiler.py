"""``tinygrad_like.profiler``: aggregation, the text table, the Chrome trace, and subscription lifetime.

Most tests feed synthetic events through ``events.emit`` so the numbers are exact; the last one profiles
real ops end to end.
"""

from __future__ import annotations

import json
import os

import pytest

from tinygrad_like import events
from tinygrad_like.profiler import KernelStat, format_time, profile


def kt(name, seconds, start=None, device="cpu", shapes=((4, 4),), nbytes=64, grid=None, block=None):
    """A KernelTimed that started ``start`` (default: now) and lasted ``seconds``."""
    return events.KernelTimed(name, device, events.now() if start is None else start, seconds, shapes, nbytes,
                              grid, block)


@pytest.fixture(autouse=True)
def no_leftover_subscribers():
    """Each test starts and ends with nobody listening (a leaked subscriber would slow every later test)."""
    assert not events._subscribers, "a subscriber leaked from an earlier test"
    yield
    assert not events._subscribers, "this test left a subscriber behind"
    assert events.ACTIVE is False


def emit_mix():
    """add x3 (1+2+3 us), matmul x2 (10+30 us), relu x1 (4 us) on cpu; matmul x1 (5 us) on cuda:0."""
    for name, secs, dev in [("add", 1e-6, "cpu"), ("matmul", 10e-6, "cpu"), ("add", 2e-6, "cpu"),
                            ("relu", 4e-6, "cpu"), ("matmul", 30e-6, "cpu"), ("add", 3e-6, "cpu"),
                            ("matmul", 5e-6, "cuda:0")]:
        events.emit(kt(name, secs, device=dev))


# ---- aggregation ---------------------------------------------------------------------------------
def test_key_averages_rows_sums_shares_and_order():
    with profile() as prof:
        emit_mix()
    rows = prof.key_averages()
    assert [(r.name, r.device) for r in rows] == [("matmul", "cpu"), ("add", "cpu"), ("matmul", "cuda:0"),
                                                   ("relu", "cpu")]
    by = {(r.name, r.device): r for r in rows}
    mm = by["matmul", "cpu"]
    assert isinstance(mm, KernelStat)
    assert mm.calls == 2
    assert mm.total_s == pytest.approx(40e-6)
    assert mm.mean_s == pytest.approx(20e-6)
    assert (mm.min_s, mm.max_s) == (pytest.approx(10e-6), pytest.approx(30e-6))
    add = by["add", "cpu"]
    assert (add.calls, add.total_s, add.min_s, add.max_s) == (3, pytest.approx(6e-6), pytest.approx(1e-6),
                                                              pytest.approx(3e-6))
    grand = 55e-6
    assert sum(r.total_s for r in rows) == pytest.approx(grand)
    assert sum(r.share for r in rows) == pytest.approx(1.0)
    assert mm.share == pytest.approx(40 / 55)
    assert by["relu", "cpu"].share == pytest.approx(4 / 55)
    # a row unpacks like a tuple, in the documented order
    name, device, calls, total, mean, mn, mx, share = rows[0]
    assert (name, device, calls) == ("matmul", "cpu", 2)


def test_kernels_and_events_lists():
    with profile() as prof:
        emit_mix()
        events.emit(events.BackwardStep(0, "MulBackward", None, 1e-5, events.now()))
        events.emit("not an event record")  # anything emitted is kept, and ignored by the views
    assert len(prof.events) == 9
    assert len(prof.kernels) == 7
    assert all(isinstance(k, events.KernelTimed) for k in prof.kernels)
    assert [s.op for s in prof.backward_steps] == ["MulBackward"]
    assert len(prof.key_averages()) == 4


def test_empty_profile():
    with profile() as prof:
        pass
    assert prof.events == [] and prof.kernels == [] and prof.key_averages() == []
    text = prof.table()
    assert "Name" in text and "Self total: 0.000us" in text
    s = prof.summary()
    assert s["kernel_calls"] == 0 and s["kernel_total_s"] == 0.0 and s["top"] == []
    trace = prof.chrome_trace()
    assert [e["ph"] for e in trace["traceEvents"]] == ["M"]


def test_kinds_filter_keeps_only_requested_events():
    with profile(kinds=(events.KernelTimed,)) as prof:
        emit_mix()
        events.emit(events.BackwardStep(0, "AddBackward", None, 1e-6, events.now()))
    assert len(prof.events) == 7 and prof.backward_steps == []


# ---- the table --------------------------------------------------------------------------------------
def test_format_time_units():
    assert format_time(12.345e-6) == "12.345us"
    assert format_time(0.0) == "0.000us"
    assert format_time(999e-6) == "999.000us"
    assert format_time(1.5e-3) == "1.500ms"
    assert format_time(0.25) == "250.000ms"
    assert format_time(2.0) == "2.000s"


def test_table_text():
    with profile() as prof:
        emit_mix()
    text = prof.table()
    lines = text.splitlines()
    assert set(lines[0]) <= {"-", " "} and lines[0].startswith("-")
    for col in ("Name", "Device", "Calls", "Total", "Mean", "Min", "Max", "% Total"):
        assert col in lines[1]
    assert lines[2] == lines[0] and lines[-2] == lines[0]
    body = lines[3:-2]
    assert len(body) == 4
    assert body[0].split()[:3] == ["matmul", "cpu", "2"]
    assert "40.000us" in body[0] and "20.000us" in body[0] and "72.73%" in body[0]
    assert body[1].split()[:3] == ["add", "cpu", "3"]
    assert any(line.split()[:3] == ["matmul", "cuda:0", "1"] for line in body)
    assert lines[-1].startswith("Self total: 55.000us")
    assert "7 kernel calls" in lines[-1]
    # every row is as wide as the dashes (columns line up)
    assert all(len(line) <= len(lines[0]) for line in lines[1:-1])


def test_table_sort_and_limit():
    with profile() as prof:
        emit_mix()
    body = lambda text: [line.split()[0] for line in text.splitlines()[3:-2]]  # noqa: E731
    assert body(prof.table(sort_by="calls")) == ["add", "matmul", "matmul", "relu"]
    assert body(prof.table(sort_by="name")) == ["add", "matmul", "matmul", "relu"]
    assert body(prof.table(sort_by="max"))[0] == "matmul"
    assert body(prof.table(sort_by="mean"))[:2] == ["matmul", "matmul"]
    assert body(prof.table(sort_by="cpu_time_total")) == body(prof.table())
    limited = prof.table(row_limit=2)
    assert body(limited) == ["matmul", "add"]
    assert "Self total: 55.000us" in limited  # the footer counts every kernel, shown or not
    assert body(prof.table(row_limit=0)) == []
    with pytest.raises(ValueError, match="sort_by"):
        prof.table(sort_by="bogus")


def test_summary_is_json_serialisable():
    with profile() as prof:
        emit_mix()
        events.emit(events.BackwardStep(0, "SumBackward", None, 2e-6, events.now()))
        events.emit(events.KernelCompiled("add_f32", "src", 0.1, False, events.now()))
        events.emit(events.KernelCompiled("add_f32", "src", 0.0, True, events.now()))
    s = json.loads(json.dumps(prof.summary()))
    assert s["kernel_calls"] == 7
    assert s["kernel_total_s"] == pytest.approx(55e-6)
    assert s["distinct_kernels"] == 4
    assert s["devices"] == ["cpu", "cuda:0"]
    assert s["backward_steps"] == 1 and s["backward_total_s"] == pytest.approx(2e-6)
    assert s["kernels_compiled"] == 1
    assert s["top"][0]["name"] == "matmul" and s["top"][0]["calls"] == 2
    assert s["running"] is False and s["wall_s"] >= 0


# ---- the Chrome trace ---------------------------------------------------------------------------
def test_chrome_trace_file(tmp_path):
    with profile() as prof:
        t0 = prof.start_time
        events.emit(kt("add", 2e-6, start=t0 + 10e-6, shapes=((4, 4), (4, 4)), nbytes=192))
        events.emit(kt("matmul", 5e-6, start=t0 + 20e-6, device="cuda:0", grid=(4, 1, 1), block=(256, 1, 1)))
        events.emit(events.BackwardStep(0, "AddBackward", None, 3e-6, t0 + 40e-6))  # ran 37..40 us
        events.emit(events.KernelCompiled("matmul_f32", "src", 0.5, False, t0 + 50e-6))
        events.emit(events.StorageStateChanged(7, "both", None, "d2h", 64, 1e-6, t0 + 60e-6))
    path = prof.export_chrome_trace(tmp_path / "trace.json")
    assert path == os.fspath(tmp_path / "trace.json")
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    assert data["displayTimeUnit"] == "ms"
    evs = data["traceEvents"]
    assert {e["ph"] for e in evs} == {"M", "X", "i"}
    assert all(e["pid"] == os.getpid() for e in evs)
    lanes = {e["tid"]: e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"cpu", "cuda:0", "autograd"} <= set(lanes.values())
    timed = [e for e in evs if e["ph"] != "M"]
    assert all(e["ts"] >= 0 for e in timed)
    assert [e["ts"] for e in timed] == sorted(e["ts"] for e in timed)

    def one(name):
        (e,) = [e for e in timed if e["name"] == name]
        return e

    add = one("add")
    assert add["ph"] == "X" and add["cat"] == "kernel" and lanes[add["tid"]] == "cpu"
    assert add["ts"] == pytest.approx(10.0) and add["dur"] == pytest.approx(2.0)  # microseconds
    assert add["args"]["shapes"] == [[4, 4], [4, 4]] and add["args"]["nbytes"] == 192
    assert add["args"]["grid"] is None and add["args"]["block"] is None
    mm = one("matmul")
    assert lanes[mm["tid"]] == "cuda:0"
    assert mm["args"]["grid"] == [4, 1, 1] and mm["args"]["block"] == [256, 1, 1]
    assert mm["ts"] == pytest.approx(20.0) and mm["dur"] == pytest.approx(5.0)
    bw = one("AddBackward")
    assert bw["ph"] == "X" and bw["cat"] == "backward" and lanes[bw["tid"]] == "autograd"
    assert bw["ts"] == pytest.approx(37.0) and bw["dur"] == pytest.approx(3.0)  # time is the end
    comp = one("matmul_f32")
    assert comp["ph"] == "i" and comp["ts"] == pytest.approx(50.0) and "dur" not in comp
    assert comp["args"]["cache_hit"] is False
    copy = one("d2h")
    assert copy["ph"] == "X" and copy["cat"] == "memcpy" and copy["ts"] == pytest.approx(59.0)


def test_chrome_trace_times_are_relative_to_start():
    with profile() as prof:
        events.emit(kt("add", 1e-6))
    (add,) = [e for e in prof.chrome_trace()["traceEvents"] if e["ph"] == "X"]
    wall_us = (prof.end_time - prof.start_time) * 1e6
    assert 0 <= add["ts"] <= wall_us  # not an absolute perf_counter value


# ---- subscription lifetime -------------------------------------------------------------------------
def test_nothing_recorded_after_exit_and_subscriber_removed():
    assert events.ACTIVE is False
    with profile() as prof:
        assert events.ACTIVE is True and prof.running
        events.emit(kt("add", 1e-6))
    assert events.ACTIVE is False and not prof.running
    events.emit(kt("add", 1e-6))
    events.emit(kt("mul", 1e-6))
    assert len(prof.kernels) == 1
    assert prof.end_time is not None and prof.end_time >= prof.start_time


def test_subscriber_removed_even_if_block_raises():
    with pytest.raises(ZeroDivisionError):
        with profile() as prof:
            events.emit(kt("add", 1e-6))
            raise ZeroDivisionError("boom")
    assert events.ACTIVE is False and not prof.running
    assert len(prof.kernels) == 1


def test_start_stop_without_with():
    prof = profile()
    assert prof.start() is prof
    events.emit(kt("add", 1e-6))
    prof.stop()
    prof.stop()  # idempotent
    events.emit(kt("add", 1e-6))
    assert len(prof.kernels) == 1
    with pytest.raises(RuntimeError, match="already running"):
        prof.start()
        prof.start()
    prof.stop()
    assert events.ACTIVE is False


def test_restart_keeps_events():
    prof = profile()
    with prof:
        events.emit(kt("add", 1e-6))
    first_start = prof.start_time
    with prof:
        events.emit(kt("add", 1e-6))
    assert len(prof.kernels) == 2 and prof.start_time == first_start


def test_other_subscribers_keep_channel_active():
    seen = []
    unsubscribe = events.subscribe(seen.append)
    try:
        with profile():
            events.emit(kt("add", 1e-6))
        assert events.ACTIVE is True  # someone else still listens
    finally:
        unsubscribe()
    assert events.ACTIVE is False and len(seen) == 1


def test_nested_profiles_both_receive():
    with profile() as outer:
        events.emit(kt("add", 1e-6))
        with profile() as inner:
            events.emit(kt("mul", 2e-6))
        assert events.ACTIVE is True  # the outer profile still listens
        events.emit(kt("relu", 3e-6))
    assert [k.name for k in outer.kernels] == ["add", "mul", "relu"]
    assert [k.name for k in inner.kernels] == ["mul"]
    assert events.ACTIVE is False


# ---- real ops ----------------------------------------------------------------------------------------
def test_profile_real_ops(tmp_path):
    import tinygrad_like as tl

    assert tl.profile is profile
    with tl.profile() as prof:
        a = tl.ones(4, 4, requires_grad=True)
        (a @ a + 1).relu().sum().backward()
    assert events.ACTIVE is False
    rows = prof.key_averages()
    names = {r.name for r in rows}
    assert "matmul" in names
    assert all(r.device == "cpu" and r.calls >= 1 and r.total_s >= 0 for r in rows)
    assert sum(r.share for r in rows) == pytest.approx(1.0)
    mm = next(r for r in rows if r.name == "matmul")
    assert mm.calls >= 3  # forward, and one per input gradient in backward
    text = prof.table()
    assert "matmul" in text and "Self total:" in text
    assert len(prof.backward_steps) >= 4  # Sum, Relu, Add, Matmul
    assert a.grad is not None
    data = json.loads(open(prof.export_chrome_trace(tmp_path / "t.json"), encoding="utf-8").read())
    cats = {e.get("cat") for e in data["traceEvents"]}
    assert {"kernel", "backward"} <= cats
    # the timed backend is swapped out again: no events flow after the profile closes
    (a * 2).sum()
    assert events.ACTIVE is False
