"""Plots render under Agg with one bar per served span; pandas helpers agree with events."""
import matplotlib
import numpy as np

from lab import A_TO_E, FOUR_ON_TWO, events_frame, plot_lifecycle, plot_slots, plot_timeline, request_summary, schedule, slot_spans


def by_gid(ax):
    """Plot artists keyed by the gid that lab.plots gives them."""
    return {c.get_gid(): c for c in ax.collections}


def test_backend_is_headless():
    assert matplotlib.get_backend().lower() == "agg"


def test_slot_spans_one_per_job_in_fifo():
    result = schedule(A_TO_E.jobs, 2, True)
    spans = slot_spans(result["trace"], 2)
    assert sorted(job for _, job, _, _ in spans) == [0, 1, 2, 3, 4]
    assert sum(length for *_, length in spans) == result["busy_slots"]
    for slot in range(2):  # spans in one slot never overlap
        own = sorted((start, start + n) for s, _, start, n in spans if s == slot)
        assert all(a[1] <= b[0] for a, b in zip(own, own[1:]))


def test_plot_slots_draws_one_bar_per_span_and_titles():
    fig = plot_slots(FOUR_ON_TWO.jobs, 2)
    static_ax, cont_ax = fig.axes
    assert "makespan 7" in static_ax.get_title() and "71%" in static_ax.get_title()
    assert "makespan 6" in cont_ax.get_title() and "83%" in cont_ax.get_title()
    for ax, continuous in ((static_ax, False), (cont_ax, True)):
        result = schedule(FOUR_ON_TWO.jobs, 2, continuous)
        artists = by_gid(ax)
        assert {"idle:0", "idle:1"} <= artists.keys()
        spans = [g for g in artists if g.startswith("span:")]
        assert len(spans) == len(slot_spans(result["trace"], 2)) == 4
        assert all(len(artists[g].get_paths()) == 1 for g in spans)  # one bar per served span
        widths = {g: np.ptp(artists[g].get_paths()[0].vertices[:, 0]) for g in spans}
        assert widths == {f"span:{j['id']}": j["tokens"] for j in FOUR_ON_TWO.jobs}


def _events():
    return [
        {"request_id": 1, "phase": "prefill", "action": "prefill_to_decode", "prompt_len": 4, "generated_len": 0,
         "max_new_tokens": 2, "wait_steps": 0, "free_kv_blocks": 0, "preempted_request_id": None, "deadline_missed": False},
        {"request_id": 2, "phase": "prefill", "action": "prefill_to_decode", "prompt_len": 2, "generated_len": 0,
         "max_new_tokens": 1, "wait_steps": 0, "free_kv_blocks": 0, "preempted_request_id": 1, "deadline_missed": True},
        {"request_id": 2, "phase": "decode", "action": "finish", "prompt_len": 2, "generated_len": 1,
         "max_new_tokens": 1, "wait_steps": 0, "free_kv_blocks": 2, "preempted_request_id": None, "deadline_missed": True},
        {"request_id": 1, "phase": "decode", "action": "decode_one_step", "prompt_len": 4, "generated_len": 1,
         "max_new_tokens": 2, "wait_steps": 2, "free_kv_blocks": 0, "preempted_request_id": None, "deadline_missed": False},
        {"request_id": 1, "phase": "decode", "action": "finish", "prompt_len": 4, "generated_len": 2,
         "max_new_tokens": 2, "wait_steps": 2, "free_kv_blocks": 2, "preempted_request_id": None, "deadline_missed": False},
    ]


def test_plot_timeline_lanes_and_markers():
    ax = plot_timeline(_events()).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["req 1", "req 2"]
    art = by_gid(ax)
    assert len(art["req1:wait"].get_paths()) == 2  # steps 1 and 2, while preempted
    assert len(art["req1:prefill"].get_paths()) == 1 and len(art["req1:decode"].get_paths()) == 2
    assert len(art["req2:wait"].get_paths()) == 0
    marks = {g for g in art if g.split(":")[1] not in {"wait", "prefill", "decode"}}
    assert marks == {"req1:preempted", "req1:resumed", "req1:finish", "req2:finish", "req2:deadline missed"}
    assert art["req1:preempted"].get_offsets()[0][0] == 1.5 and art["req1:resumed"].get_offsets()[0][0] == 3


def test_timeline_colour_is_stable_per_request():
    colour_a = by_gid(plot_timeline(_events()).axes[0])["req2:decode"].get_facecolor()[0]
    only_two = [e for e in _events() if e["request_id"] == 2]
    colour_b = by_gid(plot_timeline(only_two).axes[0])["req2:decode"].get_facecolor()[0]
    assert tuple(colour_a) == tuple(colour_b)
    assert tuple(colour_a) != tuple(by_gid(plot_timeline(_events()).axes[0])["req1:decode"].get_facecolor()[0])


def test_lifecycle_figure_has_all_states():
    texts = {t.get_text() for t in plot_lifecycle().axes[0].texts}
    assert {"waiting", "admitted", "prefill", "decode", "finished", "preempted"} <= texts


def test_request_summary():
    summary = request_summary(_events())
    assert summary.loc[1].to_dict() == {"first_step": 0, "finish_step": 4, "total_wait": 2, "preemptions": 1, "deadline_missed": False}
    assert summary.loc[2, "deadline_missed"] and summary.loc[2, "preemptions"] == 0
    assert list(events_frame(_events())["step"]) == [0, 1, 2, 3, 4]


def test_table_shows_code_names_under_their_chinese_names_in_zh_only():
    import lab
    frame = lab.compare_policies(FOUR_ON_TWO.jobs, 2)
    before = frame.copy()
    assert lab.table(frame) is frame  # en: the table itself
    lab.set_language("zh")
    try:
        shown = lab.table(frame)
        events = lab.table(events_frame(_events()))
        plain = lab.table(frame.rename(columns={"makespan_ticks": "static start"}).rename_axis("no gloss"))
    finally:
        lab.set_language("en")
    assert list(shown.columns)[0] == ("最大完工时间（tick）", "makespan_ticks")
    assert list(shown.index) == ["静态 static", "连续 continuous"] and shown.index.name == "策略 policy"
    assert list(shown[("最大完工时间（tick）", "makespan_ticks")]) == list(frame["makespan_ticks"])
    assert frame.equals(before)  # only the copy that is shown changes
    assert list(events[("动作", "action")]) == ["预填充转解码 prefill_to_decode"] * 2 + ["完成 finish", "解码一步 decode_one_step", "完成 finish"]
    assert list(events[("阶段", "phase")])[:3] == ["预填充 prefill", "预填充 prefill", "解码 decode"]
    assert ("静态：开始", "") in list(plain.columns) and plain.index.name == "no gloss"  # a label, not a code name
