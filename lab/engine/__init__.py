"""Engine-step model for notebook 03: Sequence, BlockManager, Scheduler, the step loop and its time model.

Layout after nano-vllm (`nanovllm/engine/`): one file per role. The rules cite vLLM V1's
`vllm/v1/core/sched/scheduler.py`. The methods the notebook's TODOs write are stubs here
(`@todo`), so this package never carries their answers.
"""
from .block_manager import BlockManagerBase
from .engine import EngineRun, LLMEngine, TimeModel, as_sequence
from .scheduler import POLICIES, ScheduledBatch, SchedulerBase, checked_key, serving_order
from .sequence import RequestInfo, Sequence, SequenceStatus
from .slo import SLO_EXERCISE, exercise_trace, slo_metrics, slo_misses
from .workloads import make_trace, poisson_requests

__all__ = ["Sequence", "SequenceStatus", "RequestInfo", "checked_key", "serving_order", "SLO_EXERCISE", "exercise_trace", "slo_metrics",
           "slo_misses", "plot_slo", "make_trace", "BlockManagerBase", "SchedulerBase", "ScheduledBatch", "POLICIES",
           "LLMEngine", "EngineRun", "TimeModel", "as_sequence", "poisson_requests",
           "plot_batch_composition", "plot_kv_occupancy"]


def __getattr__(name: str):
    if name in ("plot_batch_composition", "plot_kv_occupancy", "plot_slo"):
        from . import plots
        return getattr(plots, name)
    raise AttributeError(f"module 'lab.engine' has no attribute {name!r}")
