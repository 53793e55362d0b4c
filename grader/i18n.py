"""Feedback in the submission's language: rule names, verdict text, notes. Scores never depend on it.

The verdicts are built in English (grader/grade.py, the suites' judges); a zh page translates them here, at
render time, phrase by known phrase. What the student's code returned is copied as it is, never translated.
"""
from __future__ import annotations

import re

from lab import BATCHING_EXAMPLES, DECODE_SCENARIOS
from lab.i18n import ZH as LAB_ZH

from .diagnose import advice
from .grade import TaskVerdict, quote_marks

RULES_ZH = {
    # 01_continuous_batching
    "waits and flows on the worked examples": "算例上的等待时间与流经时间",
    "continuous schedules with staggered arrivals": "到达时刻错开的连续批处理调度",
    "static schedules, where a group holds its slots": "静态批处理调度：一组请求占住自己的槽位",
    "idle gaps: the clock jumps to late arrivals": "空闲间隙：时钟跳到较晚的到达",
    "any valid trace: another order, a job paused and resumed": "任意合法的 trace：另一种顺序、作业暂停后再继续",
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
    "long jobs: computed from the lengths, not tick by tick": "长作业：根据长度计算，而不是逐 tick 模拟",
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
        "heading": "{assignment}: feedback for {student}", "task": "task", "score": "Score",
    },
    "zh": {
        "graded_outside": "（在本 notebook 之外评分：隐藏测试单独重放这个 TODO。）",
        "heading": "{student} 的反馈：{assignment}", "task": "题目", "score": "得分",
    },
}

# The hidden scenarios' names, without their " #k" or " (k)" number and ", static" / ", continuous" suffix.
SCENARIOS_ZH = {
    **{example.name: LAB_ZH[example.name] for example in BATCHING_EXAMPLES},
    **{name: LAB_ZH[name] for name in DECODE_SCENARIOS},
    # 01_continuous_batching
    "continuous": "连续", "static": "静态", "dropped serve": "漏掉一次服务", "extra serve": "多出一次服务",
    "late arrivals": "较晚到达", "never served": "从未被服务", "unknown id": "未知 id", "valid": "合法",
    "one job": "一个作业", "more slots than jobs": "槽位多于作业", "no jobs": "没有作业",
    "an id listed twice in one tick": "同一个 tick 里列出两次的 id",
    "continuous, another order": "连续，另一种顺序", "static, another order": "静态，另一种顺序",
    "slots idle while jobs wait": "有作业等待时槽位空着", "paused and resumed": "暂停后再继续",
    "job 0 paused for two shorter jobs": "作业 0 为两个更短的作业暂停",
    "A-E, longest first": f"{LAB_ZH['A-E']}，最长优先", "A-E on 1 slot, shortest first": f"1 个槽位上的 {LAB_ZH['A-E']}，最短优先",
    "4 requests on 2 slots, newest first": f"{LAB_ZH['4 requests on 2 slots']}，最新优先",
    "A-E, each job 10**8 times longer": f"{LAB_ZH['A-E']}，每个作业长 10**8 倍",
    "static, a billion tokens": "静态，十亿个词元", "continuous, a billion tokens": "连续，十亿个词元",
    "one job of a billion tokens": "一个十亿词元的作业", "more slots than long jobs": "槽位多于长作业", "long jobs": "长作业",
    # 02_decode_scheduling
    "admitted": "已准入", "admitted by the first call, then called again": "第一次调用准入，然后再调用一次",
    "no victim at equal priority, then one at a lower priority": "优先级相同时没有被抢占者，优先级更低后才有",
    "aging queue": "老化下的队列", "aging victims": "老化下的被抢占者", "bad input": "错误输入",
    "deadline queue": "截止时间下的队列", "deadline workload": "截止时间工作负载", "fits": "放得下",
    "independent requests": "相互独立的请求", "no victim": "没有被抢占者", "one step": "单步", "partial arguments": "部分参数",
    "protected": "受保护的请求", "random queue": "随机队列", "random requests": "随机请求", "stall": "停滞", "ties": "平局",
    "tight": "容量紧张", "tight priorities": "容量紧张下的优先级", "tight workload": "容量紧张的工作负载",
    "victim choice": "被抢占者的选择", "two victims ranked by effective priority": "两个候选被抢占者按有效优先级排序", "waits": "等待", "waits ignored": "忽略等待", "workload": "工作负载",
    "aging": "老化", "capacity admission and release": "容量、准入与释放", "decision order": "决策顺序",
    "enqueue contract": "入队约定", "exhaustion": "耗尽", "input guards": "输入检查", "key picks the step": "排序键决定这一步",
    "preemption": "抢占", "state progression": "状态推进", "step limit": "步数上限",
    # 03_batch_scheduling
    "SLO met exactly": "恰好满足 SLO", "ample KV": "KV 充足", "blocks needed": "所需块数", "engine run": "引擎运行",
    "fcfs victims": "fcfs 下的被抢占者", "freeing": "释放", "growth": "增长", "head-of-line": "队头阻塞",
    "key-function victims": "键函数策略下的被抢占者", "latencies": "时延", "no values": "没有数据", "percentile": "百分位数",
    "preempt": "抢占", "priority victims": "priority 下的被抢占者", "refused": "拒绝", "scheduled victims": "已调度的被抢占者",
    "self victim": "自己成为被抢占者", "single tokens": "单词元请求", "summary": "汇总", "tight KV": "KV 紧张",
    "max_num_seqs": "max_num_seqs 上限",
}


def rule_name(name: str, language: str) -> str:
    return RULES_ZH.get(name, name) if language == "zh" else name


def _patterns(pairs: list[tuple[str, object]]) -> list[tuple[re.Pattern, object]]:
    return [(re.compile(pattern, re.S), zh) for pattern, zh in pairs]


def _first(text: str, patterns) -> str | None:
    """The translation of `text` by the first pattern it matches whole; None if none does."""
    for pattern, zh in patterns:
        match = pattern.fullmatch(text)
        if match:
            return zh(match) if callable(zh) else zh.format(*match.groups(), **match.groupdict())
    return None


def _template_regex(english: str) -> re.Pattern:
    """lab's English template as a pattern: each {field} captures text (a repeated one must repeat it)."""
    parts, seen = re.split(r"{(\w+)}", english), set()
    regex = ""
    for i, part in enumerate(parts):
        if i % 2 == 0:
            regex += re.escape(part)
        else:
            regex += f"(?P={part})" if part in seen else f"(?P<{part}>.+?)"
            seen.add(part)
    return re.compile(regex, re.S)


_LAB_TEMPLATES = [(_template_regex(en), zh) for en, zh in LAB_ZH.items() if "{" in en]


def _from_lab(text: str, depth: int = 0) -> str:
    """A message lab wrote in English (the grader's process runs lab in English), in lab's own Chinese."""
    for regex, zh in _LAB_TEMPLATES:
        match = regex.fullmatch(text)
        if match:
            found = {k: (_from_lab(v, depth + 1) if depth < 1 else v) for k, v in match.groupdict().items()}
            return zh.format(**found)
    return text


def _quoted_from_lab(shown: str) -> str:
    """A lab message as the page shows a child's text (ascii(), in quotes), translated inside its quotes."""
    if len(shown) >= 2 and shown[0] == shown[-1] and shown[0] in "'\"":
        return shown[0] + _from_lab(shown[1:-1]) + shown[0]
    return shown


STATUS_ZH = {"timeout": "超时", "crashed": "崩溃", "garbled": "输出无法解读", "ok": "正常结束",
             "skipped after 3 timeouts in a row": "连续 3 次超时后被跳过", "an error": "一个异常",
             "the cell itself ran past the time limit": "单元格本身超出了时间限制"}
_STATUS = _patterns([(r"crash: (.*)", lambda m: f"崩溃：{_status(m[1])}")])
_PROTOCOL = _patterns([  # grader/schema.py's Protocol: what a child wrote that is not the protocol
    (r"a record after the end", "结束之后的记录"), (r"a record of (\d+) bytes", "一条 {0} 字节的记录"),
    (r"something that is not a result record", "不是结果记录的内容"), (r"a malformed result record", "格式错误的结果记录"),
    (r"an unexpected record where the end belongs", "本应结束处的意外记录"), (r"a malformed cells record", "格式错误的单元格记录"),
    (r"an unexpected record where a scenario belongs", "本应是场景处的意外记录"),
])
_RUN_DETAIL = _patterns([
    (r"stopped after (\S+) s", "运行 {0} 秒后被停止"),
    (r"stopped: no progress in (\S+) s of CPU time", "被停止：{0} 秒 CPU 时间内没有进展"),
    (r"stopped: no progress for (\S+) s", "被停止：{0} 秒内没有进展"),
    (r"stopped \((.*)\)", "被停止（{0}）"),
    (r"ended early \(exit code (.*)\)", "提前结束（退出码 {0}）"),
    (r"the child wrote (.*)", lambda m: f"子进程写出了{_first(m[1], _PROTOCOL) or '无法解读的内容'}"),
    (r"the reference server did not start", "参考服务器没有启动"),
])


def _status(text: str) -> str:
    return STATUS_ZH.get(text) or _first(text, _STATUS) or text


def _path(path: str) -> str:
    """Where two observations differ ('returned.tokens[request 3]'), the leading word in Chinese."""
    path = re.sub(r"\[request (\d+)\]", r"[请求 \1]", path)
    for english, zh in (("returned", "返回值"), ("observed", "观测"), ("value", "值")):
        if path == english or path.startswith(english + ".") or path.startswith(english + "["):
            return zh + path[len(english):]
    return path


_DIFF = r"(?P<path>.*?): expected (?P<want>.*?), got (?P<got>.*)"
_EXPLANATIONS = _patterns([
    (r"not run \((?P<status>\w+): (?P<detail>.*)\)",
     lambda m: f"未运行（{_status(m['status'])}：{_first(m['detail'], _RUN_DETAIL) or m['detail']}）"),
    (r"the scenario did not finish: (.*)", lambda m: f"场景没有运行完：{_status(m[1])}"),
    (r"not graded: grading error", "未评分：评分出错"),
    (r"expected (\d+) observations, got (.*)", "应有 {0} 条观测，实际得到 {1} 条"),
    (r"step (?P<n>\d+), (?P<op>.*?): expected to (?P<want>.*?), but it (?P<verb>raised|returned) (?P<got>.*)",
     lambda m: f"第 {m['n']} 步，{m['op']}：应当{_want(m['want'])}，但它"
               + ("抛出了一个异常" if m["got"] == "an error" else f"{'抛出了' if m['verb'] == 'raised' else '返回了'} {_status(m['got'])}")),
    (r"step (?P<n>\d+), (?P<op>.*?): state " + _DIFF,
     lambda m: f"第 {m['n']} 步，{m['op']}：状态{'' if m['path'] == 'value' else ' ' + _path(m['path'])}：应为 {m['want']}，实际为 {m['got']}"),
    (r"step (?P<n>\d+), (?P<op>.*?): " + _DIFF,
     lambda m: f"第 {m['n']} 步，{m['op']}：{_path(m['path'])}：应为 {m['want']}，实际为 {m['got']}"),
    (_DIFF, lambda m: f"{_path(m['path'])}：应为 {m['want']}，实际为 {m['got']}"),
    # grade.judged
    (r"the value could not be judged: (.*)", lambda m: f"无法评判这个值：{_first(m[1], _PROBLEMS) or m[1]}"),
    (r"the value could not be judged \((\w+)\)", "无法评判这个值（{0}）"),
    # the judges of 01_continuous_batching
    (r"the function did not return: (.*)", "函数没有返回：{0}"),
    (r"expected a \(jobs, slots\) pair, got (.*)", "应返回一个 (jobs, slots) 二元组，实际是 {0}"),
    (r"lab\.schedule rejects the workload: (.*)", lambda m: f"lab.schedule 拒绝了这个工作负载：{_quoted_from_lab(m[1])}"),
    (r"make it non-trivial: at least 2 slots, more jobs than slots, and not all the same length",
     "请让它不平凡：至少 2 个槽位，作业数多于槽位数，且作业长度不全相同"),
    (r"static takes (\S+) ticks and continuous (\S+): not the same", "静态需要 {0} 个 tick，连续需要 {1} 个：两者不相同"),
    (r"static (\S+) / continuous (\S+) = (\S+), below (\S+)", "静态 {0} / 连续 {1} = {2}，低于 {3}"),
    (r"expected a list of at most (\d+) jobs", "应为最多 {0} 个作业的列表"),
    (r"slots must be an int from 1 to (\d+)", "slots 必须是 1 到 {0} 之间的 int"),
    (r"keep it small: at most (\d+) tokens and arrival at most (\d+) per job", "请控制规模：每个作业最多 {0} 个词元，到达时刻最多为 {1}"),
    (r"keep it small: at most (\d+) tokens in all", "请控制规模：词元总数最多 {0}"),
    # the judge of 03_batch_scheduling's TODO 5 (its SLO misses are lab's messages)
    (r"slo_key took more than (\S+) s of CPU for this trace's (\d+) requests \(keep a key fast\)",
     "slo_key 处理这条轨迹的 {1} 个请求用了超过 {0} 秒 CPU 时间（键函数要快）"),
    (r"the key was not run: (.*)", "键函数没有运行：{0}"),
    (r"there is no slo_key function in the TODO 5 cell", "TODO 5 的单元格里没有 slo_key 函数"),
    (r"calling slo_key on this trace's requests raised (\S+) \(lab\.engine\.serving_order\(slo_key, infos\) "
     r"gives the same error where you can read it\)",
     lambda m: f"对这条轨迹的请求调用 slo_key 时抛出了 {_status(m[1])}（在 notebook 中运行 "
               "lab.engine.serving_order(slo_key, infos) 会得到同样的错误，并能看到完整信息）"),
    (r"the order given is not one place per request", "给出的顺序没有让每个请求恰好占一个位置"),
    (r"class-0 p99 TTFT .*|max wait .*", lambda m: "；".join(_from_lab(part) for part in m[0].split("; "))),
])
_PROBLEMS = _patterns([
    (r"more than (\d+) values", "多于 {0} 个值"), (r"nested deeper than (\d+)", "嵌套深度超过 {0}"),
    (r"an integer of (\d+) bits", "一个 {0} 位的整数"), (r"a string of (\d+) characters", "一个 {0} 个字符的字符串"),
    (r"a (\w+)", "一个 {0}"),
])


def _want(text: str) -> str:
    return f"抛出 {text[len('raise '):]}" if text.startswith("raise ") else f"返回 {text[len('return '):]}"


_SCENARIO = re.compile(
    r"(?P<example>worked example: )?(?P<name>" + "|".join(re.escape(n) for n in sorted(SCENARIOS_ZH, key=len, reverse=True))
    + r"|vLLM test_\w+(?: \(chunked=\w+\))?|trace \d+|held-out trace [A-Z]|\w+\(\))(?P<number> #\d+| \(\d+\))?"
    r"(?P<policy>, (?:static|continuous))?(?P<cut>, cut down to a smaller case)?(?=: |$)", re.S)


def scenario_name(name: str) -> str:
    """A hidden scenario's name in Chinese (its number kept; vLLM's test names and function calls as they are)."""
    match = _SCENARIO.match(name)
    if not match or match.end() != len(name):
        return name
    return _scenario(match)


def _scenario(match: re.Match) -> str:
    name = match["name"]
    zh = SCENARIOS_ZH.get(name) or re.sub(r"^held-out trace ", "保留轨迹 ", re.sub(r"^trace ", "轨迹 ", name))
    policy = {", static": "，静态", ", continuous": "，连续"}.get(match["policy"] or "", "")
    number = re.sub(r" \((\d+)\)", r"（\1）", match["number"] or "")
    return ("算例：" if match["example"] else "") + zh + number + policy + ("，缩小后的用例" if match["cut"] else "")


def detail(text: str, language: str = "en") -> str:
    """A failing rule's detail ('<scenario>: <what went wrong>', or a note of the grader's) in `language`."""
    if language == "en" or not text:
        return text
    if text == "no answer cell":
        return "没有答题单元格"
    match = _SCENARIO.match(text)
    if match and text[match.end():match.end() + 2] == ": ":
        rest = text[match.end() + 2:]
        return f"{_scenario(match)}：{_first(rest, _EXPLANATIONS) or rest}"
    return _first(text, _EXPLANATIONS) or text


_NOTES = _patterns([
    (r"your (TODO \d+) cell raised (.*)", lambda m: f"你的 {m[1]} 单元格抛出了 {_status(m[2])}"),
    (r"grading child's reference server (\w+): (.*)",
     lambda m: f"评分子进程的参考服务器{_status(m[1])}：{_first(m[2], _RUN_DETAIL) or m[2]}"),
    (r"grading child (\w+): (.*)", lambda m: f"评分子进程{_status(m[1])}：{_first(m[2], _RUN_DETAIL) or m[2]}"),
    (r"the answer cell is missing", "缺少答题单元格"),
    (r"grading error, re-run \(the reference server (\w+): (.*)\)",
     lambda m: f"评分出错，需要重新评分（参考服务器{_status(m[1])}：{_first(m[2], _RUN_DETAIL) or m[2]}）"),
    (r"grading error, re-run \(the machine was busy: the run waited (\S+) s of (\S+) s for a CPU\)",
     "评分出错，需要重新评分（机器过于繁忙：运行的 {1} 秒中有 {0} 秒在等待 CPU）"),
])


def note(text: str, language: str = "en") -> str:
    """A verdict's note (parts joined by '; ') in `language`."""
    if language == "en" or not text:
        return text
    return "；".join(_first(part, _NOTES) or part for part in text.split("; "))


NOT_RUN_ZH = _patterns([
    (r"not run: (\S+) ran past its time limit when graded, and this cell uses it", "{0} 在评分时超出了时间限制，而这个单元格用到了它"),
    (r"not run: (.+?) ran past its time limit, and this cell uses it", "{0} 超出了时间限制，而这个单元格用到了它"),
    (r"not run: the notebook's (\S+) s budget was used up", "整个 notebook 的 {0} 秒时间预算已经用完"),
    (r"not run: cell (\d+) did not stop when interrupted", "单元格 {0} 被中断后没有停下"),
    (r"not run: the run ended early", "运行提前结束"),
    (r"not run: the run was stopped", "运行被停止"),
])


def not_run(text: str, language: str = "en") -> str:
    """The line a cell the feedback run skipped shows ('[not run] not run: why'), in `language`."""
    prefix = "[not run] "
    if language == "en" or not text.startswith(prefix):
        return text
    why = text[len(prefix):].rstrip("\n")
    zh = _first(why, NOT_RUN_ZH)
    return f"[未运行] {zh}\n" if zh else text


def summary(verdict: TaskVerdict, language: str = "en") -> str:
    """verdict.summary() in `language`; the failing case's code and the values in its details stay as Python writes them."""
    if language == "en":
        return with_mistake(verdict.summary(), verdict, language)
    rules = verdict.rules
    lines = [f"{verdict.task_id}：{verdict.score:g} / {verdict.points:g} 分"
             f"（{len(rules)} 条规则中 {sum(r.passed for r in rules)} 条成立）"]
    if verdict.note:
        lines.append(f"  备注：{note(verdict.note, language)}")
    for rule in rules:
        lines.append(f"  [{'通过' if rule.passed else '未通过'}] {rule_name(rule.name, language)}")
        if not rule.passed:
            lines += [f"         题目要求：{quote_marks(q, language)}" for q in rule.quotes.get(language, [])]
            lines.append(f"         {detail(rule.detail, language)}")
        if rule.snippet:
            lines += ["         想亲自复现，把下面的代码粘贴到一个草稿单元格里运行：", "", *rule.snippet.splitlines(), ""]
    return with_mistake("\n".join(lines), verdict, language)


def with_mistake(text: str, verdict: TaskVerdict, language: str) -> str:
    """The summary with the common mistake the answer behaves like (grader/diagnose.py) under its first line."""
    said = advice(verdict.mistake, language)
    if not said:
        return text
    first, _, rest = text.partition("\n")
    return "\n".join([first, *("  " + line for line in said.splitlines()), *([rest] if rest else [])])
