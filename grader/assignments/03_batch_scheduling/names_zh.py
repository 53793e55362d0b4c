"""Chinese names of 03_batch_scheduling's hidden rules and scenarios (feedback in the zh edition)."""

RULES = {
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
    "priority: the largest (priority, arrival, id) is preempted": "priority 策略：抢占 (priority, arrival, id) 最大的请求",
    "recompute: blocks freed, computed tokens reset and counted, back to the front of the queue":
        "重算：释放块，已计算词元清零并计入重算词元数，回到队列最前面",
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
        "在两条未公开的同类轨迹上也满足（不是只针对那三条调出来的）",
}

# The hidden scenarios' names, without their " #k" or " (k)" number and ", static" / ", continuous" suffix.
SCENARIOS = {
    "priority: the victim stood before the request that made room": "priority 策略：被抢占者原先排在请求空间的那个请求之前",
    "priority, victim ahead": "priority 策略，被抢占者在前",
    "SLO met exactly": "恰好满足 SLO", "ample KV": "KV 充足", "blocks needed": "所需块数", "engine run": "引擎运行",
    "fcfs victims": "FCFS 下的被抢占者", "freeing": "释放", "growth": "增长", "head-of-line": "队头阻塞",
    "key-function victims": "键函数策略下的被抢占者", "latencies": "时延", "no values": "没有数据", "percentile": "百分位数",
    "preempt": "抢占", "priority victims": "priority 策略下的被抢占者", "refused": "拒绝", "scheduled victims": "已调度的被抢占者",
    "self victim": "自己成为被抢占者", "single tokens": "单词元请求", "summary": "汇总", "tight KV": "KV 紧张",
    "max_num_seqs": "max_num_seqs 上限", "chunking off, exact fit": "不分块，恰好放得下",
    "chunking off, a prompt exactly the size of the budget left is admitted": "不分块，恰好等于剩余预算的提示词被准入",
}

# The comments in the code of a failing case (cases.py writes them), in Chinese: a zh page shows them so (grader/i18n.py).
COMMENTS = {"a running request, set up by hand": "一个手动设置的运行中请求"}
