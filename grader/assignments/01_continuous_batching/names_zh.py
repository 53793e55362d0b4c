"""Chinese names of 01_continuous_batching's hidden rules and scenarios (feedback in the zh edition)."""
from lab.i18n import ZH as LAB_ZH

RULES = {
    "waits and flows on the worked examples": "算例上的等待时间与流程时间",
    "continuous schedules with staggered arrivals": "到达时刻错开的连续批处理调度",
    "static schedules, where a group holds its slots": "静态批处理调度：一组请求占住自己的槽位",
    "idle gaps: the clock jumps to late arrivals": "空闲间隙：时钟直接跳到较晚的到达时刻",
    "any valid trace: another order, a job paused and resumed": "任意合法的 trace：另一种顺序、作业暂停后再继续",
    "valid traces pass": "合法的 trace 能通过检查",
    "a job served too few times is caught": "能发现服务次数太少的作业",
    "a job served too many times is caught": "能发现服务次数太多的作业",
    "an id that is not a job is caught": "能发现服务了不是作业的 id",
    "a job never served is caught": "能发现从未被服务的作业",
    "no_gain_case: a valid, non-trivial workload where continuous gains nothing":
        "no_gain_case：合法、非平凡，且连续批处理毫无收益的工作负载",
    "double_gain_case: a valid workload where static takes at least 2x the ticks":
        "double_gain_case：合法的工作负载，静态批处理所需的 tick 数至少是连续批处理的 2 倍",
    "the worked examples": "算例",
    "static: each group lasts as long as its longest job": "静态：每组持续到组内最长的作业结束",
    "continuous: a freed slot takes the next job at once": "连续：槽位一空出，下一个作业立即补上",
    "edges: one job, more slots than jobs, no jobs": "边界：一个作业、槽位多于作业、没有作业",
    "long jobs: computed from the lengths, not tick by tick": "长作业：根据长度计算，而不是逐 tick 模拟",
}

# The hidden scenarios' names, without their " #k" or " (k)" number and ", static" / ", continuous" suffix.
SCENARIOS = {
    "continuous": "连续", "static": "静态", "dropped serve": "漏掉一次服务", "extra serve": "多出一次服务",
    "late arrivals": "较晚到达", "never served": "从未被服务", "unknown id": "未知 id", "valid": "合法",
    "one job": "一个作业", "more slots than jobs": "槽位多于作业", "no jobs": "没有作业",
    "an id listed twice in one tick": "同一个 tick 里列出两次的 id",
    "continuous, another order": "连续，另一种顺序", "static, another order": "静态，另一种顺序",
    "slots idle while jobs wait": "有作业等待时槽位空着", "paused and resumed": "暂停后再继续",
    "job 0 paused for two shorter jobs": "作业 0 暂停，让两个更短的作业先运行",
    "A-E, longest first": f"{LAB_ZH['A-E']}，最长优先", "A-E on 1 slot, shortest first": f"1 个槽位上的 {LAB_ZH['A-E']}，最短优先",
    "4 requests on 2 slots, newest first": f"{LAB_ZH['4 requests on 2 slots']}，最新优先",
    "A-E, each job 10**8 times longer": f"{LAB_ZH['A-E']}，每个作业加长到 10**8 倍",
    "static, a billion tokens": "静态，十亿个词元", "continuous, a billion tokens": "连续，十亿个词元",
    "one job of a billion tokens": "一个十亿词元的作业", "more slots than long jobs": "槽位多于长作业", "long jobs": "长作业",
}
