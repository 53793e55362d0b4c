"""The language of what students read: check and stub messages, errors they meet, plot labels.

The English template is the key, so the code reads as before; the zh edition calls set_language("zh").
tr() is for everything printed, raised or tabulated: it follows the language alone. label() is for text
drawn into a figure, and only there: it draws Chinese with an installed CJK font, else with the subset lab ships
(lab.fonts), on any machine; it falls back to English only if no font can draw a string (a character the subset
lacks, which tests/lab/test_cjk_font.py forbids), so the fonts change a figure's glyphs and nothing else.
Grading never depends on either: the hidden rules compare observations, not messages.
"""
from __future__ import annotations

import os

LANGUAGES = ("en", "zh")
_state = {"language": "zh" if os.environ.get("LAB_LANGUAGE") == "zh" else "en"}

ZH = {
    # lab.checks
    "{rule}\n    expected: {expected}\n    actual:   {actual}": "{rule}\n    期望：{expected}\n    实际：{actual}",
    "{rule}\n    seen: {detail}": "{rule}\n    实际看到：{detail}",
    "no error": "没有抛出异常",
    "{task_id}: {count} visible checks passed.": "{task_id}：{count} 项可见检查全部通过。",
    "{task_id}: {count} visible check passed.": "{task_id}：{count} 项可见检查通过。",
    # lab.decode: stubs and cells below a blank TODO
    "{task_id} ({name}) is not implemented yet: in the answer cell under the heading '{task_id}', "
    "replace `raise NotImplementedError()` with your code.":
        "{task_id}（{name}）尚未实现：请在标题为“{task_id}”的 TODO 单元格中，用你的代码替换 `raise NotImplementedError()`。",
    "this cell needs {todos} first: fill in {cells}, then run this cell again.":
        "这个单元格需要先完成 {todos}：{cells}，然后重新运行本单元格。",
    " and ": "、",
    "its answer cell and run its check": "请补全它的 TODO 单元格并运行其检查",
    "their answer cells and run their checks": "请补全它们的 TODO 单元格并运行各自的检查",
    # lab.decode: input validation
    "{name} must be an int, got {value}": "{name} 必须是 int，实际是 {value}",
    "{name} must be >= {minimum}, got {value}": "{name} 必须 >= {minimum}，实际是 {value}",
    "{name} must be True or False, got {value}": "{name} 必须是 True 或 False，实际是 {value}",
    "policy must be one of {choices}, got {value}": "policy 必须是 {choices} 之一，实际是 {value}",
    "request {id}: {field} must be one of {choices}, got {value}": "请求 {id}：{field} 必须是 {choices} 之一，实际是 {value}",
    "duplicate request_id: {id}": "request_id 重复：{id}",
    "deadline_step must be later than the clock ({clock}), got {value}":
        "deadline_step 必须晚于当前时钟（{clock}），实际是 {value}",
    "TODO 4 (step) is not implemented yet": "TODO 4（step）尚未实现",
    # lab.batching: input validation
    "job {id}: field '{field}'": "作业 {id} 的字段 '{field}'",
    "job {id}: field '{field}' must be >= {minimum}, got {value}": "作业 {id}：字段 '{field}' 必须 >= {minimum}，实际是 {value}",
    "slots must be >= 1, got {value}": "slots 必须 >= 1，实际是 {value}",
    "jobs must be a list of dicts, got {kind}": "jobs 必须是由 dict 组成的列表，实际是 {kind}",
    "job #{position} must be a dict, got {kind}": "第 {position} 个作业必须是 dict，实际是 {kind}",
    "job {label}: missing field(s) {fields}": "作业 {label}：缺少字段 {fields}",
    "job {label}: unexpected field(s) {fields}": "作业 {label}：多出字段 {fields}",
    "job {id}: field 'id' is a duplicate": "作业 {id}：字段 'id' 重复",
    "continuous must be True or False, got {value}": "continuous 必须是 True 或 False，实际是 {value}",
    # lab.invariants: the rule, then what broke it
    "{rule}: {detail}": "{rule}：{detail}",
    "ticks increase": "tick 递增",
    "no id active twice": "同一 id 不会在一个 tick 内活跃两次",
    "active <= slots": "活跃数 ≤ 槽位数",
    "known ids only": "只服务已知 id",
    "no start before arrival": "不会在到达之前开始",
    "served exactly tokens times": "恰好服务 tokens 次",
    "work conservation": "工作量守恒",
    "completed exactly once": "恰好完成一次",
    "wait and flow": "等待与流程时间",
    "tick {tick} follows tick {last}": "tick {tick} 排在 tick {last} 之后",
    "tick {tick} serves {ids} more than once": "tick {tick} 多次服务了 {ids}",
    "tick {tick} serves {count} jobs on {slots} slots": "tick {tick} 在 {slots} 个槽位上服务了 {count} 个作业",
    "tick {tick} serves unknown job {id}": "tick {tick} 服务了未知作业 {id}",
    "job {id} served at tick {tick}, arrives at {arrival}": "作业 {id} 在 tick {tick} 被服务，但它在 {arrival} 才到达",
    "job {id} served {served} times, needs {need}": "作业 {id} 被服务 {served} 次，需要 {need} 次",
    "served {served}, busy_slots {busy}, tokens {tokens}": "共服务 {served} 次，busy_slots 为 {busy}，tokens 总数为 {tokens}",
    "job {id} has {count} completion records": "作业 {id} 有 {count} 条完成记录",
    "completion record for unknown job {id}": "出现了未知作业 {id} 的完成记录",
    "job {id} starts at {start}, arrives at {arrival}": "作业 {id} 在 {start} 开始，但它在 {arrival} 才到达",
    "job {id}: wait/flow disagree with start/finish": "作业 {id}：wait/flow 与 start/finish 不一致",
    # lab.examples: the worked examples' and scenarios' names, as tables, titles and checks show them
    "4 requests on 2 slots": "四个请求、两个槽位",
    "no gain: two 4-token jobs arriving at t=3": "没有收益：两个各需 4 个词元的作业在 t=3 到达",
    "A-E": "A 至 E",
    "preemption and resume": "抢占与恢复",
    "non-preemptible request": "不可抢占的请求",
    "deadline": "截止时间",
    # lab.engine: errors a wrong TODO (or a wrong call) meets
    "a policy reads only seq_id, arrival_us, priority and num_prompt_tokens, not {name}: "
    "what an engine knows when a request arrives (not its output length, not its progress)":
        "策略只能读取 seq_id、arrival_us、priority 和 num_prompt_tokens，不能读取 {name}："
        "这些是请求到达时引擎就知道的信息（不包括它的输出长度，也不包括它的进度）",
    "a policy key must return a finite number or a tuple of them; for request {id} it returned {value}":
        "策略的键函数必须返回一个有限的数，或由有限的数组成的元组；对请求 {id}，它返回了 {value}",
    "the key gave request {id} two different values: it must depend on the request alone, not on earlier calls":
        "键函数对请求 {id} 给出了两个不同的值：它只能取决于请求本身，不能取决于之前的调用",
    "cannot schedule {count} tokens of sequence {id} (budget left {left}, scheduled {scheduled})":
        "无法为序列 {id} 调度 {count} 个词元（剩余预算 {left}，已调度 {scheduled}）",
    "long_prefill_token_threshold needs enable_chunked_prefill=True":
        "long_prefill_token_threshold 需要 enable_chunked_prefill=True",
    "policy must be one of {choices} or a key function, got {value}": "policy 必须是 {choices} 之一或一个键函数，实际是 {value}",
    "add() takes a Sequence, got {kind}": "add() 接受的是 Sequence，实际是 {kind}",
    "sequence {id} is not new (status {status})": "序列 {id} 不是新请求（状态为 {status}）",
    "duplicate seq_id: {id}": "seq_id 重复：{id}",
    "sequence {id} may grow to {longest} tokens; the pool holds {blocks} blocks of {size}":
        "序列 {id} 最多可能增长到 {longest} 个词元，而 KV 池只有 {blocks} 个块，每块 {size} 个词元",
    "sequence {id} may grow to {longest} tokens, more than max_num_batched_tokens={budget}: "
    "without chunked prefill it must fit one step (vLLM refuses "
    "max_num_batched_tokens < max_model_len unless chunked prefill is on)":
        "序列 {id} 最多可能增长到 {longest} 个词元，超过了 max_num_batched_tokens={budget}："
        "不开启分块预填充时，它必须能在一步内放下（vLLM 同样会拒绝这种配置：关闭分块预填充时，"
        "max_num_batched_tokens 不能小于 max_model_len）",
    "sequence {id} already holds blocks {blocks}": "序列 {id} 已经持有块 {blocks}",
    "a request is a dict or a Sequence, got {kind}": "请求必须是 dict 或 Sequence，实际是 {kind}",
    "stopped after max_steps={max_steps} with {waiting} waiting, {running} running":
        "运行到 max_steps={max_steps} 步后停止：仍有 {waiting} 个请求在等待、{running} 个在运行",
    "step {step} scheduled nothing with {waiting} waiting and {running} running: the scheduler is stuck":
        "第 {step} 步什么也没有调度，而仍有 {waiting} 个请求在等待、{running} 个在运行：调度器卡住了",
    "the SLO needs the record of every request, each with a first token": "计算 SLO 需要每个请求的记录，而且每个请求都必须已经产生第一个词元",
    "no request of priority class 0 in these records": "这些记录中没有优先级类别为 0 的请求",
    "rate_per_s must be a positive number, got {value}": "rate_per_s 必须是正数，实际是 {value}",
    "num_requests must be an int >= 0, got {value}": "num_requests 必须是 >= 0 的 int，实际是 {value}",
    "arrival must be 'poisson' or 'gamma', got {value}": "arrival 必须是 'poisson' 或 'gamma'，实际是 {value}",
    "cv must be > 0, got {value}": "cv 必须 > 0，实际是 {value}",
    "class_shares must sum to 1 and match class_slack in length": "class_shares 之和必须为 1，且长度与 class_slack 相同",
    # lab.plots and the notebooks' own plots (drawn with an installed CJK font, else with lab's shipped subset)
    "slot {slot}": "槽位 {slot}",
    "tick": "tick",
    "static": "静态",
    "continuous": "连续",
    "{policy}: makespan {makespan} ticks, utilization {utilization}": "{policy}：最大完工时间 {makespan} 个 tick，槽位利用率 {utilization}",
    "idle slot-tick": "空闲的槽位·tick",
    "req {id}": "请求 {id}",
    "scheduler step (clock)": "调度步（时钟）",
    "waiting": "等待",
    "prefill": "预填充",
    "decode": "解码",
    "preempted": "被抢占",
    "resumed": "恢复",
    "finish": "完成",
    "deadline missed": "错过截止时间",
    "decode timeline": "解码时间线",
    "admitted": "已准入",
    "finished": "已完成",
    "KV blocks free": "空闲 KV 块",
    "1 step": "1 步",
    "max_new_tokens reached": "达到 max_new_tokens",
    "preempted: frees blocks,\nkeeps phase + progress": "被抢占：释放 KV 块，\n保留阶段与进度",
    "re-admitted: resumes\nwhere it stopped": "重新准入：从停下处\n继续",
    "Request lifecycle in DecodeSchedulerSim": "DecodeSchedulerSim 中的请求生命周期",
    "{name} ({policy}, {kv})": "{name}（{policy}，{kv}）",
    "{blocks} KV blocks": "{blocks} 个 KV 块",
    "ample KV blocks": "KV 块充足",
    "request id (1 = low priority, 2 = medium, 100+ = high, in arrival order)":
        "请求 id（1 = 低优先级，2 = 中，100+ = 高，按到达顺序）",
    "total wait (steps)": "总等待（步）",
    "Who waits under each policy": "各策略下谁在等待",
    "policy": "策略",
    # lab.engine: notebook 03's plots and SLO messages, and the notebook's own plot labels
    "decode tokens": "解码词元",
    "prefill (chunk) tokens": "预填充（分块）词元",
    "unused budget": "未用的预算",
    "engine step": "引擎步",
    "tokens": "词元数",
    "What each step computes": "每一步计算什么",
    "blocks in use": "使用中的块",
    "pool size": "池大小",
    "preemption ({count} in all)": "抢占（共 {count} 次）",
    "blocks": "块数",
    "KV blocks in use": "使用中的 KV 块",
    "meets the SLO": "满足 SLO",
    "max wait of any request (s)": "所有请求中的最长等待（s）",
    "class-0 p99 TTFT (ms)": "类别 0 的 p99 TTFT（ms）",
    "Policies against the SLO": "各策略与 SLO 的对照",
    "class-0 p99 TTFT {value} ms > {limit} ms": "类别 0 的 p99 TTFT {value} ms > {limit} ms",
    "max wait {value} ms > {limit} ms": "最长等待 {value} ms > {limit} ms",
    "The worked example by hand: 3 x 800 tokens, budget 1024, threshold 400":
        "手工推演的算例：3 × 800 个词元，预算 1024，阈值 400",
    "The worked example from your schedule(): 3 x 800 tokens, budget 1024, threshold 400":
        "由你的 schedule() 得到的算例：3 × 800 个词元，预算 1024，阈值 400",
    "tokens computed (block_size 16)": "已计算的词元数（block_size 16）",
    "blocks held": "持有的块数",
    "A new block at tokens 1, 17, 33, 49, 65: one per boundary crossed": "在第 1、17、33、49、65 个词元处各新增一块：每跨过一个边界一块",
    "vLLM's test_priority_scheduling_preemption, by hand": "手工推演 vLLM 的 test_priority_scheduling_preemption",
    "vLLM's test_priority_scheduling_preemption on your engine": "在你的引擎上运行 vLLM 的 test_priority_scheduling_preemption",
    "Batch composition per step (budget 256 tokens)": "每一步的批构成（预算 256 个词元）",
    "KV blocks in use (pool of 40), preemptions marked": "使用中的 KV 块（池中 40 块），标出抢占",
    "p50 TTFT": "p50 TTFT",
    "p99 TTFT": "p99 TTFT",
    "throughput (output tokens/s)": "吞吐（输出词元/s）",
    "TTFT (ms, log scale)": "TTFT（ms，对数坐标）",
    "Latency vs throughput as the arrival rate rises (model time)": "到达率上升时的时延与吞吐（模型时间）",
    "p99 TPOT (ms)": "p99 TPOT（ms）",
    "p50 TTFT (ms)": "p50 TTFT（ms）",
    "max_num_batched_tokens (labels): TTFT vs TPOT, long prompts at 5 req/s":
        "max_num_batched_tokens（标注）：TTFT 与 TPOT，长提示词，5 个请求/s",
    "64 blocks: the pool stays full and preemptions repeat": "64 块：池一直满，抢占反复发生",
    "aging, 1 s per level": "aging_1s（老化，每级 1 s）",
    "Trace 0 at 14 requests/s: each baseline misses a part of the SLO": "轨迹 0，14 个请求/s：每个基线都有一部分 SLO 没有满足",
    "your slo_key": "你的 slo_key",
    "Your slo_key on traces 0, 1 and 2 (the baselines are in the chart above)": "你的 slo_key 在轨迹 0、1、2 上（基线见上图）",
}


# Table headers and row labels that are code names (record keys, metrics, event fields, policy names), in Chinese.
# Tables only: never drawn, so not in ZH (whose every string the shipped CJK font subset must cover).
HEADERS_ZH = {
    **{name: ZH[name] for name in ("policy", "static", "continuous", "prefill", "decode", "finish")},  # one translation
    # 01 and 02: schedules and their comparison
    "served": "本 tick 运行的作业", "job": "作业", "static start": "静态：开始", "static finish": "静态：结束",
    "continuous start": "连续：开始", "continuous finish": "连续：结束", "makespan_ticks": "最大完工时间（tick）",
    "busy_slots": "忙碌的槽位·tick", "utilization": "槽位利用率", "mean_wait": "平均等待", "max_wait": "最长等待",
    # 02: decode events, per-request summaries, policies
    "step": "步", "request_id": "请求 id", "phase": "阶段", "action": "动作", "prompt_len": "提示词长度",
    "generated_len": "已生成长度", "max_new_tokens": "最多生成词元数", "wait_steps": "等待步数",
    "free_kv_blocks": "空闲 KV 块", "preempted_request_id": "被抢占的请求 id", "deadline_missed": "错过截止时间",
    "first_step": "首次运行步", "finish_step": "完成步", "total_wait": "总等待", "preemptions": "抢占次数",
    "fixed_priority": "固定优先级", "aging": "老化", "deadline": "截止时间",
    "prefill_to_decode": "预填充转解码", "decode_one_step": "解码一步",
    # 03: records, latencies and summaries
    "seq_id": "请求 id", "arrival_us": "到达时刻（µs）", "first_scheduled_step": "首次调度步",
    "first_token_step": "首词元步", "first_token_us": "首词元时刻（µs）", "finish_us": "完成时刻（µs）",
    "num_output_tokens": "输出词元数", "num_preemptions": "抢占次数", "num_recomputed_tokens": "重算词元数",
    "ttft_ms": "首词元时延 TTFT（ms）", "tpot_ms": "每输出词元时延 TPOT（ms）", "e2e_ms": "端到端时延 E2E（ms）",
    "throughput_tok_s": "吞吐（词元/s）", "goodput_req_s": "有效吞吐（请求/s）", "slo_attainment": "SLO 达成率",
    **{f"p{q}_{m}_ms": f"p{q} {name}（ms）" for q in (50, 95, 99)
       for m, name in (("ttft", "首词元时延 TTFT"), ("tpot", "每输出词元时延 TPOT"), ("e2e", "端到端时延 E2E"))},
    "rate_req_s": "到达率（请求/s）", "max_num_batched_tokens": "每步词元预算", "num_blocks": "KV 块数",
    "requests_per_step": "每步请求数", "run_s": "运行时长（s）", "recompute_s": "重算用时（s）",
    "recompute_share": "重算占比", "trace": "轨迹",
}


def set_language(language: str) -> None:
    """Switch messages and plot labels to `language` ("en" or "zh") for this kernel."""
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {LANGUAGES}, got {language!r}")
    _state["language"] = language
    if language == "zh":  # before any figure exists: a text keeps the font family it was created with
        from .fonts import use_cjk_font

        use_cjk_font()


def get_language() -> str:
    """The current language of messages."""
    return _state["language"]


def tr(template: str, **fields) -> str:
    """`template` in the current language, filled with `fields`; printed text never depends on fonts."""
    text = ZH.get(template, template) if _state["language"] == "zh" else template
    return text.format(**fields) if fields else text


class Phrase:
    """A message as its English template and fields: printed, it is tr(template, **fields) (in the language of the
    moment it is printed); the grader words it in each language from the template itself (grader/messages.py's
    LabText), never by reading the printed text back. A field may be a Phrase too."""

    __slots__ = ("template", "fields")

    def __init__(self, template: str, **fields):
        self.template, self.fields = template, fields

    def __str__(self) -> str:
        return tr(self.template, **self.fields)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __repr__(self) -> str:
        return repr(str(self))

    def __eq__(self, other) -> bool:
        return type(other) is Phrase and (self.template, self.fields) == (other.template, other.fields)

    def __hash__(self) -> int:
        return hash(self.template)


def refused(template: str, **fields) -> ValueError:
    """A ValueError whose message is tr(template, **fields), the same as ValueError(tr(...)) prints, that also keeps
    them as its `phrase` (a Phrase), so the grader can word it in another language."""
    phrase = Phrase(template, **fields)
    error = ValueError(str(phrase))   # str(phrase) is tr(template, **fields)
    error.phrase = phrase
    return error


# A name tr() already translated (a policy's name in a table, say) back to its English template, for label().
_ENGLISH = {zh: en for en, zh in ZH.items() if "{" not in en}


def label(text: str, **fields) -> str:
    """Text drawn into a figure: Chinese, drawn with an installed CJK font or else lab's shipped subset; English only
    if none of those fonts has one of its characters (never tofu boxes).

    `text` is an English template or a name tr() returned; call it when drawing, never for printed text.
    """
    english = _ENGLISH.get(text, text)
    if _state["language"] == "zh":
        from .fonts import missing_glyphs, use_cjk_font

        if use_cjk_font():
            chinese = tr(english, **fields)
            if not missing_glyphs(chinese):
                return chinese
    return english.format(**fields) if fields else english
