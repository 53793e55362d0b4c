"""Chinese names of __NAME__'s hidden rules and scenarios (feedback in the zh edition)."""

RULES = {
    "every request counts its prompt and its output tokens": "每个请求都计入提示词和输出的词元",
    "no requests need no tokens, one request its own": "没有请求就不需要词元，一个请求只需要它自己的词元",
    "earlier arrivals come first": "先到达的在前",
    "equal arrivals go by the lower id": "同时到达时 id 小的在前",
}

# The hidden scenarios' names, without their " #k" number.
SCENARIOS = {
    "random requests": "随机请求", "a long queue": "长队列", "no requests": "没有请求", "one request": "一个请求", "distinct arrivals": "到达时刻各不相同", "ties": "平局",
}
