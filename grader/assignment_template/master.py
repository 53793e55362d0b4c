# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] key="md-title"
# # __NUMBER__ · __TITLE__
#
# *简体中文版 | Chinese edition:* [zh/__NAME__.ipynb](zh/__NAME__.ipynb)
#
# A serving engine keeps a queue of requests. Each request has an `id`, an `arrival` time, a `prompt` of some
# tokens and an `output` of some tokens. This notebook asks two questions about such a queue: how many tokens
# it holds, and in which order first-come-first-served runs it.
#
# **How this notebook works.** Read and run the cells in order. The two exercises, **TODO 1** and **TODO 2**,
# are one cell each, followed by a cell of visible checks. Your grade comes from hidden tests that replay each
# TODO on its own with many more cases, so keep each TODO cell self-contained: it may use the names the set-up
# cell imports, and nothing another cell defines.
#
# **What layout changes cost.** Only the TODO cells are graded, found by the `grade_id` that nbgrader keeps in
# each cell's metadata, not by a cell `id`: code in any other cell is not. Scratch cells, moved cells, and a check
# cell deleted, duplicated or edited cost nothing: the course's own checks are used. If a TODO cell appears twice,
# the copy further down is graded (the kernel ran it last). A deleted TODO cell, or a TODO function renamed,
# scores zero on that TODO only.

# %% [markdown] key="md-glossary"
# **Glossary | 术语表.** The terms of this notebook and those of its Chinese edition.
#
# | English | 中文 | English | 中文 |
# |---|---|---|---|
# | request | 请求 | token | 词元 |
# | prompt | 提示词 | arrival (time) | 到达时刻 |
# | queue | 队列 | first-come-first-served | 先来先服务 |

# %% nbgrader={"grade": false, "grade_id": "setup_imports", "locked": true, "schema_version": 3, "solution": false} tags=["grading-setup"]
# <course set-up: imports lab, installing it if missing>
import lab
from lab import todo
from lab.checks import expect, passed

# %% key="code-language"
lab.set_language("en")  # messages of this edition

# %% [markdown] key="md-todo1"
# ### TODO 1 · `total_tokens`: the tokens a queue holds
#
# **Build:** given a list of `requests`, return the number of tokens they need in all: the sum of `prompt` +
# `output` over every request. An empty list needs 0 tokens.
#
# **Check:** the test cell below sums a queue of two requests by hand.

# %% nbgrader={"grade": false, "grade_id": "todo1", "locked": false, "schema_version": 3, "solution": true}
@todo("TODO 1")
def total_tokens(requests: list[dict]) -> int:
    """The tokens all the requests need, prompt and output."""
    ### BEGIN SOLUTION
    return sum(request["prompt"] + request["output"] for request in requests)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "todo1_tests", "locked": true, "points": 2, "schema_version": 3, "solution": false}
def test_todo1_two_requests():
    queue = [{"id": 1, "arrival": 0, "prompt": 3, "output": 4}, {"id": 2, "arrival": 1, "prompt": 5, "output": 1}]
    expect(total_tokens(queue), 13, "TODO 1: 3 + 4 + 5 + 1 tokens")


test_todo1_two_requests()
passed("TODO 1", 1)
### BEGIN HIDDEN TESTS
assert total_tokens([]) == 0
### END HIDDEN TESTS

# %% [markdown] key="md-todo2"
# ### TODO 2 · `fcfs_order`: first come, first served
#
# **Build:** given a list of `requests`, return their ids in first-come-first-served order: by `arrival`,
# earliest first. Requests that arrive at the same time go by their `id`, lowest first.
#
# **Check:** the test cell below orders a queue of three requests by hand.

# %% nbgrader={"grade": false, "grade_id": "todo2", "locked": false, "schema_version": 3, "solution": true}
@todo("TODO 2")
def fcfs_order(requests: list[dict]) -> list[int]:
    """The request ids in first-come-first-served order."""
    ### BEGIN SOLUTION
    return [request["id"] for request in sorted(requests, key=lambda request: (request["arrival"], request["id"]))]
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "todo2_tests", "locked": true, "points": 2, "schema_version": 3, "solution": false}
def test_todo2_three_requests():
    queue = [{"id": 7, "arrival": 2, "prompt": 1, "output": 1}, {"id": 3, "arrival": 0, "prompt": 1, "output": 1},
             {"id": 5, "arrival": 2, "prompt": 1, "output": 1}]
    expect(fcfs_order(queue), [3, 5, 7], "TODO 2: id 3 arrives first; 5 and 7 arrive together, 5 first")


test_todo2_three_requests()
passed("TODO 2", 1)
### BEGIN HIDDEN TESTS
assert fcfs_order([]) == []
### END HIDDEN TESTS
