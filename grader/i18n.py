"""Feedback in the submission's language: rule names, verdict text, notes. Scores never depend on it."""
from __future__ import annotations

from .grade import TaskVerdict

RULES_ZH = {
    # 01_continuous_batching
    "waits and flows on the worked examples": "算例上的等待时间与流经时间",
    "continuous schedules with staggered arrivals": "到达时刻错开的连续批处理调度",
    "static schedules, where a group holds its slots": "静态批处理调度：一组请求占住自己的槽位",
    "idle gaps: the clock jumps to late arrivals": "空闲间隙：时钟跳到较晚的到达",
    "valid traces pass": "合法的 trace 通过",
    "a job served too few times is caught": "能发现服务次数太少的作业",
    "a job served too many times is caught": "能发现服务次数太多的作业",
    "an id that is not a job is caught": "能发现不是作业的 id",
    "a job never served is caught": "能发现从未被服务的作业",
    "no_gain_case: a valid, non-trivial workload where continuous gains nothing":
        "no_gain_case：合法、非平凡，且连续批处理毫无收益的工作负载",
    "double_gain_case: a valid workload where static takes at least 2x the ticks":
        "double_gain_case：合法，且静态批处理所需 tick 至少为 2 倍的工作负载",
    "the worked examples": "算例",
    "static: each group lasts as long as its longest job": "静态：每组持续到组内最长的作业结束",
    "continuous: a freed slot takes the next job at once": "连续：槽位一空出，下一个作业立即补上",
    "edges: one job, more slots than jobs, no jobs": "边界：一个作业、槽位多于作业、没有作业",
    # 02_decode_scheduling
    "stores every argument; a new request is waiting, in prefill, not admitted":
        "保存每个参数；新请求处于等待、预填充阶段、未准入",
    "omitted arguments keep the signature's defaults": "省略的参数取签名中的默认值",
    "one new object per request, appended in order": "每个请求一个新对象，按顺序追加",
    "bad input raises ValueError and leaves the queue unchanged": "错误输入抛出 ValueError，且队列不变",
    "requests enqueued by TODO 1 run correctly to the end": "由 TODO 1 入队的请求能正确运行到结束",
    "phase, then cache hit, then priority decide the order": "依次由阶段、缓存命中、优先级决定顺序",
    "wait_steps changes nothing outside aging": "aging 之外 wait_steps 不改变任何东西",
    "aging adds wait_steps // aging_interval to the priority": "aging 给优先级加上 wait_steps // aging_interval",
    "deadline slack comes first under the deadline policy, and only there": "截止时间余量只在 deadline 策略下排在最前",
    "ties fall to total length, then request id": "平局时依次比较总长度和请求 id",
    "whole runs follow the key under every policy": "每种策略下的完整运行都遵循排序键",
    "an admitted challenger keeps running and is not charged again": "已准入的挑战者继续运行，不重复扣除 KV 块",
    "a challenger whose blocks fit is admitted": "KV 块放得下的挑战者被准入",
    "with no legal victim nothing changes and None is returned": "没有合法的被抢占者时什么都不变，并返回 None",
    "non-preemptible requests are never victims": "不可抢占的请求永远不会被抢占",
    "the victim has the lowest effective priority, then most blocks, then lowest id, and makes room":
        "被抢占者依次取有效优先级最低、KV 块最多、id 最小者，且能腾出空间",
    "aging counts: effective priority decides who may be preempted": "老化计入：由有效优先级决定谁可被抢占",
    "a victim keeps its phase and progress, and resumes in whole runs": "被抢占者保留阶段与进度，并在完整运行中恢复",
    "the request with the smallest key is served": "服务键最小的请求",
    "every candidate not chosen waits one more step": "每个未被选中的候选多等一步",
    "step returns None when all are done or nothing can be admitted": "全部完成或无人可准入时 step 返回 None",
    "a blocked urgent request lets a smaller one run; finishing frees blocks": "被挡住的紧急请求让较小的请求先运行；完成会释放 KV 块",
    "preemptions are recorded in the event and the victim resumes without redoing work": "抢占记录在事件中，被抢占者恢复时不重做工作",
    "deadline order and deadline_missed in events": "事件中的截止时间顺序与 deadline_missed",
    "random workloads with arrivals during the run match the reference": "运行中有新到达的随机工作负载与参考实现一致",
    # 03_batch_scheduling
    "vLLM's budget scenarios: one step, chunked prefill with a threshold, chunking on and off":
        "vLLM 的预算场景：单步、带阈值的分块预填充、开启与关闭分块",
    "vLLM's priority queue order: priority, then arrival; max_num_seqs holds the rest back":
        "vLLM 的优先级队列顺序：先比优先级，再比到达；max_num_seqs 挡住其余请求",
    "running requests first, then the waiting ones, under the token budget (ample KV)":
        "在词元预算内先调度运行中的请求，再调度等待中的（KV 充足）",
    "max_num_seqs bounds the running set": "max_num_seqs 限制运行中请求的数量",
    "the first waiting request that does not fit ends admission": "第一个放不下的等待请求结束准入",
    "under KV pressure: nobody is admitted in a step that preempted": "KV 紧张时：发生了抢占的一步不准入任何请求",
    "whole engine runs match the reference": "完整的引擎运行与参考实现一致",
    "blocks needed = ceil((computed + new) / block_size) - held, never negative":
        "所需块数 = ceil((已计算 + 新增) / block_size) - 已持有，且不为负",
    "a growing sequence gets a block only when it crosses a block boundary": "增长中的序列只在跨过块边界时才得到新块",
    "what does not fit is refused: can_append is False, append raises RuntimeError and changes nothing":
        "放不下就拒绝：can_append 为 False，append 抛出 RuntimeError 且什么都不改",
    "deallocate returns every block and empties the table": "deallocate 归还所有块并清空块表",
    "whole runs under KV pressure match the reference": "KV 紧张时的完整运行与参考实现一致",
    "FCFS: the last admitted running request is preempted, one at a time until the blocks fit":
        "FCFS：抢占最后准入的运行中请求，一次一个，直到块放得下",
    "priority: the largest (priority, arrival, id) is preempted": "priority：抢占 (priority, arrival, id) 最大者",
    "recompute: blocks freed, computed tokens reset and counted, back to the front of the queue":
        "重算：释放块，已计算词元清零并计数，回到队列最前面",
    "a victim already in this step's batch leaves it and gives its tokens back": "已在本步批中的被抢占者离开批，并归还它的词元",
    "a request that is its own victim cannot run: False": "自己成为被抢占者的请求不能运行：返回 False",
    "a key-function policy (Step 6) preempts the last admitted, as FCFS does": "键函数策略（第 6 节）和 FCFS 一样抢占最后准入的请求",
    "vLLM's preemption scenarios, step by step": "vLLM 的抢占场景，逐步比对",
    "per request: TTFT, TPOT (None for one token) and E2E in ms": "逐请求：以毫秒计的 TTFT、TPOT（只有一个词元时为 None）和 E2E",
    "percentiles interpolate linearly between closest ranks": "百分位数在最近的两个秩之间线性插值",
    "summary: p50/p95/p99, throughput, goodput, SLO attainment, preemption cost":
        "汇总：p50/p95/p99、吞吐、有效吞吐、SLO 达成率、抢占代价",
    "edges: single-token requests only, one request, SLO boundaries": "边界：只有单词元请求、只有一个请求、恰在 SLO 边界上",
    "meets the SLO on the notebook's traces 0, 1, 2": "在 notebook 给出的轨迹 0、1、2 上满足 SLO",
    "meets it on two held-out traces of the same kind (not tuned to the three)":
        "在两条同类的保留轨迹上也满足（不是只针对那三条调出来的）",
}

TEXT = {
    "en": {
        "graded_outside": "(Graded outside this notebook: the hidden tests replay this TODO alone.)",
        "feedback_for": "feedback for", "task": "task", "score": "Score",
    },
    "zh": {
        "graded_outside": "（在本 notebook 之外评分：隐藏测试单独重放这个 TODO。）",
        "feedback_for": "的反馈：", "task": "题目", "score": "得分",
    },
}


def rule_name(name: str, language: str) -> str:
    return RULES_ZH.get(name, name) if language == "zh" else name


def summary(verdict: TaskVerdict, language: str = "en") -> str:
    """verdict.summary() in `language`; the failing case's code and details stay as Python writes them."""
    if language == "en":
        return verdict.summary()
    rules = verdict.rules
    lines = [f"{verdict.task_id}：{verdict.score:g} / {verdict.points:g} 分"
             f"（{len(rules)} 条规则中 {sum(r.passed for r in rules)} 条成立）"]
    if verdict.note:
        lines.append(f"  备注：{verdict.note}")
    for rule in rules:
        lines.append(f"  [{'通过' if rule.passed else '未通过'}] {rule_name(rule.name, language)}")
        if not rule.passed:
            lines.append(f"         {rule.detail}")
        if rule.snippet:
            lines += ["         想亲自复现，把下面的代码粘贴到一个草稿单元格里运行：", "", *rule.snippet.splitlines(), ""]
    return "\n".join(lines)
