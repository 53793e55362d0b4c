"""Paged KV blocks (nano-vllm's BlockManager; vLLM V1's `kv_cache_manager.py` `allocate_slots` / `free`).

A sequence that will have computed `n` tokens needs ceil(n / block_size) blocks. Blocks are
taken as a sequence grows and all returned when it finishes or is preempted. The notebook's
TODO 2 writes `num_blocks_needed`, `can_append`, `append` and `deallocate`.

Simplifications, on purpose: no prefix caching (no shared, ref-counted blocks), no null block
(vLLM reserves block 0, so vLLM's `num_blocks=6` is 5 usable blocks here), no watermark.
"""
from __future__ import annotations

from collections import deque

from ..decode import _require_int, todo
from ..i18n import tr
from .sequence import Sequence


class BlockManagerBase:
    """A pool of `num_blocks` KV blocks of `block_size` tokens each."""

    def __init__(self, num_blocks: int, block_size: int = 16):
        _require_int("num_blocks", num_blocks, minimum=1)
        _require_int("block_size", block_size, minimum=1)
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.free_block_ids: deque[int] = deque(range(num_blocks))

    @property
    def num_free_blocks(self) -> int:
        return len(self.free_block_ids)

    @property
    def num_used_blocks(self) -> int:
        return self.num_blocks - len(self.free_block_ids)

    @todo("TODO 2")
    def num_blocks_needed(self, seq: Sequence, num_new_tokens: int) -> int:
        """Extra blocks seq needs to compute num_new_tokens more tokens."""
        raise NotImplementedError()

    @todo("TODO 2")
    def can_append(self, seq: Sequence, num_new_tokens: int) -> bool:
        """Whether the free blocks cover what seq needs for num_new_tokens more tokens."""
        raise NotImplementedError()

    @todo("TODO 2")
    def append(self, seq: Sequence, num_new_tokens: int) -> None:
        """Give seq the blocks it needs for num_new_tokens more tokens."""
        raise NotImplementedError()

    @todo("TODO 2")
    def deallocate(self, seq: Sequence) -> None:
        """Return all of seq's blocks to the pool."""
        raise NotImplementedError()

    def can_allocate(self, seq: Sequence, num_new_tokens: int) -> bool:
        """Admission check for a waiting sequence (it holds no blocks yet)."""
        return not seq.block_table and self.can_append(seq, num_new_tokens)

    def allocate(self, seq: Sequence, num_new_tokens: int) -> None:
        """Admission: a waiting sequence's first blocks."""
        if seq.block_table:
            raise RuntimeError(tr("sequence {id} already holds blocks {blocks}", id=seq.seq_id, blocks=seq.block_table))
        self.append(seq, num_new_tokens)
