"""Every number the prose of both notebooks quotes is pinned, so prose and output cannot drift apart.

For each markdown cell of the solved (executed) editions, the numbers in its prose, in order, must equal a
list computed here. Where the notebook prints or displays the number, the list reads it from the executed
output; the rest are the notebook's own inputs, labels and engine constants, written out once below so that
a changed or added number fails until someone checks it. Numbers, not wording: a reworded sentence passes
as long as its numbers, in order, stay the same. Digits only: results are written in digits in the prose.
"""
import inspect
import re
from fractions import Fraction
from types import SimpleNamespace

import nbformat
import pytest

from conftest import ROOT
from lab.engine import SLO_EXERCISE, TimeModel, poisson_requests
from lab.engine.workloads import CLASS_SHARES

MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
NOT_QUANTITIES = re.compile(  # labels and names that contain digits but quote no result
    r"TODO\s+\d(?:\s*[–-]\s*\d)?|Step\s+\d|(?i:notebooks?\s+0\d)|\bV[01]\b|\b[Pp](?:50|95|99)\b|#\d+"
    rf"|(?:as of\s+)?(?:{MONTHS})\s+20\d\d|OSDI\s+20\d\d|\b0\d_\w+|(?i:\bclass[- ]\d\b)|\bA100-80GB\b|\bbf16\b|\bE2E\b|\b0-based\b")


def prose_numbers(markdown: str) -> list[str]:
    """The numbers of a markdown cell's prose: headings, code spans, list markers and labels left out."""
    lines = [line for line in markdown.splitlines() if not line.lstrip().startswith("#")]
    text = "\n".join(re.sub(r"^\s*\d+\.\s", " ", line) for line in lines)
    text = NOT_QUANTITIES.sub(" ", re.sub(r"`[^`]*`", " ", text))
    return re.findall(r"\d+(?:[.,]\d+)*", text)


def _value(text: str):
    text = text.strip()
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"-?\d+\.\d*", text):
        return float(text)
    return {"True": True, "False": False}.get(text, text)


def html_table(html: str) -> dict:
    """A pandas HTML table as {row key: {column: value}}; a MultiIndex row key is a tuple."""
    head = re.search(r"<thead>(.*?)</thead>", html, re.S).group(1)
    names = re.findall(r"<th[^>]*>(.*?)</th>", re.search(r"<tr[^>]*>(.*?)</tr>", head, re.S).group(1), re.S)
    rows, carried = {}, []
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", re.search(r"<tbody>(.*?)</tbody>", html, re.S).group(1), re.S):
        keys = [_value(k) for k in re.findall(r"<th[^>]*>(.*?)</th>", row, re.S)]
        cells = [_value(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        carried = carried[:max(len(carried) - len(keys), 0)] + keys if len(keys) < len(carried) else keys
        rows[carried[0] if len(carried) == 1 else tuple(carried)] = dict(zip(names[-len(cells):], cells))
    return rows


class Executed:
    """The executed solved edition of one notebook, read by the marker text of its code cells."""

    def __init__(self, nb):
        self.nb = nb

    def _cell(self, marker: str):
        found = [c for c in self.nb.cells if c.cell_type == "code" and marker in c.source]
        assert len(found) == 1, f"{len(found)} code cells contain {marker!r}"
        return found[0]

    def text(self, marker: str) -> str:
        return "".join(o.get("text", "") for o in self._cell(marker).outputs if o.output_type == "stream")

    def tables(self, marker: str) -> list[dict]:
        return [html_table(o["data"]["text/html"]) for o in self._cell(marker).outputs if "text/html" in o.get("data", {})]

    def table(self, marker: str, which: int | None = None) -> dict:
        """The cell's one table, or its table number `which` where it shows several."""
        found = self.tables(marker)
        assert which is not None or len(found) == 1, marker
        return found[which or 0]


def frac(a, b):
    f = Fraction(a, b)
    return [f.numerator, f.denominator]


def workload(ex: Executed, marker: str):
    """Notebook 01's `describe` output: tokens, arrival, slots (printed) and both policies' summary rows (its table,
    the cell's first)."""
    text = ex.text(marker)
    tokens, arrivals, slots = re.search(r"tokens: \[(.*?)\] \| arrivals: \[(.*?)\] \| slots: (\d+)", text).groups()
    policy = ex.table(marker, 0)
    return SimpleNamespace(tokens=[int(t) for t in tokens.split(",")], arrival=int(arrivals), slots=int(slots),
                           S=policy["static"]["makespan_ticks"], C=policy["continuous"]["makespan_ticks"],
                           busy=policy["static"]["busy_slots"])


# ---------------------------------------------------------------- 01_continuous_batching
def nb01_example1(ex):
    w, t = workload(ex, "describe(example)"), ex.table("start_and_finish(example)", -1)
    sf = {job: row["static finish"] for job, row in t.items()}
    cs = {job: row["continuous start"] for job, row in t.items()}
    cf = {job: row["continuous finish"] for job, row in t.items()}
    return [0, len(w.tokens) - 1, w.arrival, *w.tokens, 0, 1, 0, sf[1] - sf[0], 1, sf[1], 2, 3, 2, sf[2], 3, sf[3],
            cs[2], 2, 0, cf[2], 3, cf[3], 1, cf[1]]


def nb01_example1_numbers(ex):
    w, t = workload(ex, "describe(example)"), ex.table("start_and_finish(example)", -1)
    ng = workload(ex, "describe(no_gain)")
    idle_static, idle_behind_0 = w.slots * w.S - w.busy, t[1]["static finish"] - t[0]["static finish"]
    return [w.busy, w.S, w.slots, w.busy, w.slots * w.S, *frac(w.busy, w.slots * w.S), w.C, w.busy, w.slots * w.C,
            *frac(w.busy, w.slots * w.C), w.busy, w.S, w.busy, w.C, *frac(w.S, w.C), w.slots * w.S, w.busy, idle_static,
            idle_behind_0, 0, 1, idle_static - idle_behind_0, 2, 3,
            ng.busy // len(ng.tokens), ng.arrival, ng.slots, ng.S - ng.busy // ng.slots, ng.S]


def nb01_no_gain_and_a_to_e(ex):
    ng, ae = workload(ex, "describe(no_gain)"), workload(ex, "describe(a_to_e)")
    return [ng.busy, ng.slots * ng.S, 0, Fraction(ng.busy, ng.slots * (ng.S - ng.arrival)), ng.arrival,
            *ae.tokens, ae.arrival, ae.slots]


def nb01_a_to_e_numbers(ex):
    ae = workload(ex, "describe(a_to_e)")
    return [ae.S, ae.busy, ae.slots * ae.S, round(100 * ae.busy / (ae.slots * ae.S)),
            ae.C, ae.busy, ae.slots * ae.C, round(100 * ae.busy / (ae.slots * ae.C)), ae.busy]


def nb01_todo1_example(ex):
    w = workload(ex, "describe(example)")
    trace = ex.table('pd.DataFrame(result["trace"])')
    served_3 = [tick for tick, row in trace.items() if 3 in eval(row["served"])]  # "[1, 3]" -> list
    return [len(w.tokens), w.slots, 3, w.arrival, served_3[0], served_3[-1], served_3[0] - w.arrival,
            served_3[-1] + 1 - w.arrival]


def nb01_validation(ex):
    bad = float(re.search(r"got (\d+\.\d+) \(float\)", ex.text("for bad in")).group(1))
    return [0, 1, bad - 1, abs(bad - 2)]  # arrival >= 0, tokens >= 1; the remaining work after 1 and 2 ticks


def nb01_todo3_rules(ex):
    from grader.assignment import load
    suite = load("01_continuous_batching").suite
    MAX_ARRIVAL, MAX_JOBS, MAX_SLOTS, MAX_TOKENS, MAX_TOTAL_TOKENS = (suite.MAX_ARRIVAL, suite.MAX_JOBS, suite.MAX_SLOTS,
                                                                   suite.MAX_TOKENS, suite.MAX_TOTAL_TOKENS)
    # the rule "at least 2 slots", then the judge's size limits, as the prose writes them
    return [2, *(f"{n:,}" for n in (MAX_JOBS, MAX_SLOTS, MAX_TOKENS, MAX_ARRIVAL, MAX_TOTAL_TOKENS))]


def nb01_todo4_example(ex):
    ae = workload(ex, "describe(a_to_e)")
    groups = [ae.tokens[i:i + ae.slots] for i in range(0, len(ae.tokens), ae.slots)]
    return [0, 0, ae.slots, *ae.tokens, *[max(g) for g in groups], ae.S]


def nb01_explanations(ex):
    static, cont = map(int, re.search(r"double_gain_case \((\d+), (\d+)\)", ex.text("makespans(no_gain_case())")).groups())
    long_jobs = static // 8  # the reference's [8, 1, 1, 1] x 3 on 4 slots
    return [1, 2, 2, 4, 8, static, long_jobs, 3 * long_jobs, 4 - long_jobs, cont, 0]


NB01 = {
    "one asks \"how many days": lambda ex: [5, 800],  # the course's illustration, not an output
    "a request that finished after": lambda ex: [5, 800],
    "The state is: the waiting jobs": lambda ex: [1, 0],  # "finishes at tick + 1", "starts at 0": the model's rules
    "Requests 0–3 arrive at tick 0": nb01_example1,
    "Both serve 10 tokens": nb01_example1_numbers,
    "honest numbers": nb01_no_gain_and_a_to_e,
    "Static batching needs **13** ticks": nb01_a_to_e_numbers,
    "Each doubling of the stream": nb01_todo1_example,
    "the **termination argument**": nb01_validation,
    "`no_gain_case()`: static and continuous": nb01_todo3_rules,
    "compute the makespan": nb01_todo4_example,
    "Three budgets per step": lambda ex: [1, "1,000", "1,000", 128],  # 1 token per decode; illustration; SGLang's 128
    "One pass over the trace": nb01_explanations,
}


# ---------------------------------------------------------------- 02_decode_scheduling
def compare_table(ex):
    t = ex.table("lab.compare_policies(example.jobs, example.slots)")
    return SimpleNamespace(S=t["static"]["makespan_ticks"], C=t["continuous"]["makespan_ticks"], busy=t["static"]["busy_slots"])


def nb02_step1(ex):
    tokens, slots = re.search(r"tokens: \[(.*?)\] \| slots: (\d+)", ex.text("example = lab.FOUR_ON_TWO")).groups()
    tokens = [int(t) for t in tokens.split(",")]
    return [len(tokens), 0, *tokens, int(slots)]  # all arrive at tick 0


def nb02_step1_numbers(ex):
    c, slots = compare_table(ex), 2
    return [c.busy, c.S, c.busy, slots * c.S, *frac(c.busy, slots * c.S), c.C, c.busy, slots * c.C,
            *frac(c.busy, slots * c.C), *frac(c.S, c.C), 0]


def nb02_fields(ex):
    required = sum(row["default"] == "required" for row in ex.table("dataclasses.fields(RequestState)").values())
    return [1, required]  # step's given lines add 1 to wait_steps of each request not chosen


def nb02_step3(ex):
    printed = dict(re.findall(r"^(\w+)\s+effective priorities: (.*)$", ex.text('for policy in ("fixed_priority", "aging")'), re.M))
    aging = [int(v) for v in re.findall(r"=(\d+)", printed["aging"])]
    # phase ranks (0)/(1) and cache ranks (0)/(1) of the given key; SGLang's default threshold 10; then the
    # worked example's inputs (interval 2, request 1: priority 1, waited 6; request 2: priority 3) and result
    return [0, 1, 0, 1, 10, 2, 1, 1, 6, 2, 3, 1, 6, 2, aging[0], aging[1], 1]


def nb02_todo2_example(ex):
    clock, tokens, deadline = 0, 1, 1
    slack = deadline - clock - (1 + tokens)
    other = 20 - clock - (1 + 4)  # the check's other request: deadline_step=20, 4 tokens, in prefill
    return [clock, tokens, deadline, clock, 1 + tokens, abs(slack), other]


def nb02_observe(ex):
    events = ex.table('lab.events_frame(timelines["preemption and resume"])')
    summary = ex.table("pd.concat({lab.tr(name): lab.request_summary(events)")
    own = [row for row in events.values() if row["request_id"] == 1]
    preempt = next(step for step, row in events.items() if row["preempted_request_id"] == 1)
    resume = next(row for row in own if row["step"] > preempt)
    before = max(row["generated_len"] for row in own if row["step"] < preempt)
    first_decode = next(row["step"] for row in own if row["action"] != "prefill_to_decode")
    prefill = next(row["step"] for row in own if row["action"] == "prefill_to_decode")
    return [1, 1, prefill, first_decode, 2, 9, 1, preempt, 1, 1, 2, resume["step"], before, resume["generated_len"],
            1, summary[("non-preemptible request", 1)]["finish_step"], 2, 1,  # deadline request 2: slack 1 - 0 - 2
            1, 9, 1, 1, 1, 1]  # the bypass workload's inputs: id 1, priority 9, arrives at step 1; small ones priority 1


def nb02_bypass_and_overload(ex):
    t = ex.table("pd.DataFrame({num_small: bypass_run(num_small)")
    streams = list(t["urgent request: wait"])
    return [*[t["urgent request: wait"][n] for n in streams], *streams, 1,
            1, 40, 2, 14, 3, 1 + 2]  # policy_run's inputs: deadlines 40 and 14, a 2-token arrival every 3 steps


def nb02_policy_prose(ex):
    t = ex.table("policy_summary(summary) for policy")
    fp, ag, dl = t["fixed_priority"], t["aging"], t["deadline"]
    return [fp["high: max wait"], fp["low (1) wait"], fp["medium (2) wait"], 4, ag["low (1) wait"], ag["medium (2) wait"],
            ag["high: max wait"], ag["deadlines missed"], ag["of"], dl["medium (2) wait"], dl["low (1) wait"]]


NB02 = {
    "**Level:** intermediate": lambda ex: [],
    "Start with the worked example from `lab`": nb02_step1,
    "Both policies serve the same 10 tokens": nb02_step1_numbers,
    "| Field of `RequestState` |": nb02_fields,
    "Candidates are sorted by a key": nb02_step3,
    "`RequestState(1, 2, 2)` is request 1": lambda ex: [1, 2, 2],  # the constructor call's own arguments
    "compute `deadline_slack`, the first field": nb02_todo2_example,
    "make room for `challenger`": lambda ex: [2, 2, 1, 1, 2, 2, 9, 2, 0, 1, 2],  # the worked example's inputs
    "The cells below run **your**": lambda ex: [2],  # request 2 of the overload
    "In *preemption and resume*": nb02_observe,
    "The urgent request waits": nb02_bypass_and_overload,
    "Read the table and the plot together": nb02_policy_prose,
    "Every rule here is a simplification": lambda ex: [0, 128],  # vLLM resets num_computed_tokens to 0; SGLang's 128
}

# ---------------------------------------------------------------- 03_batch_scheduling
class ClaimFails(AssertionError):
    """A trend the prose states (rises, falls, hardly moves) that the executed output does not show."""


def holds(condition: bool, claim: str) -> None:
    if not condition:
        raise ClaimFails(claim)


def printed_list(ex, marker: str, label: str) -> list:
    """The list printed after `label` in a code cell's output, e.g. 'tokens per step: [1024, 1024, 354]'."""
    return eval(re.search(re.escape(label) + r"\s*(\[[^\]]*\])", ex.text(marker)).group(1))  # a list of literals


def column(table: dict, name: str) -> dict:
    return {key: row[name] for key, row in table.items()}


def nb03_step2(ex):
    budget, threshold, max_seqs, prompt = 1024, 400, 16, 800  # the worked example's inputs (vLLM's test)
    steps = printed_list(ex, "worked = LLMEngine", "tokens per step:")  # the student's schedule(), executed
    rest = budget - 2 * threshold
    holds(steps == [budget, budget, 2 + prompt - 2 * rest], "the worked example's steps are what your schedule() gives")
    return [0, 1, budget, threshold, max_seqs, 0, 1, 2, prompt,  # threshold 0 = off; 1 token per decode; requests 0-2
            0, 0, threshold, 1, threshold, 2, budget, 2 * threshold, rest, steps[0],
            1, 0, threshold, 1, threshold, 2, rest, steps[1],
            2, 0, 1, 1, 1, 2, prompt, 2 * rest, prompt - 2 * rest, steps[2]]


def nb03_step3(ex):
    needs = [int(n) for n in re.findall(r"needs (\d+) blocks", ex.text("for computed, new in"))]  # 32, 33, 34, 48, 49 tokens
    block = 16
    holds(needs[:2] == [-(-32 // block), -(-33 // block)], "the worked example's block counts are the printed ones")
    return [block, 0, 5, 32, 32, block, needs[0], 33, 33, 33, block, needs[1], 34, 3 * block]  # vLLM's 6 blocks = 5 usable


def nb03_step4(ex):
    used = printed_list(ex, "lo_hi = [", "blocks in use:")  # the worked example on the student's engine, executed
    holds(used == [2, 5, 3], "the worked example's blocks (2, 5, 3) are what your engine gives")
    return [0, 16, 5, 5, 32, 33, used[0], 0, 32, 2, 33, 33]  # reset to 0; block 16, 5 blocks; lo 5/32; hi 0/32


def nb03_step5(ex):
    tm = TimeModel()
    a_ms, b_ms = tm.step_overhead_us / 1000, tm.per_token_us / 1000
    holds(16 / 2.0 == a_ms, "16 GB at 2.0 TB/s is the 8 ms fixed cost")
    holds(round(2 * 8e9 / (312e12 / 2) * 1e3, 1) == b_ms, "2 x 8e9 FLOP at half of 312 TFLOP/s is the per-token cost")
    p50 = float(re.search(r"p50 of \[10, 20, 30, 40\]: ([\d.]+)", ex.text("numpy-style p50")).group(1))
    return [8, "2.0", 312, 16, a_ms, 2, 8, 10, b_ms,  # 8B in bf16 on an A100: datasheet figures
            0, 90, 1, 100,  # TPOT 0 for a one-token request; DistServe's 90 %; the rank (n - 1) * q / 100
            0, 100, "000", 4, 400, "000", 100, 400, 100, 3, 100, 400,  # the worked request
            10, 20, 30, 40, 1.5, 20, 0.5, 10, p50]


def nb03_experiments(ex):
    slo = eval(re.search(r"SLO = (\{.*?\})", ex._cell("SLO = {").source).group(1))
    defaults = inspect.signature(poisson_requests).parameters
    return [defaults["prompt_median"].default, defaults["output_median"].default, slo["ttft_slo_ms"], slo["tpot_slo_ms"]]


def nb03_load_sweep(ex):
    t = ex.table('sweep[["throughput_tok_s"')
    thr, p50, p99, good, att = (column(t, c) for c in ("throughput_tok_s", "p50_ttft_ms", "p99_ttft_ms", "goodput_req_s", "slo_attainment"))
    rates = sorted(t)
    knee = int(re.search(r"DistServe goodput: (\d+)", ex.text('sweep[["throughput_tok_s"')).group(1))
    holds(knee == max(r for r in rates if att[r] >= 0.9), "DistServe's goodput is the highest rate with 90% attainment")
    below, above = [r for r in rates if r <= knee], [r for r in rates if r > knee]
    holds(all(thr[a] < thr[b] for a, b in zip(below, below[1:])), "below the knee throughput follows the rate")
    holds(max(thr[r] for r in above) - min(thr[r] for r in above) < 0.05 * max(thr[r] for r in above), "past it, throughput stops growing")
    holds(all(p50[a] < p50[b] for a, b in zip(above, above[1:])), "past it, p50 TTFT keeps rising")
    before = below[-2]
    holds(p99[knee] / p99[before] > p50[knee] / p50[before], "the p99 turns before the p50")
    peak = max(rates, key=lambda r: good[r])
    holds(peak == knee, "request_goodput peaks at the knee")
    per_rate = {r: thr[r] / r for r in below}  # tokens/s per request/s: the same requests at every rate, the drain counts
    holds(all(per_rate[a] > per_rate[b] for a, b in zip(below, below[1:])), "throughput grows less than the rate")
    return [knee, thr[rates[0]], thr[knee], round(per_rate[rates[0]]), rates[0], round(per_rate[knee]), knee,
            min(p50[r] for r in below), max(p50[r] for r in below),
            *[thr[r] for r in above], *above, *[p50[r] for r in above],
            p99[before], before, p99[knee], knee, p50[knee],
            good[peak], peak, good[rates[-1]], rates[-1], knee, 90,
            1024, 4096, 5, 4096]  # the budget experiment's inputs: prompt median and cap, rate, blocks


def nb03_budget_and_storm(ex):
    t = ex.table('tradeoff[["p50_ttft_ms"')
    budgets = sorted(t)
    p50, p99ttft, p99tpot, thr = (column(t, c) for c in ("p50_ttft_ms", "p99_ttft_ms", "p99_tpot_ms", "throughput_tok_s"))
    top = max(budgets, key=lambda b: p99tpot[b])
    rising = [b for b in budgets if b <= top]
    holds(all(p50[a] > p50[b] for a, b in zip(budgets, budgets[1:])), "a larger budget lowers p50 TTFT, at every step")
    holds(all(p99tpot[a] < p99tpot[b] for a, b in zip(rising, rising[1:])), "p99 TPOT rises up to the peak budget")
    last = budgets[-1]
    holds(p99tpot[last] < p99tpot[top] and p99ttft[last] > p99ttft[top], "at the largest budget the pattern breaks")
    holds(max(thr.values()) - min(thr.values()) < 0.05 * max(thr.values()), "throughput hardly moves")
    return [budgets[0], top, p50[budgets[0]], p50[top], p99tpot[budgets[0]], p99tpot[top], last, p50[last], p99tpot[last],
            p99ttft[top], p99ttft[last], 200, min(thr.values()), max(thr.values()),
            8, 128, 256, 512 + 512, 64, 1024, 16]  # the storm's inputs: rate, medians, max length, pools, block size


def nb03_storm(ex):
    s, c = ex.table('storm[["num_preemptions"'), ex.table("cause.round(")
    pools = sorted(s)
    preempting = [n for n in pools if s[n]["num_preemptions"] > 0]
    counts = [s[n]["num_preemptions"] for n in preempting]
    small, large = pools[0], pools[-1]
    holds(preempting == pools[:-1] and s[large]["num_preemptions"] == 0, "preemptions at every pool but the largest")
    holds(max(counts) < 1.2 * min(counts), "the number of preemptions hardly depends on the pool")
    holds(all(c[a]["requests_per_step"] < c[b]["requests_per_step"] for a, b in zip(pools, pools[1:])), "the batch grows with the pool")
    holds(all(s[a]["throughput_tok_s"] < s[b]["throughput_tok_s"] for a, b in zip(pools, pools[1:])), "throughput falls with the batch")
    holds(c[small]["recompute_share"] < 0.05, "recompute is the secondary cost")
    shares = [c[n]["recompute_share"] for n in preempting]
    holds(all(a < b for a, b in zip(shares, shares[1:])), "the recompute share grows with the pool")
    last, block, tm = preempting[-1], 16, TimeModel()  # the largest pool that still preempts
    return [min(counts), max(counts), preempting[0], preempting[-1], large,
            s[preempting[0]]["num_recomputed_tokens"], s[preempting[-1]]["num_recomputed_tokens"],
            small, block, small * block, small * block, 128, 256, round(small * block / (128 + 256), 1),
            c[small]["requests_per_step"], c[large]["requests_per_step"], large, tm.step_overhead_us // 1000,
            s[small]["throughput_tok_s"], s[large]["throughput_tok_s"], small, c[small]["recompute_s"], c[small]["run_s"],
            round(100 * c[small]["recompute_share"], 1), last, c[last]["recompute_s"], c[last]["run_s"],
            round(100 * c[last]["recompute_share"], 1), s[small]["p99_tpot_ms"], small, s[large]["p99_tpot_ms"], large]


def nb03_step6(ex):
    shares = [round(100 * share) for share in CLASS_SHARES]
    return [2 + len(range(0, 34, 3)),  # notebook 02's overload: 2 requests, then one every 3 steps up to step 33
            SLO_EXERCISE["rate_req_s"], 0, shares[0], 1, shares[1], 2, shares[2],
            SLO_EXERCISE["class0_p99_ttft_ms"], SLO_EXERCISE["max_wait_ms"] // 1000, SLO_EXERCISE["num_requests"],
            *SLO_EXERCISE["seeds"], SLO_EXERCISE["num_requests"]]


def nb03_baselines(ex):
    rows = {name: (float(p99), float(wait)) for name, p99, wait in
            re.findall(r"^(.+?): class-0 p99 TTFT (\d+) ms, max wait ([\d.]+) s", ex.text("baselines = [slo_row"), re.M)}
    (fcfs, _), (_, starve), (aging, _) = rows["fcfs"], rows["priority"], rows["aging, 1 s per level"]
    limit = SLO_EXERCISE["class0_p99_ttft_ms"]
    holds(fcfs > limit and starve > SLO_EXERCISE["max_wait_ms"] / 1000 and aging > limit, "each baseline misses a part")
    holds(abs(aging - fcfs) < abs(aging - limit), "aging at 1 s is closer to FCFS than to the target")
    # TODO 5's hint: on trace 6, aging at 3 s and 4 s per level meets both parts, 3.5 s does not; trace 17 no policy
    # tried meets (both checked on the fast engine by tests/policybench/test_policybench.py::test_slo_traces_named_in_todo_5)
    return [fcfs, limit, starve, aging, *SLO_EXERCISE["seeds"], SLO_EXERCISE["rate_req_s"], 6, 3, 4, 3.5,
            len(SLO_EXERCISE["seeds"]), 1, 1,  # about 1 s per trace; 1 point each for the shown and the held-out traces
            *SLO_EXERCISE["seeds"], 17]  # the held-out traces are made as traces 0, 1 and 2 are


def traces_used_before_the_explanations(nb) -> set[int]:
    """The exercise's traces the notebook runs or names before its explanations: exercise_trace(n), slo_row(..., n),
    and 'trace n' in its text."""
    end = next(i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and c.source.startswith("## Explanations"))
    found = set()
    for cell in nb.cells[:end]:
        pattern = r"exercise_trace\((\d+)\)|slo_row\([^()]*?, (\d+)" if cell.cell_type == "code" else r"\btraces? (\d+)"
        found |= {int(n) for match in re.findall(pattern, cell.source) for n in (match if isinstance(match, tuple) else (match,)) if n}
    return found


def nb03_explanations(ex):
    from grader.assignment import load
    rate = int(re.search(r"seconds_per_level = (\d+)", ex._cell("def slo_key").source).group(1))
    t = ex.table("aging_rates = [")
    (trace,) = sorted(t)  # one trace, in the notebook; the four are the policy benchmark's (below)
    row = {float(col[:-2]): verdict for col, verdict in t[trace].items()}
    fast, slow = min(row), max(row)
    suite = load("03_batch_scheduling").suite
    unseen = int(re.search(r"^unseen = (\d+)", ex._cell("aging_rates = [").source, re.M).group(1))
    holds(unseen not in {*SLO_EXERCISE["seeds"], *traces_used_before_the_explanations(ex.nb)},
          "a trace the notebook has not used yet")
    holds(unseen not in suite.PUBLIC_HELD_OUT, "not a held-out trace of the grader's")
    holds(trace in (f"trace {unseen}", f"轨迹 {unseen}"), "the table names the trace the cell runs")
    holds(row[fast] == "misses p99" and row[rate] == "meets" and row[slow] == "misses wait",
          "too fast misses the interactive tail, the reference rate meets both parts, too slow misses the wait")
    # The four-trace claims (whole seconds from 3 to 7 meet all four, 2.5 s misses trace 5 only, 8 s misses trace 0 by a
    # wait, 1 s misses three and a minute two) are checked on the fast engine by
    # tests/policybench/test_policybench.py::test_slo_exercise_separates_policies.
    return [0, rate, rate, 2 * rate, 2 * rate, rate, unseen, fast, rate, slow, *SLO_EXERCISE["seeds"], unseen, 3, 7,
            fast, *SLO_EXERCISE["seeds"], unseen, slow, 0, SLO_EXERCISE["max_wait_ms"] // 1000, 1]


NB03 = {
    "**Glossary | 术语表.**": lambda ex: [],
    "## Step 1: a sequence is two counters": lambda ex: [800, 400],  # Step 2's worked example, in words
    "## Step 2: one step's batch": nb03_step2,
    "### TODO 1 · `schedule`": lambda ex: [3, 3, 0, 0, 400, 800],  # "TODO 2 and 3" twice; step 0; request 0's 400, not 800
    "## Step 3: paged KV blocks": nb03_step3,
    # 0 if negative; the hidden tests' block sizes 1 to 16; "TODO 1 and 3"; block_size 4: ceil(5/4) = 2, a third block after 2 x 4
    "### TODO 2 · block accounting": lambda ex: [0, 1, 16, 3, 5, 2, 8],
    "## Step 4: preemption by recompute": nb03_step4,
    "### TODO 3 · `_make_room`": lambda ex: [0, 2, 1, 3],  # reset to 0; "TODO 1 and 2"; request 1 grows, request 3 is the victim
    "### TODO 4 · the metrics": lambda ex: [0, 100],  # q is between 0 and 100
    "## Observe: the steps of your engine": lambda ex: [12 * 5, 40, 16],  # small_workload: 12 requests 5 ms apart
    "Read the two charts together.": nb03_step5,
    "## Experiments | 实验": nb03_experiments,
    "### Load sweep: latency against throughput": lambda ex: [1024, 16, 300],  # the sweep's inputs
    "Up to 14 requests/s the engine keeps up": nb03_load_sweep,
    "From 256 to 2048 tokens, a larger budget": nb03_budget_and_storm,
    "With a small pool, admitted requests keep growing": nb03_storm,
    "## Step 6: a policy for an SLO": nb03_step6,
    "Read the chart against the green corner.": nb03_baselines,
    "Aging trades the two parts of the SLO": lambda ex: [10],  # 10^4 requests per run in the policy benchmark
    "## Model vs real engine": lambda ex: [],
    "## Explanations of TODO 1–5": nb03_explanations,
}


SPECS = {"01_continuous_batching": NB01, "02_decode_scheduling": NB02, "03_batch_scheduling": NB03}


def _norm(value) -> str:
    if isinstance(value, Fraction):
        value = value.numerator if value.denominator == 1 else float(value)
    if isinstance(value, float):
        return str(int(value)) if value == int(value) else f"{value:g}"
    return str(abs(value)) if isinstance(value, int) else str(value)  # the prose writes signs as words or "−"


def problems(nb, spec: dict) -> list[str]:
    """Each markdown cell's numbers against its spec; a cell without a spec may quote no number."""
    ex, found = Executed(nb), []
    used = dict.fromkeys(spec, 0)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        numbers = prose_numbers(cell.source)
        markers = [m for m in spec if m in cell.source]
        for m in markers:
            used[m] += 1
        if len(markers) > 1:
            found.append(f"cell {index}: several specs match: {markers}")
        elif not markers:
            if numbers:
                found.append(f"cell {index} quotes numbers no spec pins: {numbers} in {cell.source[:80]!r}")
        else:
            try:
                expected = [_norm(v) for v in spec[markers[0]](ex)]
            except ClaimFails as claim:
                found.append(f"cell {index} ({markers[0]!r}): the prose says {claim}, the output does not show it")
                continue
            if numbers != expected:
                at = next((i for i, (a, b) in enumerate(zip(numbers, expected)) if a != b), min(len(numbers), len(expected)))
                found.append(f"cell {index} ({markers[0]!r}): number #{at + 1} of the prose is "
                             f"{numbers[at] if at < len(numbers) else 'missing'}, the output gives "
                             f"{expected[at] if at < len(expected) else 'nothing'} (prose {numbers}, expected {expected})")
    found += [f"spec {m!r} matches {n} cells, not 1" for m, n in used.items() if n != 1]
    return found


def solved(name):
    return nbformat.read(ROOT / "solutions" / f"{name}.ipynb", as_version=4)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_number_in_the_prose_matches_the_executed_output(name):
    assert problems(solved(name), SPECS[name]) == []


@pytest.mark.parametrize("name, marker, right, wrong", [
    ("02_decode_scheduling", "Read the table and the plot together", "40 and 37 steps", "41 and 37 steps"),
    ("02_decode_scheduling", "The urgent request waits", "waits 7, 15 and 31", "waits 7, 15 and 30"),
    ("01_continuous_batching", "Both serve 10 tokens", "= 4\nhatched", "= 3\nhatched"),
    ("01_continuous_batching", "Static batching needs **13** ticks", "≈ 65%", "≈ 66%"),
    ("03_batch_scheduling", "Up to 14 requests/s the engine keeps up", "647 ms at 14", "648 ms at 14"),
    ("03_batch_scheduling", "With a small pool, admitted requests", "6.2 s of a 199.4 s run", "6.2 s of a 200 s run"),
    ("03_batch_scheduling", "With a small pool, admitted requests", "35.9 s run (12.1 %)", "35.9 s run (3.1 %)"),
    ("03_batch_scheduling", "Up to 14 requests/s the engine keeps up", "per request/s at 2 requests/s, 75", "per request/s at 2 requests/s, 83"),
    ("03_batch_scheduling", "## Explanations of TODO 1–5", "from 3 to 7 meets", "from 3 to 8 meets"),
])
def test_a_wrong_number_in_the_prose_is_caught(name, marker, right, wrong):
    nb = solved(name)
    cell = next(c for c in nb.cells if c.cell_type == "markdown" and marker in c.source)
    assert right in cell.source
    cell.source = cell.source.replace(right, wrong)
    found = problems(nb, SPECS[name])
    assert len(found) == 1 and marker in found[0], found


def test_a_new_unpinned_number_is_caught():
    nb = solved("02_decode_scheduling")
    nb.cells.append(nbformat.v4.new_markdown_cell("A new claim: the medium request waits 12 steps."))
    assert problems(nb, NB02) == ["cell %d quotes numbers no spec pins: ['12'] in 'A new claim: the medium "
                                  "request waits 12 steps.'" % (len(nb.cells) - 1)]


def test_a_changed_output_is_caught():
    """The other direction: the same prose against an output that changed."""
    nb = solved("01_continuous_batching")
    cell = next(c for c in nb.cells if c.cell_type == "code" and "describe(a_to_e)" in c.source)
    shown = next(o for o in cell.outputs if "text/html" in o.get("data", {}))  # describe's table: static's makespan
    shown["data"]["text/html"] = re.sub(r"(<th>static</th>\s*<td>)13<", r"\g<1>14<", shown["data"]["text/html"])
    assert any("Static batching needs **13** ticks" in p for p in problems(nb, NB01))


def test_a_trend_the_output_does_not_show_is_caught():
    """Trends are claims too: a budget run whose p99 TPOT kept rising at 4096 contradicts the prose."""
    nb = solved("03_batch_scheduling")
    cell = next(c for c in nb.cells if c.cell_type == "code" and 'tradeoff[["p50_ttft_ms"' in c.source)
    html = next(o for o in cell.outputs if "text/html" in o.get("data", {}))
    html["data"]["text/html"] = html["data"]["text/html"].replace("<td>73.1</td>", "<td>99.9</td>")
    found = problems(nb, NB03)
    assert len(found) == 1 and "at the largest budget the pattern breaks" in found[0], found


def test_prose_numbers_skips_labels_code_and_headings():
    text = "### TODO 3 · 2×\n1. **phase** (notebook\n02) in `x = 5` and Step 2: waits 32 and 20, 1,000 users, 0.5 left, p99 of class-0"
    assert prose_numbers(text) == ["32", "20", "1,000", "0.5"]
