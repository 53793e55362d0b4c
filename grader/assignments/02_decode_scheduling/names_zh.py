"""Chinese names of 02_decode_scheduling's hidden rules and scenarios (feedback in the zh edition)."""

RULES = {
    "stores every argument; a new request is waiting, in prefill, not admitted":
        "保存每个参数；新请求处于等待、预填充阶段、未准入",
    "omitted arguments keep the signature's defaults": "省略的参数取签名中的默认值",
    "one new object per request, appended in order": "每个请求一个新对象，按顺序追加",
    "bad input raises ValueError and leaves the queue unchanged": "错误输入抛出 ValueError，且队列不变",
    "requests enqueued by TODO 1 run correctly to the end": "由 TODO 1 入队的请求能正确运行到结束",
    "phase, then cache hit, then priority decide the order": "依次由阶段、缓存命中、优先级决定顺序",
    "wait_steps changes nothing outside aging": "除 aging 策略外，wait_steps 不起任何作用",
    "aging adds wait_steps // aging_interval to the priority": "aging 策略给优先级加上 wait_steps // aging_interval",
    "deadline slack comes first under the deadline policy, and only there": "只有在 deadline 策略下，截止时间余量才最先决定顺序",
    "ties fall to total length, then request id": "前面各项都相同时，依次比较总长度和请求 id",
    "whole runs follow the key under every policy": "每种策略下的完整运行都遵循排序键",
    "an admitted challenger keeps running and is not charged again": "已准入的候选请求继续运行，不重复扣除 KV 块",
    "a challenger whose blocks fit is admitted": "KV 块放得下的候选请求被准入",
    "with no legal victim nothing changes and None is returned": "没有合法的被抢占者时什么都不变，并返回 None",
    "non-preemptible requests are never victims": "不可抢占的请求永远不会被抢占",
    "the victim has the lowest effective priority, then most blocks, then lowest id, and makes room":
        "被抢占者依次取有效优先级最低、KV 块最多、id 最小者，且能腾出空间",
    "aging counts: effective priority decides who may be preempted": "老化计入：由有效优先级决定谁可被抢占",
    "a victim keeps its phase and progress, and resumes in whole runs": "被抢占者保留阶段与进度，并在完整运行中恢复",
    "the request with the smallest key is served": "键最小的请求得到服务",
    "every candidate not chosen waits one more step": "每个未被选中的候选请求都多等一步",
    "step returns None when all are done or nothing can be admitted": "全部完成或没有请求能被准入时，step 返回 None",
    "a blocked urgent request lets a smaller one run; finishing frees blocks": "被挡住的紧急请求让较小的请求先运行；完成会释放 KV 块",
    "preemptions are recorded in the event and the victim resumes without redoing work": "抢占记录在事件中，被抢占者恢复时不重做工作",
    "deadline order and deadline_missed in events": "事件中的截止时间顺序与 deadline_missed",
    "random workloads with arrivals during the run match the reference": "运行中有新到达的随机工作负载与参考实现一致",
}

# The hidden scenarios' names, without their " #k" or " (k)" number and ", static" / ", continuous" suffix.
SCENARIOS = {
    "admitted": "已准入", "admitted by the first call, then called again": "第一次调用准入，然后再调用一次",
    "no victim at equal priority, then one at a lower priority": "优先级相同时没有被抢占者，优先级更低时才有",
    "aging queue": "老化下的队列", "aging victims": "老化下的被抢占者", "bad input": "错误输入",
    "deadline queue": "截止时间下的队列", "deadline workload": "截止时间工作负载", "fits": "放得下",
    "independent requests": "相互独立的请求", "no victim": "没有被抢占者", "one step": "单步", "partial arguments": "部分参数",
    "protected": "受保护的请求", "random queue": "随机队列", "random requests": "随机请求", "stall": "停滞", "ties": "键相同",
    "tight": "容量紧张", "tight priorities": "容量紧张下的优先级", "tight workload": "容量紧张的工作负载",
    "victim choice": "被抢占者的选择", "equal priority, different blocks": "优先级相同、KV 块数不同",
    "equal priority, the holder of more blocks goes though its id is higher": "优先级相同，持有 KV 块更多的请求被抢占，尽管它的 id 更大",
    "two victims ranked by effective priority": "两个候选被抢占者按有效优先级排序", "waits": "等待", "waits ignored": "忽略等待", "workload": "工作负载",
    "aging": "老化", "capacity admission and release": "容量、准入与释放", "decision order": "决策顺序",
    "enqueue contract": "入队约定", "exhaustion": "耗尽", "input guards": "输入检查", "key picks the step": "排序键决定这一步运行谁",
    "preemption": "抢占", "state progression": "状态推进", "step limit": "步数上限",
}
