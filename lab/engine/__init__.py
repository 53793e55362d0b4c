"""Engine-step model for notebook 03: Sequence, BlockManager, Scheduler, the step loop and its time model.

Layout after nano-vllm (`nanovllm/engine/`): one file per role. The rules cite vLLM V1's
`vllm/v1/core/sched/scheduler.py`. The methods the notebook's TODOs write are stubs here
(`@todo`), so this package never carries their answers.
"""
from .block_manager import BlockManagerBase
from .engine import EngineRun, LLMEngine, TimeModel, as_sequence
from .scheduler import POLICIES, ScheduledBatch, SchedulerBase
from .sequence import Sequence, SequenceStatus
from .workloads import poisson_requests

__all__ = ["Sequence", "SequenceStatus", "BlockManagerBase", "SchedulerBase", "ScheduledBatch", "POLICIES",
           "LLMEngine", "EngineRun", "TimeModel", "as_sequence", "poisson_requests",
           "plot_batch_composition", "plot_kv_occupancy"]


def __getattr__(name: str):
    if name in ("plot_batch_composition", "plot_kv_occupancy"):
        from . import plots
        return getattr(plots, name)
    raise AttributeError(f"module 'lab.engine' has no attribute {name!r}")
