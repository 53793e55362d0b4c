"""vLLM V1's scheduler tests, ported as facts to the notebook-03 engine (the reference answers).

Each test names the vLLM test it comes from (tests/v1/core/test_scheduler.py in vllm-project/vllm,
read in November 2026) and asserts the schedule that test asserts, in this model's terms:
integer seq ids instead of strings, and no null block (vLLM's num_blocks=N is N-1 usable blocks
here). Where the model deliberately differs, the test says so and checks our documented behaviour.
vLLM's code is not copied: only the scenarios and their expected schedules.

Each docstring says whether the port asserts the same as the original, more (exact token counts where
vLLM counts requests), or less (vLLM's prefix-caching variants and request bookkeeping, which this model
does not have). Two tests at the end are not vLLM tests; they say so.
"""
import pytest

from grader import reference
from lab.engine import Sequence, SequenceStatus

NS = reference.namespace("03_batch_scheduling")
Scheduler = NS["Scheduler"]


def new_scheduler(**config):
    return Scheduler(**config)


def add(sched, seq_id, prompt, max_tokens=16, priority=0, arrival_us=0):
    seq = Sequence(seq_id=seq_id, num_prompt_tokens=prompt, max_tokens=max_tokens, priority=priority, arrival_us=arrival_us)
    sched.add(seq)
    return seq


class Stepper:
    """schedule() then update_from_batch(), as vLLM's tests pair schedule() with update_from_output()."""

    def __init__(self, sched):
        self.sched, self.step = sched, 0

    def schedule(self):
        return self.sched.schedule()

    def update(self, batch):
        self.sched.update_from_batch(batch, self.step, self.step + 1)
        self.step += 1

    def __call__(self):
        batch = self.schedule()
        self.update(batch)
        return batch


def test_schedule():
    """vLLM test_schedule: 10 short requests are all scheduled in one step, whole, and all run in order.

    Same facts; less: vLLM also runs it with prefix caching and prompt logprobs, which this model lacks."""
    sched = new_scheduler()
    for i in range(10):
        add(sched, i, 10)
    batch = sched.schedule()
    assert batch.num_scheduled_tokens == {i: 10 for i in range(10)}
    assert not sched.waiting and [s.seq_id for s in sched.running] == list(range(10))


def test_schedule_concurrent_partial_requests():
    """vLLM test_schedule_concurrent_partial_requests: budget 1024, threshold 400, three 800-token prompts.

    The same three schedules; less: vLLM also counts new and cached requests and runs with and without
    prefix caching."""
    sched = new_scheduler(max_num_batched_tokens=1024, long_prefill_token_threshold=400)
    for i in range(3):
        add(sched, i, 800)
    run = Stepper(sched)
    assert run().num_scheduled_tokens == {0: 400, 1: 400, 2: 224}
    assert run().num_scheduled_tokens == {0: 400, 1: 400, 2: 224}
    assert run().num_scheduled_tokens == {0: 1, 1: 1, 2: 800 - 224 - 224}
    assert len(sched.running) == 3


@pytest.mark.parametrize("chunked, expected", [(True, {1: 800, 2: 224}), (False, {1: 800})])
def test_schedule_order(chunked, expected):
    """vLLM test_schedule_order: two long and two short prompts, budget 1024, max_num_seqs 3.

    With chunked prefill the second long prompt is chunked (2 new requests); without it, the short
    requests are not scheduled ahead of the long one that does not fit (1 new request). More: vLLM asserts
    only the number of new requests; the port asserts each one's tokens."""
    sched = new_scheduler(max_num_batched_tokens=1024, max_num_seqs=3, enable_chunked_prefill=chunked)
    for seq_id, prompt in ((1, 800), (2, 800), (3, 10), (4, 10)):
        add(sched, seq_id, prompt)
    assert sched.schedule().num_scheduled_tokens == expected


@pytest.mark.parametrize("test, priorities, arrivals, order", [
    ("test_priority_scheduling_basic_ordering", [2, 0, 1], [1, 2, 3], [1, 2, 0]),
    ("test_priority_scheduling_arrival_time_tiebreaker", [1, 1, 1], [3, 1, 2], [1, 2, 0]),
    ("test_priority_scheduling_mixed_priority_and_arrival", [2, 1, 1, 0], [1, 3, 2, 4], [3, 2, 1, 0]),
    ("test_priority_scheduling_fcfs_fallback", [1, 1, 1, 1], [4, 1, 3, 2], [1, 3, 2, 0]),
])
def test_priority_admission_order(test, priorities, arrivals, order):
    """vLLM's priority tests: all fit, and they are admitted by (priority, arrival time). Same assertion."""
    sched = new_scheduler(policy="priority")
    for i, (p, a) in enumerate(zip(priorities, arrivals)):
        add(sched, i, 10, priority=p, arrival_us=a)
    assert list(sched.schedule().num_scheduled_tokens) == order, test


@pytest.mark.parametrize("test, priorities, arrivals, max_num_seqs, scheduled, waiting", [
    ("test_priority_scheduling_preemption_victim_selection", [3, 2, 0], [1, 2, 3], 1, [2], [1, 0]),
    ("test_priority_scheduling_equal_priority_preemption", [2, 2, 2], [3, 1, 2], 1, [1], [2, 0]),
    ("test_priority_scheduling_waiting_queue_order", [3, 1, 2, 0], [1, 2, 3, 4], 1, [3], [1, 2, 0]),
    ("test_priority_scheduling_with_limited_slots", [3, 1, 2, 0], [1, 2, 3, 4], 2, [3, 1], [2, 0]),
])
def test_priority_waiting_queue_after_max_num_seqs(test, priorities, arrivals, max_num_seqs, scheduled, waiting):
    """vLLM's priority tests with max_num_seqs: the most urgent run, the rest wait in priority order.

    Despite their names, vLLM's *_preemption_victim_selection and *_equal_priority_preemption preempt
    nobody: like these ports they check admission and queue order under max_num_seqs=1. Same assertions,
    except with_limited_slots, where vLLM checks that 3 and 1 run and the port also checks their order."""
    sched = new_scheduler(policy="priority", max_num_seqs=max_num_seqs)
    for i, (p, a) in enumerate(zip(priorities, arrivals)):
        add(sched, i, 10, priority=p, arrival_us=a)
    assert list(sched.schedule().num_scheduled_tokens) == scheduled, test
    assert [s.seq_id for s in sched.waiting_order()] == waiting, test


def test_priority_scheduling_heap_property():
    """vLLM test_priority_scheduling_heap_property: one at a time, requests finish in priority order.

    vLLM finishes each request by hand (finish_requests); here each has max_tokens=1 and finishes
    in its own prefill step. Same assertion."""
    priorities = [5, 1, 8, 3, 2, 7, 4, 6]
    sched = new_scheduler(policy="priority", max_num_seqs=1)
    for i, p in enumerate(priorities):
        add(sched, i, 10, max_tokens=1, priority=p, arrival_us=i)
    run, finished = Stepper(sched), []
    while sched.has_unfinished():
        run()
        finished = [s.priority for s in sched.finished]
    assert finished == sorted(priorities)


def test_priority_scheduling_preemption():
    """vLLM test_priority_scheduling_preemption: block 16, 5 usable blocks (vLLM: num_blocks=6 with the null block).

    lo (priority 5, 32 tokens) runs; hi (priority 0, 32 tokens) arrives and is admitted while lo gets its
    third block: the pool is full. Next step hi needs a third block; lo, the largest (priority, arrival),
    is preempted although it was scheduled first in that step, and hi keeps running. More: vLLM asserts
    that lo is preempted and hi runs; the port also asserts every step's tokens, the free blocks and lo's
    33 recomputed tokens."""
    sched = new_scheduler(policy="priority", num_blocks=5, block_size=16, max_num_seqs=3, max_num_batched_tokens=200)
    run = Stepper(sched)
    lo = add(sched, 1, 32, priority=5, arrival_us=1)
    assert run().num_scheduled_tokens == {1: 32}
    assert (lo.num_tokens, lo.num_blocks) == (33, 2)
    hi = add(sched, 2, 32, priority=0, arrival_us=2)
    assert run().num_scheduled_tokens == {1: 1, 2: 32}
    assert sched.block_manager.num_free_blocks == 0 and len(sched.running) == 2
    batch = run.schedule()
    assert lo.status is SequenceStatus.PREEMPTED and batch.preempted_seq_ids == [1]
    assert sched.running == [hi] and batch.num_scheduled_tokens == {2: 1}
    assert lo.num_recomputed_tokens == 33 and lo.num_computed_tokens == 0


def test_priority_scheduling_no_preemption_when_space_available():
    """vLLM test_priority_scheduling_no_preemption_when_space_available: a high-priority arrival that fits preempts nobody.

    More: vLLM asserts one new request and three running; the port also asserts each request's tokens."""
    sched = new_scheduler(policy="priority", max_num_seqs=3, max_num_batched_tokens=200)
    run = Stepper(sched)
    add(sched, 1, 30, priority=5, arrival_us=1)
    add(sched, 2, 30, priority=5, arrival_us=2)
    run()
    add(sched, 3, 30, priority=0, arrival_us=3)
    batch = run.schedule()
    assert batch.num_scheduled_tokens == {1: 1, 2: 1, 3: 30} and not batch.preempted_seq_ids
    assert len(sched.running) == 3 and not sched.waiting


def test_priority_scheduling_preemption_and_resumption_when_out_of_kv():
    """vLLM test_priority_scheduling_preemption_and_resumption_when_out_of_kv: 4 usable blocks of 16.

    low (30 tokens) and high (32 tokens) fill the pool; when high needs a third block, low is preempted
    and the step schedules high alone. vLLM then finishes high by hand; here high has max_tokens=2 and
    finishes in that step. low resumes with its 30 prompt tokens plus 2 generated tokens, recomputed.
    About the same: vLLM asserts the resumed request's 32 token ids, the port its 32 recomputed tokens
    (this model has no token ids)."""
    sched = new_scheduler(policy="priority", num_blocks=4, block_size=16, max_num_seqs=2, max_num_batched_tokens=200)
    run = Stepper(sched)
    low = add(sched, 0, 30, priority=1, arrival_us=0)
    run()
    high = add(sched, 1, 32, max_tokens=2, priority=0, arrival_us=1)
    assert run().num_scheduled_tokens == {0: 1, 1: 32}
    assert sched.block_manager.num_free_blocks == 0
    batch = run()
    assert batch.num_scheduled_tokens == {1: 1} and batch.preempted_seq_ids == [0]
    assert low.status is SequenceStatus.PREEMPTED and high.is_finished
    batch = run()
    assert batch.num_scheduled_tokens == {0: 32}  # 30 prompt + 2 decoded tokens, prefilled again
    assert low.status is SequenceStatus.RUNNING and low.num_output_tokens == 3


def test_fcfs_preempts_the_last_running_request():
    """Not a vLLM test: the FCFS victim rule from schedule() in vllm/v1/core/sched/scheduler.py
    (self.running.pop(), as of November 2026), and no admission in a step that preempted."""
    sched = new_scheduler(num_blocks=3, block_size=4, max_num_batched_tokens=100)
    run = Stepper(sched)
    a, b, c = add(sched, 1, 4, max_tokens=8), add(sched, 2, 4, max_tokens=8), add(sched, 3, 4, max_tokens=8)
    run()
    assert sched.block_manager.num_free_blocks == 0
    add(sched, 4, 1, max_tokens=1)
    batch = run()
    # a grows into a second block: c (last admitted) is preempted and a takes its block. b needs a second
    # block too and is now the last running request: it is its own victim, and the pass stops.
    assert batch.preempted_seq_ids == [3, 2] and batch.num_scheduled_tokens == {1: 1}
    assert [s.seq_id for s in sched.waiting_order()] == [2, 3, 4]  # each victim went to the front; 4 was not admitted
    assert (b.num_recomputed_tokens, c.num_recomputed_tokens, a.num_preemptions) == (4, 4, 0)


def test_a_waiting_request_that_does_not_fit_blocks_the_smaller_one_behind_it():
    """Not a vLLM test: vLLM V1 (schedule(), `break` when allocate_slots fails) and nano-vllm
    (Scheduler.schedule) stop at the first waiting request that does not fit (head-of-line blocking)."""
    sched = new_scheduler(num_blocks=6, block_size=4, max_num_batched_tokens=100)
    run = Stepper(sched)
    add(sched, 1, 14, max_tokens=8)
    run()
    add(sched, 2, 12, max_tokens=4)
    add(sched, 3, 2, max_tokens=4)
    assert run().num_scheduled_tokens == {1: 1}
    assert [s.seq_id for s in sched.waiting] == [2, 3]


def test_model_difference_synchronous_steps():
    """Deliberate difference: vLLM's test_preempt_during_execution needs two batches in flight (pipeline
    parallelism), which this synchronous model does not have. Its facts in our terms: 10 usable blocks of 16,
    two 80-token prompts, budget 100. The second prompt is chunked into the first step (2 blocks); next step
    the first request's decode takes a sixth block and the second chunk needs 3 more with 2 free, so the
    second request, last in the running list, is its own victim: preempted, its 20 tokens recomputed later."""
    sched = new_scheduler(num_blocks=10, block_size=16, max_num_batched_tokens=100)
    first, second = add(sched, 0, 80), add(sched, 1, 80)
    run = Stepper(sched)
    assert run().num_scheduled_tokens == {0: 80, 1: 20}
    batch = run()
    assert batch.num_scheduled_tokens == {0: 1} and batch.preempted_seq_ids == [1]
    assert (second.status, second.num_recomputed_tokens, first.num_blocks) == (SequenceStatus.PREEMPTED, 20, 6)
